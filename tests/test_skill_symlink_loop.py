"""A link that loops back on itself in a skill folder is that skill's problem, never the
library's (hunt-badinput #1, session 34).

One `ln -s self self` in any skill folder (a resource, a folder of a skills root, or a SKILL.md
that links to itself) took the whole library down: `Skillbank.open` raised a raw
`OSError: [Errno 40] Too many levels of symbolic links` (the walk's `is_dir()`/`is_file()` were
outside its `try`), the CLI exited 1, `skillbank serve` could not start, and once a bank was
open a link that appeared made every `skills.search`, `context_for` and `load` raise a bare
`RuntimeError: Symlink loop from …` (`Path.resolve()` on Python 3.11, where only `OSError` was
caught). Now the loop is skipped (a resource) or named as an `unreadable` finding (a folder, a
SKILL.md), and the other skills are served."""

from __future__ import annotations

import os

import pytest

from conftest import write_skill
from owner_client import bank_for
from skillbank.errors import SkillbankError
from test_cli import Run


def looping_library(folder):
    """A skills root with one good skill, a skill whose resource loops, a folder that is a
    self-link, and a SKILL.md that links to itself."""
    write_skill(folder, "plain", "Turn meeting notes into a short slide deck.")
    write_skill(folder, "loop", "A skill with a symlink loop among its resources.")
    (folder / "loop" / "references").mkdir()
    os.symlink("self", folder / "loop" / "references" / "self")
    os.symlink("loopdir", folder / "loopdir")
    (folder / "loopmd").mkdir()
    os.symlink("SKILL.md", folder / "loopmd" / "SKILL.md")


@pytest.mark.parametrize("remote", [False, True], ids=["in-process", "client-of-owner"])
def test_a_loop_at_open_leaves_the_other_skills_served(tmp_path, remote):
    """Fails before: the bank did not open (OSError ELOOP; the owner process did not start)."""
    folder = tmp_path / "extra"
    looping_library(folder)
    with bank_for(tmp_path, remote, skill_roots=(folder,)) as bank:
        assert bank.skills.names() == ["loop", "plain"]
        report = bank.skills.sync()
        said = {f.path: f.message for f in report.findings if f.code == "unreadable"}
        assert "cannot be looked in (too many levels of symbolic links)" in \
            said[str(folder / "loopdir")], said
        assert "is not a regular file (a link that leads nowhere" in \
            said[str(folder / "loopmd" / "SKILL.md")], said
        assert len(said) == 2, said  # the SKILL.md named once, as a file
        assert [h.name for h in bank.skills.search("turn meeting notes into a slide deck")][0] \
            == "plain"
        assert bank.skills.load("loop").name == "loop"
        with pytest.raises(SkillbankError, match="loops back on itself"):
            bank.skills.read_resource("loop", "references/self")


@pytest.mark.parametrize("remote", [False, True], ids=["in-process", "client-of-owner"])
def test_a_loop_that_appears_later_breaks_no_read(tmp_path, remote):
    """Fails before: search, context_for and load raised RuntimeError "Symlink loop from …"
    (a sync raised OSError)."""
    folder = tmp_path / "extra"
    write_skill(folder, "plain", "Turn meeting notes into a short slide deck.")
    write_skill(folder, "loop", "A skill with a symlink loop among its resources.")
    with bank_for(tmp_path, remote, skill_roots=(folder,)) as bank:
        assert bank.skills.names() == ["loop", "plain"]
        (folder / "loop" / "references").mkdir()
        os.symlink("self", folder / "loop" / "references" / "self")
        os.symlink("loopdir", folder / "loopdir")
        bank.skills.sync()
        task = "turn meeting notes into a slide deck"
        assert "plain" in [h.name for h in bank.skills.search(task)]
        assert "skill:plain" in bank.context_for(task).ids
        assert bank.skills.load("loop").name == "loop"
        assert bank.skills.names() == ["loop", "plain"]


def test_cli_lists_the_skills_beside_a_loop(cli_root, tmp_path):
    """Fails before: `Error: [Errno 40] Too many levels of symbolic links`, exit 1."""
    folder = tmp_path / "extra"
    looping_library(folder)
    out = " ".join(Run()("--no-bundled", "--skills-dir", folder, "skills", "sync").stdout.split())
    assert "loopdir cannot be looked in (too many levels of symbolic links)" in out, out
    listed = Run().json("--no-bundled", "--skills-dir", folder, "skills", "list")
    assert sorted(s["name"] for s in listed) == ["loop", "plain"], listed
