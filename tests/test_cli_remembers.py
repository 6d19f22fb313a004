"""The memory root remembers its skill folders (#27): leaving `--skills-dir` out once must not
drop a folder from the index, and giving it again must not embed anything again. Changing the
folders is explicit (`skillbank config add-skills-dir / remove-skills-dir`) and says what the
index gains or loses. Hash embedding, CliRunner (the CLI in process)."""

from __future__ import annotations

import json

from conftest import write_skill
from test_cli import Run
import pytest


@pytest.fixture
def run(cli_root) -> Run:
    return Run()


def sync(run: Run, *args) -> dict:
    return json.loads(run(*args, "--no-bundled", "--json", "skills", "sync").stdout)


def test_leaving_out_skills_dir_once_drops_nothing_and_reembeds_nothing(run, cli_root, tmp_path):
    folder = tmp_path / "library"
    for name in ("pdf-merge", "csv-clean", "deploy-app"):
        write_skill(folder, name, f"Do {name.replace('-', ' ')} with care")
    first = sync(run, "--skills-dir", folder)
    assert sorted(first["added"]) == ["csv-clean", "deploy-app", "pdf-merge"]
    assert "skill_roots" in (cli_root / "skillbank.toml").read_text()

    stats = json.loads(run("--no-bundled", "--json", "stats").stdout)  # no --skills-dir
    assert stats["skills"] == 3 and stats["remembered_skill_roots"] == [str(folder.resolve())]
    without = sync(run)
    assert without["removed"] == [] and without["unchanged"] == 3
    listed = json.loads(run("--no-bundled", "--json", "skills", "list").stdout)
    assert len(listed) == 3

    again = sync(run, "--skills-dir", folder)
    assert again["added"] == [] and again["removed"] == [] and again["embedded"] == 0


def test_changing_the_folders_is_explicit_and_says_what_it_reindexes(run, cli_root, tmp_path):
    first, second = tmp_path / "first", tmp_path / "second"
    write_skill(first, "pdf-merge", "Merge PDF files")
    write_skill(second, "csv-clean", "Clean a CSV file")
    write_skill(second, "csv-join", "Join two CSV files")
    sync(run, "--skills-dir", first)
    added = run("--no-bundled", "config", "add-skills-dir", second)
    assert "2 skills (csv-clean, csv-join) entered the index" in " ".join(added.stderr.split())
    assert str(second.resolve()) in added.stdout
    assert json.loads(run("--no-bundled", "--json", "stats").stdout)["skills"] == 3
    shown = json.loads(run("--json", "config").stdout)
    assert shown["skill_roots"] == [str(first.resolve()), str(second.resolve())]
    removed = run("--no-bundled", "config", "remove-skills-dir", first)
    assert "1 skill (pdf-merge) left the index" in " ".join(removed.stderr.split())
    assert json.loads(run("--no-bundled", "--json", "stats").stdout)["skills"] == 2
    missing = run("config", "remove-skills-dir", first, code=3)
    assert "not one of this root's skill folders" in missing.stderr
    shown = " ".join(run("--help").stdout.split())
    assert "skillbank.toml" in shown and str(second.resolve()) in shown  # what it remembers


def test_removing_a_folder_on_purpose_gives_no_note_to_add_it_back(run, cli_root, tmp_path):
    """`config remove-skills-dir` and `config bundled off` said their skills leave the index,
    then the sync's note said the opposite: "this process does not serve that folder (give it
    with --skills-dir, or add it to skill_roots ...)" (hunt-docs #3, session 23). A folder that
    leaves the index in the same sync without being removed (a one-off --no-remember folder) is
    still named."""
    team, once = tmp_path / "team", tmp_path / "once"
    write_skill(team, "zebra-pack", "Pack zebra crates for overseas shipping")
    write_skill(once, "csv-clean", "Clean a CSV file")
    sync(run, "--skills-dir", team)
    sync(run, "--no-remember", "--skills-dir", once)  # indexed by this command only

    removed = run("--no-bundled", "config", "remove-skills-dir", team)
    said = " ".join(removed.stderr.split())
    assert "1 skill (zebra-pack) left the index" in said, said  # csv-clean: the once folder's
    assert f"indexed from {team.resolve()} left the index" not in said, said
    assert f"1 skills indexed from {once.resolve()} left the index" in said, said  # still named
    assert json.loads(run("--no-bundled", "--json", "stats").stdout)["skills"] == 0

    run("config", "bundled", "on")
    off = run("config", "bundled", "off")
    said = " ".join(off.stderr.split())
    assert "they leave the index now" in said and "left the index" not in said, said
    assert json.loads(run("--json", "stats").stdout)["skills"] == 0


def test_a_deep_folder_is_credited_with_its_skills_by_the_roots_own_walk_limits(run, cli_root,
                                                                               tmp_path):
    """`config add-skills-dir` names the skills a folder brings by walking it as the sync does;
    the command walked it with the default limits (depth 6), not the root's
    `max_skill_roots_depth`, so a skill 7 folders down that the sync indexed under a root set
    to depth 8 was said not to have entered ("no skill entered the index"; session 31)."""
    cli_root.mkdir(parents=True, exist_ok=True)
    (cli_root / "skillbank.toml").write_text("max_skill_roots_depth = 8\n")
    deep = tmp_path / "deep"
    write_skill(deep / "a" / "b" / "c" / "d" / "e" / "f", "pdf-merge", "Merge PDF files")
    added = run("--no-bundled", "config", "add-skills-dir", deep)
    assert "1 skill (pdf-merge) entered the index" in " ".join(added.stderr.split())
    assert json.loads(run("--no-bundled", "--json", "stats").stdout)["skills"] == 1
