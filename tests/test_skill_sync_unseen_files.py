"""What a sync skipped without a word is named (hunt-corpus #5, session 30).

A SKILL.md that is a FIFO, a link to a device or a folder was left out of the index with no
finding and no `skipped` entry (`skills validate` flagged only the FIFO). And a SKILL.md dropped
in a collection's folder took the skills below it out of the index (a skill's subfolders are
its resources), named only as "removed"."""

from __future__ import annotations

import os

import pytest

from conftest import write_skill
from owner_client import bank_for
from test_cli import Run


@pytest.mark.parametrize("remote", [False, True], ids=["in-process", "client-of-owner"])
def test_a_skill_md_that_is_not_a_file_is_named(tmp_path, remote):
    """Fails before: no finding and no skipped entry for any of the three."""
    folder = tmp_path / "extra"
    write_skill(folder, "plain", "A plain skill.")
    (folder / "fifo-skill").mkdir()
    os.mkfifo(folder / "fifo-skill" / "SKILL.md")
    (folder / "dir-skill" / "SKILL.md").mkdir(parents=True)
    (folder / "zero-skill").mkdir()
    (folder / "zero-skill" / "SKILL.md").symlink_to("/dev/zero")
    with bank_for(tmp_path, remote, skill_roots=(folder,)) as bank:
        report = bank.skills.sync()
        assert bank.skills.names() == ["plain"]
        said = {f.path: f for f in report.findings if f.code == "unreadable"}
        for name, what in (("fifo-skill", "a FIFO"), ("dir-skill", "a folder"),
                           ("zero-skill", "a device")):
            path = str(folder / name / "SKILL.md")
            assert path in said and path in report.skipped, report
            assert said[path].severity == "error"
            assert f"is not a regular file ({what})" in said[path].message, said[path]


@pytest.mark.parametrize("remote", [False, True], ids=["in-process", "client-of-owner"])
def test_a_skill_md_in_a_collection_folder_names_the_skills_it_hides(tmp_path, remote):
    """Fails before: the two skills were only "removed", with no finding saying why."""
    folder = tmp_path / "extra"
    write_skill(folder / "collection", "deploy-app", "Deploy the app.")
    write_skill(folder / "collection" / "deep", "tune-db", "Tune the database.")
    with bank_for(tmp_path, remote, skill_roots=(folder,)) as bank:
        assert bank.skills.names() == ["deploy-app", "tune-db"]
        umbrella = write_skill(folder, "collection", "Index of the collection.")
        report = bank.skills.sync()
        assert report.removed == ["deploy-app", "tune-db"] and report.added == ["collection"]
        [finding] = [f for f in report.findings if f.code == "hidden-skills"]
        assert finding.path == str(umbrella) and finding.severity == "warning"
        assert "hides 2 SKILL.md files" in finding.message and "(tune-db, deploy-app)" in \
            finding.message, finding
        assert str(umbrella) not in report.skipped  # it is served


def test_skills_sync_prints_both(cli_root, tmp_path):
    folder = tmp_path / "extra"
    write_skill(folder / "collection", "deploy-app", "Deploy the app.")
    write_skill(folder, "collection", "Index of the collection.")
    (folder / "fifo-skill").mkdir()
    os.mkfifo(folder / "fifo-skill" / "SKILL.md")
    out = " ".join(Run()("--no-bundled", "--skills-dir", folder, "skills", "sync").stdout.split())
    assert "fifo-skill/SKILL.md is not a regular file (a FIFO)" in out, out
    assert "1 skills hide the SKILL.md files in the folders below theirs" in out, out
    assert "collection/SKILL.md hides 1 SKILL.md files" in out, out
    assert "break the Agent Skills spec" not in out, out


def test_validate_names_a_skill_md_that_is_a_folder(cli_root, tmp_path):
    """Fails before: `skills validate` flagged the FIFO, never the folder."""
    folder = tmp_path / "extra"
    (folder / "dir-skill" / "SKILL.md").mkdir(parents=True)
    checked = Run().json("skills", "validate", folder, code=2)
    [entry] = checked["files"]
    assert entry["path"] == str(folder / "dir-skill" / "SKILL.md")
    assert "is not a regular file" in entry["findings"][0]["message"]


@pytest.mark.parametrize("remote", [False, True], ids=["in-process", "client-of-owner"])
def test_a_link_out_of_a_skill_hides_nothing(tmp_path, remote):
    """`alpha/up -> ..` made every sync say alpha hides alpha, beta and gamma, "not served",
    though all three are (hunt-mcpcorpus #2, session 38). A link out of the skill's folder is
    not what it hides; what is below it, by a link or not, still is. Fails before: a
    hidden-skills finding on alpha naming the three."""
    folder = tmp_path / "extra"
    for name in ("alpha", "beta", "gamma"):
        write_skill(folder, name, f"Skill {name}.")
    (folder / "alpha" / "up").symlink_to("..")
    (folder / "alpha" / "self").symlink_to(".")
    with bank_for(tmp_path, remote, skill_roots=(folder,)) as bank:
        report = bank.skills.sync()
        assert bank.skills.names() == ["alpha", "beta", "gamma"]
        assert [f for f in report.findings if f.code == "hidden-skills"] == [], report.findings
        write_skill(folder / "beta" / "examples", "nested", "A skill below beta.")
        (folder / "alpha" / "examples").symlink_to(folder / "alpha" / "real")
        write_skill(folder / "alpha" / "real", "linked", "A skill below alpha.")
        said = {f.path: f.message for f in bank.skills.sync().findings
                if f.code == "hidden-skills"}
        assert set(said) == {str(folder / n / "SKILL.md") for n in ("alpha", "beta")}, said
        assert "hides 1 SKILL.md files" in said[str(folder / "beta" / "SKILL.md")]
        assert "(linked)" in said[str(folder / "alpha" / "SKILL.md")]


def test_skills_sync_says_no_skill_hides_its_siblings(cli_root, tmp_path, monkeypatch):
    """The CLI's report, which a user follows: it said to move beta and gamma out of alpha."""
    monkeypatch.setenv("SKILLBANK_CLI_OWNER", "0")
    folder = tmp_path / "extra"
    for name in ("alpha", "beta", "gamma"):
        write_skill(folder, name, f"Skill {name}.")
    (folder / "alpha" / "up").symlink_to("..")
    out = " ".join(Run()("--no-bundled", "--skills-dir", folder, "skills", "sync").stdout.split())
    assert "hides" not in out and "3 added" in out, out
