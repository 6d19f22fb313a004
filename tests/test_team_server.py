"""`skillbank server`: two real worker processes on loopback over a private PostgreSQL cluster
and a real `chroma run` server, driven through real MCP client sessions.

A write acknowledged by worker A is read from worker B within a second; /healthz and /readyz
answer; PostgreSQL restarted: /readyz names it (503), then both workers are ready again with no
restart, and a write on one is again seen on the other; worker A SIGKILLed right after
acknowledging writes loses none of them (worker B serves them).
"""

from __future__ import annotations

import asyncio
import os
import subprocess
import sys
import time
import uuid
from pathlib import Path
from typing import Any

import httpx

from conftest import stop_process
from mcp_http import bearer_session, call_ok
from team_worker import start_server

TOKEN = "team-test-token"


def mcp(url: str) -> Any:
    return bearer_session(url, TOKEN, timeout=60)


async def _seen_within(client: Any, seconds: float, probe) -> float:
    started = time.monotonic()
    while True:
        if await probe(client):
            return time.monotonic() - started
        assert time.monotonic() - started < seconds, "not seen by the other worker in time"
        await asyncio.sleep(0.02)


async def test_two_workers_share_one_memory_and_survive_a_postgres_restart(
        tmp_path, chroma_server, own_postgres):
    root = tmp_path / "root"
    root.mkdir()
    deployment = uuid.uuid4().hex[:12]
    workers = [start_server(root, chroma_server, own_postgres.url, "--token", TOKEN, "--trust",
                            deployment=deployment, log=tmp_path / f"w{n}.log")
               for n in range(2)]
    (a_proc, a), (b_proc, b) = workers
    try:
        for url in (a, b):
            ready = httpx.get(url + "/readyz", timeout=30)
            assert ready.status_code == 200, ready.text
            assert ready.json()["checks"] == {"postgres": "ok", "chroma": "ok"}
        async with mcp(a) as on_a, mcp(b) as on_b:
            learned = await call_ok(on_a, "learn_from_critique", {
                "critique": "Always quote identifiers in generated SQL.", "task": "Write SQL"})
            assert learned["pending_review"] is False

            async def b_finds_rule(client: Any) -> bool:
                found = await call_ok(client, "search_guidelines", {"task": "quote sql identifiers"})
                return any("quote" in g["text"].lower() for g in found["guidelines"])

            assert await _seen_within(on_b, 1.0, b_finds_rule) < 1.0
            recorded = await call_ok(on_b, "record_experience", {
                "task": "Rotate the database password", "outcome": "failure",
                "feedback": "the old password was cached by the workers"})

            async def a_recalls(client: Any) -> bool:
                found = await call_ok(client, "recall_experiences",
                                    {"task": "rotate the database password"})
                return recorded["id"] in {e["id"] for e in found["experiences"]}

            await _seen_within(on_a, 1.0, a_recalls)

            own_postgres.stop()
            for url in (a, b):
                down = httpx.get(url + "/readyz", timeout=30)
                assert down.status_code == 503
                assert "PostgreSQL at" in down.json()["checks"]["postgres"]
                assert down.json()["checks"]["chroma"] == "ok"
                assert httpx.get(url + "/healthz", timeout=5).status_code == 200  # still alive
            own_postgres.start()
            deadline = time.monotonic() + 30
            for url in (a, b):  # the same processes: no restart
                while httpx.get(url + "/readyz", timeout=30).status_code != 200:
                    assert time.monotonic() < deadline, "worker not ready 30 s after PostgreSQL"
                    time.sleep(0.2)
            await call_ok(on_a, "learn_from_critique", {
                "critique": "Never log secrets such as passwords or tokens.", "task": "Logging"})

            async def b_finds_second(client: Any) -> bool:
                found = await call_ok(client, "search_guidelines", {"task": "log secrets passwords"})
                return any("secret" in g["text"].lower() for g in found["guidelines"])

            await _seen_within(on_b, 5.0, b_finds_second)
            assert a_proc.poll() is None and b_proc.poll() is None
            # Worker A SIGKILLed right after acknowledging writes: none is lost, B serves them.
            acked = [(await call_ok(on_a, "record_experience", {
                "task": f"Restore the {word} replica from backup", "outcome": "success"}))["id"]
                for word in ("amber", "cobalt", "jade")]
        a_proc.kill()
        a_proc.wait(10)
        async with mcp(b) as on_b:
            for word, eid in zip(("amber", "cobalt", "jade"), acked):
                found = await call_ok(on_b, "recall_experiences",
                                    {"task": f"restore the {word} replica from backup"})
                assert eid in {e["id"] for e in found["experiences"]}
    finally:
        for proc, _ in workers:
            stop_process(proc)


def test_the_cli_door_says_what_a_worker_needs(tmp_path, monkeypatch):
    for name in list(os.environ):
        if name.startswith("SKILLBANK_") and name != "SKILLBANK_MODEL_DIR":
            monkeypatch.delenv(name)
    done = subprocess.run([str(Path(sys.executable).parent / "skillbank"), "--root",
                           str(tmp_path / "root"), "server", "--chroma-url", "http://127.0.0.1:9"],
                          capture_output=True, text=True, timeout=120)
    assert done.returncode == 2, done.stderr
    assert "--database-url" in done.stderr and "docs/team.md" in done.stderr
    assert "Traceback" not in done.stderr


def test_a_handshake_era_client_is_answered_by_any_worker(tmp_path, chroma_server, postgres):
    """Team hunt, session 19: behind a round-robin balancer, a client speaking MCP 2025-06-18
    (Claude Code, Cursor) got a session from one worker and "Session not found" (404) from
    the other on every second request. Workers keep no MCP session: the handshake on A and
    every later request alternately on B and A are answered, and they offer no subscription
    they could never deliver."""
    root = tmp_path / "root"
    root.mkdir()
    deployment = uuid.uuid4().hex[:12]
    workers = [start_server(root, chroma_server, postgres.url, "--token", TOKEN, "--trust",
                            deployment=deployment, log=tmp_path / f"w{n}.log") for n in range(2)]
    headers = {"Authorization": f"Bearer {TOKEN}", "Accept": "application/json, text/event-stream",
               "Content-Type": "application/json"}
    try:
        a, b = (url + "/mcp" for _, url in workers)
        hello = httpx.post(a, headers=headers, timeout=60, json={
            "jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {
                "protocolVersion": "2025-06-18", "capabilities": {},
                "clientInfo": {"name": "balanced", "version": "1"}}})
        assert hello.status_code == 200, hello.text
        resources = hello.json()["result"]["capabilities"]["resources"]
        assert not resources.get("subscribe") and not resources.get("listChanged")
        later = {**headers, "MCP-Protocol-Version": "2025-06-18"}
        if hello.headers.get("mcp-session-id"):
            later["Mcp-Session-Id"] = hello.headers["mcp-session-id"]
        done = httpx.post(b, headers=later, timeout=60,
                          json={"jsonrpc": "2.0", "method": "notifications/initialized"})
        assert done.status_code in (200, 202), done.text
        for number, url in enumerate([b, a, b, a], start=2):
            reply = httpx.post(url, headers=later, timeout=60, json={
                "jsonrpc": "2.0", "id": number, "method": "tools/call",
                "params": {"name": "search_guidelines", "arguments": {"task": "deploy"}}})
            assert reply.status_code == 200, (url, reply.status_code, reply.text)
            assert "error" not in reply.json(), reply.text
    finally:
        for process, _ in workers:
            stop_process(process)
