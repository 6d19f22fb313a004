"""`skillbank server --skills-repo URL --skills-branch BRANCH` (issue 24, review): the skills
repository and the branch a worker serves can be given on its command line, as the database
and the Chroma server are, not only through SKILLBANK_SKILLS_REPO or skillbank.toml. A real
worker through the CLI (PostgreSQL, `chroma run`, real git), its /readyz naming what it serves."""

from __future__ import annotations

import shutil
import subprocess
import sys
import uuid

import httpx
import pytest

from conftest import free_port, stop_process
from mcp_http import team_env, wait_until_serving
from test_skills_repo import git, remote  # noqa: F401 - a fixture: a bare skills repository

pytestmark = pytest.mark.skipif(shutil.which("git") is None, reason="git is not installed")


def test_skills_repo_and_branch_flags_choose_what_a_worker_serves(
        tmp_path, remote, chroma_server, postgres):  # noqa: F811
    seed = tmp_path / "seed"  # the remote's `release` branch: one commit ahead of main
    (seed / "greet" / "SKILL.md").write_text(
        (seed / "greet" / "SKILL.md").read_text() + "\nOn release.\n")
    git(seed, "commit", "--quiet", "-am", "release")
    git(seed, "push", "--quiet", "origin", "HEAD:release")
    release = git(remote, "rev-parse", "release")
    root = tmp_path / "root"
    root.mkdir()
    port = free_port()
    log = tmp_path / "worker.log"
    env = {k: v for k, v in team_env().items() if not k.startswith("SKILLBANK_SKILLS_")}
    proc = subprocess.Popen(
        [sys.executable, "-m", "skillbank.cli", "--root", str(root), "server",
         "--chroma-url", chroma_server, "--database-url", postgres.url,
         "--deployment", uuid.uuid4().hex[:12], "--port", str(port), "--token", "t0ken",
         "--skills-repo", str(remote), "--skills-branch", "release"],
        env=env, stdout=log.open("w"), stderr=subprocess.STDOUT, cwd=str(tmp_path))
    url = f"http://127.0.0.1:{port}"
    try:
        wait_until_serving(proc, url, log, probe="/healthz", status=200, seconds=180)
        skills = httpx.get(url + "/readyz", timeout=30).json()["skills"]
        assert (skills["remote"], skills["branch"], skills["commit"]) == (
            str(remote), "release", release)
        assert "On release." in (root / "skills" / "greet" / "SKILL.md").read_text()
    finally:
        stop_process(proc)
