"""`skillbank server --tokens FILE`: a team worker gives each person's token its own scope.

With only the static `--token`, every caller of a team worker ran in the worker's own scope
(the local user, admin of every namespace): bob read alice's experiences and could rate or
forget them. Real parts: a private PostgreSQL cluster, a `chroma run` server, a worker process,
real MCP client sessions with two tokens.
"""

from __future__ import annotations

import os
import subprocess
import sys
import time
import uuid
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any, AsyncIterator

import httpx
import pytest

from conftest import free_port, stop_process

REPO = Path(__file__).resolve().parents[1]
SECRET = "Rotate the Quillmarrow vault keys for the payroll cluster"


def _env() -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("SKILLBANK_")
           or k == "SKILLBANK_MODEL_DIR"}
    env.update(SKILLBANK_EMBEDDING="hash", ANONYMIZED_TELEMETRY="False",
               PYTHONPATH=os.pathsep.join(filter(None, [str(REPO), env.get("PYTHONPATH")])))
    return env


def _argv(root: Path, chroma: str, database: str, port: int, tokens: Path) -> list[str]:
    return [sys.executable, "-m", "skillbank.team.server", "--root", str(root), "--chroma-url",
            chroma, "--database-url", database, "--deployment", uuid.uuid4().hex[:12],
            "--port", str(port), "--tokens", str(tokens), "--trust"]


@asynccontextmanager
async def _session(url: str, token: str) -> AsyncIterator[Any]:
    import httpx2
    from mcp import Client
    from mcp.client.streamable_http import streamable_http_client

    async with httpx2.AsyncClient(headers={"Authorization": f"Bearer {token}"},
                                  timeout=60) as http:
        async with Client(streamable_http_client(url + "/mcp", http_client=http)) as client:
            yield client


async def _call(client: Any, name: str, args: dict[str, Any]) -> tuple[bool, Any]:
    result = await client.call_tool(name, args)
    return (not result.is_error,
            result.content[0].text if result.is_error else result.structured_content)


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
                            env=_env(), stdout=log.open("w"), stderr=subprocess.STDOUT,
                            cwd=str(tmp_path))
    url = f"http://127.0.0.1:{port}"
    try:
        deadline = time.time() + 180
        while True:
            if proc.poll() is not None:
                pytest.fail("worker exited: " + log.read_text()[-3000:])
            try:
                if httpx.get(url + "/healthz", timeout=1).status_code == 200:
                    break
            except httpx.HTTPError:
                pass
            assert time.time() < deadline, "worker did not start"
            time.sleep(0.2)
        async with _session(url, alice) as on_a:
            ok, exp = await _call(on_a, "record_experience", {"task": SECRET,
                                                              "outcome": "failure"})
            assert ok, exp
        async with _session(url, bob) as on_b:
            ok, found = await _call(on_b, "recall_experiences", {"task": SECRET})
            assert ok and exp["id"] not in {e["id"] for e in found["experiences"]}, found
            ok, block = await _call(on_b, "memory_context", {"task": SECRET})
            assert ok and "quillmarrow" not in str(block).lower(), block
            ok, rated = await _call(on_b, "rate_memory", {"id": exp["id"], "helpful": False})
            assert not ok and ("not found" in rated.lower() or "no experience" in rated.lower())
        async with _session(url, alice) as on_a:
            ok, found = await _call(on_a, "recall_experiences", {"task": SECRET})
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
                          env=_env(), capture_output=True, text=True, timeout=120)
    assert done.returncode == 2
    assert "chmod 600" in done.stderr and "Traceback" not in done.stderr
