"""The CLI's skill writes with skills in git (issue 24, review): `skills new` and
`skills update` make a proposal commit, not a served skill, and say so: the branch, the commit
and that a reviewer must merge it — not "created NAME at <branch>:<path>", which reads as
though the skill were live. Real git (a bare remote in a temporary folder)."""

from __future__ import annotations

import shutil

import pytest
from typer.testing import CliRunner

from skillbank.cli import app
from test_skills_repo import git, remote  # noqa: F401 - a fixture: a bare skills repository

pytestmark = pytest.mark.skipif(shutil.which("git") is None, reason="git is not installed")


def run(*args: str) -> str:
    result = CliRunner().invoke(app, list(args))
    assert result.exit_code == 0, (result.stdout, result.stderr, result.exception)
    return " ".join(result.stdout.split())


def test_skills_new_and_update_in_git_mode_print_the_proposal(cli_root, remote, monkeypatch):  # noqa: F811
    monkeypatch.setenv("SKILLBANK_SKILLS_REPO", str(remote))
    monkeypatch.setenv("SKILLBANK_SKILLS_FOLLOW_SECONDS", "0")
    out = run("skills", "new", "deploy-app", "-d", "Deploy the app to staging safely.",
              "-b", "# Steps\n\nBuild, then deploy.\n")
    assert "created" not in out, out
    assert "proposed on branch skillbank/proposals/" in out and "/deploy-app" in out, out
    assert "not served until a reviewer merges it into main" in out, out
    branch = out.split("branch ", 1)[1].split(" ", 1)[0]
    assert git(remote, "rev-parse", branch)  # the commit is on the remote
    out = run("skills", "update", "greet", "-d", "Greet a new user politely, by name.")
    assert "updated greet at" not in out and "proposed on branch" in out, out
