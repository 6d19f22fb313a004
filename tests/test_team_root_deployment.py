"""A team root is one deployment, watched, and its audit log is where the CLI reads it.

Before session 16, on a root served by `skillbank server --deployment team` (docs/team.md step
6): the CLI opened the root's own id, an empty deployment (`guidelines list` said "No
guidelines", and the documented restore `skillbank --root … reindex` rebuilt another index);
`skillbank audit` read the root's files while team mode logs to PostgreSQL ("Nothing audited
yet" beside 71 rows); and a skill folder added by hand was never seen by a running worker. Real
workers, a private PostgreSQL cluster and a `chroma run` server.
"""

from __future__ import annotations

import json
import subprocess
import sys
import time
import uuid
from pathlib import Path

import pytest

from conftest import stop_process, write_skill
from mcp_http import bearer_session, call_ok, team_env
from team_worker import start_server

pytest.importorskip("psycopg")

TOKEN = "root-deployment-token"


def cli(root: Path, chroma: str, database: str, *args: str) -> subprocess.CompletedProcess:
    env = {**team_env(), "SKILLBANK_DATABASE_URL": database, "SKILLBANK_CHROMA_URL": chroma}
    return subprocess.run([sys.executable, "-m", "skillbank.cli", "--root", str(root), "--json",
                           *args], env=env, capture_output=True, text=True, timeout=180)


async def test_the_cli_opens_the_workers_deployment_and_reads_its_audit_log(
        tmp_path, chroma_server, postgres):
    root = tmp_path / "root"
    deployment = "team-" + uuid.uuid4().hex[:8]
    failed = subprocess.run(  # a start that fails records nothing (nor shows a traceback)
        [sys.executable, "-m", "skillbank.team.server", "--root", str(root), "--chroma-url",
         chroma_server, "--database-url", postgres.url, "--deployment", "tema", "--port", "0",
         "--token", TOKEN], env={**team_env(), "SKILLBANK_MCP_PAGE_SIZE": "0"},
        capture_output=True, text=True, timeout=120)
    assert failed.returncode == 2 and "SKILLBANK_MCP_PAGE_SIZE='0'" in failed.stderr
    assert "Traceback" not in failed.stderr
    assert not (root / "skillbank.toml").exists() or \
        "tema" not in (root / "skillbank.toml").read_text()
    proc, url = start_server(root, chroma_server, postgres.url, "--token", TOKEN, "--trust",
                             deployment=deployment)
    try:
        assert f'deployment = "{deployment}"' in (root / "skillbank.toml").read_text()
        assert "team = true" in (root / "skillbank.toml").read_text()  # no embedded open
        async with bearer_session(url, TOKEN, timeout=60) as client:
            learnt = await call_ok(client, "learn_from_critique",
                                   {"critique": "Always pin the base image by digest."})
            gid = learnt["entries"][0]["guideline_id"]
            write_skill(root / "skills", "hand-made-report",
                        "Write the quarterly hand-made report from the ledger export.")
            deadline = time.monotonic() + 60
            while True:  # the worker watches the root's skill folder
                found = await call_ok(client, "find_skills",
                                      {"task": "quarterly hand-made report from the ledger"})
                if any(s["name"] == "hand-made-report" for s in found["skills"]):
                    break
                assert time.monotonic() < deadline, found
                time.sleep(0.5)
        listed = cli(root, chroma_server, postgres.url, "guidelines", "list")
        assert listed.returncode == 0, listed.stderr
        assert gid in {g["id"] for g in json.loads(listed.stdout)}
        audit = cli(root, chroma_server, postgres.url, "audit", "--action", "learn")
        assert audit.returncode == 0, audit.stderr
        assert any(gid in e["id"] for e in json.loads(audit.stdout)), audit.stdout
    finally:
        stop_process(proc)
    other = subprocess.run(
        [sys.executable, "-m", "skillbank.team.server", "--root", str(root), "--chroma-url",
         chroma_server, "--database-url", postgres.url, "--deployment", "another", "--port",
         "0", "--token", TOKEN], env=team_env(), capture_output=True, text=True, timeout=120)
    assert other.returncode == 2, other.stderr
    assert f"says deployment = '{deployment}'" in other.stderr
