"""`config add-skills-dir` / `remove-skills-dir` say how many skills enter or leave the index
(hunt-corpus #3, session 30).

They printed the SKILL.md files found on disk: a copy of a collection the library already
serves, plus one new skill, was "Added … (81 SKILL.md files): its skills are indexed now"
while 3 entered (the rest shadowed by the library's own copies), and "its 81 SKILL.md files
leave the index now" while 3 left. Through the CLI's background owner, remove-skills-dir said
"14 of its skills are still served" when none was: it counted the library's own same-named
skills."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
from pathlib import Path

import pytest

from conftest import write_skill
from test_cli import Run

OWN = ("pdf-merge", "csv-clean", "csv-join")


def library(cli_root: Path, tmp_path: Path) -> Path:
    """The root's own skills, and a folder holding copies of them plus one skill of its own."""
    for name in OWN:
        write_skill(cli_root / "skills" / "own", name, f"The library's own {name} skill.")
    extra = tmp_path / "extra"
    for name in OWN:
        write_skill(extra / "copied", name, f"A copy of {name}.")
    write_skill(extra, "only-here", "Exists only in the extra folder, about otters.")
    write_skill(extra / "only-here", "nested-below", "Inside another skill's folder.")
    return extra


def through_owner(root: Path, *args: str) -> str:
    """`skillbank ARGS` as at a terminal: attached to the CLI's background owner."""
    env = {k: v for k, v in os.environ.items() if not k.startswith("SKILLBANK_")
           or k == "SKILLBANK_MODEL_DIR"}
    done = subprocess.run([sys.executable, "-m", "skillbank.cli", "--root", str(root),
                           "--no-bundled", *args], capture_output=True, text=True, timeout=600,
                          env={**env, "SKILLBANK_EMBEDDING": "hash", "SKILLBANK_CLI_OWNER": "1",
                               "SKILLBANK_CLI_OWNER_IDLE": "60", "COLUMNS": "200"})
    assert done.returncode == 0, done.stderr
    assert "background skillbank process" in done.stderr  # it did attach to one
    return " ".join(done.stderr.split())


@pytest.mark.parametrize("remote", [False, True], ids=["in-process", "client-of-owner"])
def test_the_index_change_is_said_not_the_files_on_disk(cli_root, tmp_path, remote):
    """Fails before: "(5 SKILL.md files): its skills are indexed now" and "its 5 SKILL.md
    files leave the index now"; through the owner, "3 of its skills are still served"."""
    extra = library(cli_root, tmp_path)
    run = Run()
    run("--no-bundled", "skills", "sync")
    if remote:
        try:
            added = through_owner(cli_root, "config", "add-skills-dir", str(extra))
            removed = through_owner(cli_root, "config", "remove-skills-dir", str(extra))
        finally:
            pid = int((cli_root / ".cli-owner.pid").read_text().split()[0])
            os.kill(pid, signal.SIGTERM)
    else:
        added = " ".join(run("--no-bundled", "config", "add-skills-dir", extra).stderr.split())
        removed = " ".join(
            run("--no-bundled", "config", "remove-skills-dir", extra).stderr.split())
    assert "SKILL.md files" not in added + removed
    assert "1 skill (only-here) entered the index; 3 of its skills are not served: a " \
           "same-named skill comes first" in added, added
    assert "1 skill (only-here) left the index (the files are not touched)" in removed, removed
    assert "still served" not in removed, removed


def test_skills_other_folders_brought_in_the_same_sync_are_not_credited(cli_root, tmp_path):
    """Review (session 30): on a fresh root with the bundled skills, `add-skills-dir` of a
    folder holding one skill said "8 skills (debug-with-past-failures, learn-from-feedback,
    otter-care, …) entered the index": the same sync indexed the bundled skills, and every name
    in its report was credited to the folder. Fails before: the bundled names are listed."""
    extra = tmp_path / "extra"
    write_skill(extra, "otter-care", "Feed and groom a pet otter. Use when asked about otters.")
    run = Run()
    added = " ".join(run("config", "add-skills-dir", extra).stderr.split())
    assert "1 skill (otter-care) entered the index" in added, added
    removed = " ".join(run("config", "remove-skills-dir", extra).stderr.split())
    assert "1 skill (otter-care) left the index" in removed, removed
