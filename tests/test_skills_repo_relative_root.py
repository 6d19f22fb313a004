"""Skills in git with a relative root (hunt): `skillbank --root relgit/root skills new hotfix`
failed at the first open with a raw `[Errno 2] … '.skills-clone-…/tree' -> 'relgit/root/skills'`,
and with an existing checkout every write failed with "could not run git in relgit/root/
.skills-work/proposal-…" and left an empty folder of that path inside the served checkout. git
runs in other working folders (the clone's staging folder, a proposal's worktree), so the
checkout's path is made absolute once. Real git."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from test_skills_repo import git, open_bank, remote  # noqa: F401 - a fixture

pytestmark = pytest.mark.skipif(shutil.which("git") is None, reason="git is not installed")


def test_a_relative_root_clones_and_proposes(tmp_path, remote, monkeypatch):
    monkeypatch.chdir(tmp_path)
    root = Path("relgit") / "root"
    bank = open_bank(root, remote, skills_follow_seconds=0)  # the first open clones
    try:
        made = bank.skills.create("hotfix", "Ship an urgent hotfix to production safely.",
                                  "# Steps\n\n1. Ship.\n")
        assert made.proposal is not None
    finally:
        bank.close()
    bank = open_bank(root, remote, skills_follow_seconds=0)  # an existing checkout
    try:
        changed = bank.skills.update("greet", body="# Greet\n\nHello there.\n")
        assert changed.proposal is not None
    finally:
        bank.close()
    checkout = tmp_path / "relgit" / "root" / "skills"
    assert git(checkout, "status", "--porcelain", "--untracked-files=all") == ""
    assert not (checkout / "relgit").exists(), "a proposal folder was left in the checkout"


def test_a_skills_repo_given_a_relative_checkout_works_from_it(tmp_path, remote, monkeypatch):
    from skillbank.team.skills_repo import SkillsRepo

    monkeypatch.chdir(tmp_path)
    repo = SkillsRepo(Path("rel") / "skills", str(remote), follow_seconds=0).prepare()
    assert repo.checkout == (tmp_path / "rel" / "skills").resolve()
    assert repo.relative(Path("rel") / "skills" / "new-one") == "new-one"
    assert repo.commit() == git(remote, "rev-parse", "main")
