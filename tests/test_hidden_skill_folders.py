"""Skills kept in hidden folders are named, not silently skipped (hunt-clicorpus #1, session 36).

The openai/skills checkout keeps all its skills in `skills/.curated`, `.experimental` and
`.system`. Discovery skips folders whose name starts with '.' (and keeps doing so:
`test_skill_library.test_scan_skips_hidden_vendored_and_symlink_loops`), but `skills validate`
said "no SKILL.md found under this folder", `skills sync` "0 added" with no warning, and
`skills list` "No skills yet. Add roots with --skills-dir" for the root just added."""

from __future__ import annotations

import pytest

from conftest import write_skill
from owner_client import bank_for
from test_cli import Run


def collection(tmp_path):
    """A checkout laid out as openai/skills, plus hidden folders that are no one's skills."""
    checkout = tmp_path / "openai-skills"
    for name in ("pdf", "docx", "xlsx"):
        write_skill(checkout / "skills" / ".curated", name, f"Use when editing {name} files.")
    write_skill(checkout / "skills" / ".system", "installer", "Use when installing skills.")
    write_skill(checkout / ".git", "in-git", "A VCS folder is never looked in.")
    write_skill(checkout / "skills" / ".curated" / ".deeper", "deep", "Not in .curated's walk.")
    # a tool's cache is never looked in (review 1, session 36: a .tox of 6,600 folders made a
    # no-change sync 1 ms -> 121 ms)
    write_skill(checkout / ".tox" / "py311" / "lib", "vendored", "In a tool's cache.")
    write_skill(checkout / "skills" / ".mypy_cache", "cached", "In a tool's cache.")
    return checkout


@pytest.mark.parametrize("remote", [False, True], ids=["in-process", "client-of-owner"])
def test_sync_names_hidden_folders_holding_skills(tmp_path, remote):
    """Fails before: no finding at all, only "0 added"."""
    checkout = collection(tmp_path)
    with bank_for(tmp_path, remote, skill_roots=(checkout,)) as bank:
        report = bank.skills.sync()
        assert bank.skills.names() == []  # still not scanned: only named
        said = {f.path: f for f in report.findings if f.code == "hidden-folder"}
        curated, system = str(checkout / "skills" / ".curated"), str(checkout / "skills" / ".system")
        assert set(said) == {curated, system}, report.findings
        assert said[curated].severity == "warning"
        assert said[curated].message.startswith("3 SKILL.md files here are not indexed"), said
        assert said[system].message.startswith("1 SKILL.md files here"), said
        assert "--skills-dir" in said[curated].message


def test_the_banks_own_hidden_folders_are_not_named(tmp_path):
    """A rename or delete under way keeps SKILL.md files in hidden folders of the bank's own
    skills folder: never a person's skills to add."""
    with bank_for(tmp_path, False) as bank:
        write_skill(bank.skills.writable_root / ".rename-x", "mine", "Use when renaming.")
        report = bank.skills.sync()
        assert not [f for f in report.findings if f.code == "hidden-folder"], report.findings


def test_cli_validate_sync_and_list_name_them(cli_root, tmp_path):
    """Fails before: "no SKILL.md found under this folder", then "0 added" with no warning,
    then "No skills yet. Add roots with --skills-dir"."""
    checkout = collection(tmp_path)
    run = Run()
    result = run("skills", "validate", checkout, code=2)
    out = " ".join(result.stdout.split())
    assert "no SKILL.md found under this folder outside its hidden folders" in out, out
    assert ".curated hidden-folder 3 SKILL.md files here are not checked" in out.replace(
        " warning ", " "), out
    assert "1 checked: 0 valid, 1 invalid" in out, out
    data = run.json("skills", "validate", checkout, code=2)
    [entry] = data["files"]
    assert [(f["code"], f["path"].rsplit("/", 1)[-1]) for f in entry["findings"]] == [
        ("no-skills", "openai-skills"), ("hidden-folder", ".curated"),
        ("hidden-folder", ".system")]
    write_skill(checkout, "plain", "Use when checking a visible skill.")  # found + hidden
    mixed = run.json("skills", "validate", checkout)
    assert mixed["valid"] is True and mixed["warnings"] == 2
    (checkout / "plain" / "SKILL.md").unlink()
    (checkout / "plain").rmdir()

    out = " ".join(run("--no-bundled", "--skills-dir", checkout, "skills", "sync").stdout.split())
    assert "0 added" in out and "2 hidden folders hold SKILL.md files that are not indexed" in out
    assert f"{checkout}/skills/.curated: 3 SKILL.md files here are not indexed" in out, out
    assert "give such a folder as --skills-dir" in out, out
    out = " ".join(run("--no-bundled", "skills", "list").stdout.split())
    assert "No skills yet" not in out and "No skills indexed." in out, out
    assert f"{checkout}/skills/.system: 1 SKILL.md files here are not indexed" in out, out


def test_a_big_hidden_folder_does_not_hide_a_later_collection(tmp_path):
    """Review 2, session 36: one budget for every hidden folder of a walk was spent on an early
    checkout's `.github` (workflows, templates), and a later `.curated` went unnamed."""
    from skillbank.memories.skills.freshness import skill_files

    checkout = tmp_path / "checkouts"
    for n in range(100):
        (checkout / "a-first" / ".github" / f"workflow-{n:03}").mkdir(parents=True)
    write_skill(checkout / "b-second" / "skills" / ".curated", "pdf", "Use when editing PDFs.")
    dotted: list = []
    skill_files(checkout, 6, 20000, dotted=dotted)
    assert [(path.rsplit("/", 1)[-1], count) for path, count in dotted] == [(".curated", 1)]
