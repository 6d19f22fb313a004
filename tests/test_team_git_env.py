"""The git wrapper's environment (issue 24, review): the operator's ssh and TLS settings for
the skills remote reach git, and no git child reads the worker's stdin.

- `GIT_SSH_COMMAND` (a deploy key in a container: `ssh -i /run/secrets/key`) was dropped with
  every other `GIT_*` variable, so git used plain `ssh` and the remote refused the key. The
  variables that point git elsewhere (`GIT_DIR`, `GIT_WORK_TREE`, `GIT_INDEX_FILE`, set when
  skillbank runs inside a git hook) are still dropped.
- A git child inherited stdin: under `skillbank serve` (MCP over stdio) that is the JSON-RPC
  stream, which a hook or helper reading stdin would eat. It gets /dev/null.
Real git; the "ssh" is a script on loopback terms (no network)."""

from __future__ import annotations

import shutil
import subprocess
import sys

import pytest

pytestmark = pytest.mark.skipif(shutil.which("git") is None, reason="git is not installed")

EMPTY_BLOB = "e69de29bb2d1d6434b8b29ae775ad8c2e48c5391"


def test_the_operators_ssh_command_is_used_and_git_dir_is_not(tmp_path, monkeypatch):
    from skillbank.team.skills_repo import SkillsRepo, SkillsRepoError

    marker = tmp_path / "ssh-called"
    fake_ssh = tmp_path / "fake-ssh"
    fake_ssh.write_text(f"#!/bin/sh\necho \"$@\" > '{marker}'\necho 'denied by fake' >&2\n"
                        "exit 1\n")
    fake_ssh.chmod(0o755)
    monkeypatch.setenv("GIT_SSH_COMMAND", str(fake_ssh))
    monkeypatch.setenv("GIT_DIR", str(tmp_path / "elsewhere.git"))  # as inside a git hook
    repo = SkillsRepo(tmp_path / "root" / "skills", "ssh://git@127.0.0.1:1/team/skills.git")
    with pytest.raises(SkillsRepoError, match="cannot clone"):
        repo.prepare()
    assert marker.exists() and "127.0.0.1" in marker.read_text()
    assert not (tmp_path / "elsewhere.git").exists()


def test_a_git_child_never_reads_the_workers_stdin(tmp_path):
    code = ("import sys; from skillbank.team.git import Git; "
            f"print(Git({str(tmp_path)!r}).out('hash-object', '--stdin'))")
    done = subprocess.run([sys.executable, "-c", code], input='{"jsonrpc": "2.0"}\n',
                          capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == EMPTY_BLOB
