"""A team root opened without the team's variables is refused (team hunt, session 19, defect 4).

With `deployment = "team"` recorded by the workers, a shell without SKILLBANK_DATABASE_URL /
SKILLBANK_CHROMA_URL (a new terminal, a cron job, the restore's `reindex`) ran
`skillbank --root ROOT guidelines learn …`: exit 0, "added gl-…", the rule in
`<root>/guidelines` where no worker saw it, and `<root>/chroma`, `<root>/audit` made beside the
workers; `reindex` "succeeded" on an empty embedded index. A worker now records `team = true`,
and the CLI and the Python API refuse an embedded open of such a root, naming both variables.
"""

from __future__ import annotations

import argparse
import subprocess
import sys
from pathlib import Path

import pytest

from mcp_http import team_env
from skillbank import Skillbank, remember
from skillbank.embeddings import HashEmbedding
from skillbank.errors import InvalidInputError

MADE_BY_AN_EMBEDDED_OPEN = ("guidelines", "chroma", "audit", "experiences")


def team_root(tmp_path: Path) -> Path:
    """A root as a worker leaves it (`skillbank server --deployment team`)."""
    from skillbank.team.server import _remember_serving

    root = tmp_path / "root"
    _remember_serving(root, argparse.Namespace(deployment="team", skills_repo=None,
                                               skills_branch=None))
    assert remember.is_team(root) and remember.deployment(root) == "team"
    return root


def made(root: Path) -> list[str]:
    return [name for name in MADE_BY_AN_EMBEDDED_OPEN if (root / name).exists()]


def test_the_python_api_refuses_an_embedded_open_of_a_team_root(tmp_path):
    root = team_root(tmp_path)
    for share in (True, False):
        with pytest.raises(InvalidInputError) as caught:
            Skillbank.open(root, embedding_function=HashEmbedding(), share=share)
        assert "SKILLBANK_DATABASE_URL" in str(caught.value)
        assert "SKILLBANK_CHROMA_URL" in str(caught.value)
    with pytest.raises(InvalidInputError, match="SKILLBANK_DATABASE_URL"):
        Skillbank.open(root, chroma_url="http://127.0.0.1:9", embedding_function=HashEmbedding())
    assert made(root) == []


def test_the_cli_refuses_it_in_one_line_with_the_configuration_exit_code(tmp_path):
    root = team_root(tmp_path)
    for args in (["guidelines", "learn", "Always tag releases with the ticket number."],
                 ["reindex"]):
        done = subprocess.run([sys.executable, "-m", "skillbank.cli", "--root", str(root), *args],
                              env=team_env(), capture_output=True, text=True, timeout=180)
        assert done.returncode == 2, (done.stdout, done.stderr)
        lines = done.stderr.strip().splitlines()
        assert len(lines) == 1 and "Traceback" not in done.stderr, done.stderr
        assert "SKILLBANK_DATABASE_URL" in lines[0] and "SKILLBANK_CHROMA_URL" in lines[0]
    assert made(root) == []


def test_a_personal_root_still_opens_embedded(tmp_path):
    root = tmp_path / "personal"
    remember.keep_setting(root, "deployment", "mine")  # a deployment alone is not a team root
    bank = Skillbank.open(root, embedding_function=HashEmbedding(), share=False)
    try:
        assert bank.guidelines.list() == []
    finally:
        bank.close()
