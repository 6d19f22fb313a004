"""`skillbank server --tokens FILE`: a team worker gives each person's token its own scope.

With only the static `--token`, every caller of a team worker ran in the worker's own scope
(the local user, admin of every namespace): bob read alice's experiences and could rate or
forget them. Real parts: a private PostgreSQL cluster, a `chroma run` server, a worker process,
real MCP client sessions with two tokens.
"""

from __future__ import annotations

import subprocess
import sys
import uuid
from pathlib import Path

import httpx

from conftest import free_port, stop_process
from mcp_http import bearer_session, call, team_env, wait_until_serving

SECRET = "Rotate the Quillmarrow vault keys for the payroll cluster"


def _argv(root: Path, chroma: str, database: str, port: int, tokens: Path) -> list[str]:
    return [sys.executable, "-m", "skillbank.team.server", "--root", str(root), "--chroma-url",
            chroma, "--database-url", database, "--deployment", uuid.uuid4().hex[:12],
            "--port", str(port), "--tokens", str(tokens), "--trust"]


async def test_each_token_of_a_team_worker_runs_in_its_own_scope(tmp_path, chroma_server,
                                                                  postgres):
    from skillbank.mcp_server.identity import add_principal

    root = tmp_path / "root"
    root.mkdir()
    tokens_file = tmp_path / "tokens.toml"
    alice = add_principal(tokens_file, "alice", namespace="alice", role="contributor")
    bob = add_principal(tokens_file, "bob", namespace="bob", role="reviewer")
    port = free_port()
    log = tmp_path / "worker.log"
    proc = subprocess.Popen(_argv(root, chroma_server, postgres.url, port, tokens_file),
                            env=team_env(), stdout=log.open("w"), stderr=subprocess.STDOUT,
                            cwd=str(tmp_path))
    url = f"http://127.0.0.1:{port}"
    try:
        wait_until_serving(proc, url, log, probe="/healthz", status=200, seconds=180)
        async with bearer_session(url, alice) as on_a:
            ok, exp = await call(on_a, "record_experience", {"task": SECRET,
                                                              "outcome": "failure"})
            assert ok, exp
        async with bearer_session(url, bob) as on_b:
            ok, found = await call(on_b, "recall_experiences", {"task": SECRET})
            assert ok and exp["id"] not in {e["id"] for e in found["experiences"]}, found
            ok, block = await call(on_b, "memory_context", {"task": SECRET})
            assert ok and "quillmarrow" not in str(block).lower(), block
            ok, rated = await call(on_b, "rate_memory", {"id": exp["id"], "helpful": False})
            assert not ok and ("not found" in rated.lower() or "no experience" in rated.lower())
        async with bearer_session(url, alice) as on_a:
            ok, found = await call(on_a, "recall_experiences", {"task": SECRET})
            assert ok and exp["id"] in {e["id"] for e in found["experiences"]}
        refused = httpx.post(url + "/mcp", json={}, timeout=10,
                             headers={"Authorization": "Bearer sbk_not-a-token"})
        assert refused.status_code == 401 and "no principal" in refused.text
    finally:
        stop_process(proc)


def test_an_unsafe_tokens_file_stops_a_team_worker_at_start_up(tmp_path):
    from skillbank.mcp_server.identity import add_principal

    tokens_file = tmp_path / "tokens.toml"
    add_principal(tokens_file, "alice", namespace="alice", role="contributor")
    tokens_file.chmod(0o644)
    done = subprocess.run(_argv(tmp_path / "root", "http://127.0.0.1:9", "postgresql://x@127.0.0.1:9/x",
                                free_port(), tokens_file),
                          env=team_env(), capture_output=True, text=True, timeout=120)
    assert done.returncode == 2
    assert "chmod 600" in done.stderr and "Traceback" not in done.stderr
