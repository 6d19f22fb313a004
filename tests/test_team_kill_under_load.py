"""A worker SIGKILLed under load (issue 24, Acceptance): no acknowledged write is lost, and a
client's retry lands on the other worker.

Two real `skillbank server` workers of one deployment over a private PostgreSQL cluster and
`chroma run`; six MCP clients write to worker A concurrently; A is SIGKILLed once a dozen
writes are acknowledged, mid-stream. Each client whose call fails (a call in flight, or the next
one) sends the same write again to worker B, as a client behind a load balancer retries. Then
every acknowledged write — A's and B's — is recalled through B, and each client finished on B.
(tests/test_team_server.py kills A between calls; this kills it while calls are in flight.)
"""

from __future__ import annotations

import asyncio
import uuid

import pytest

from conftest import stop_process
from mcp_http import bearer_session, call_ok
from team_worker import start_server

pytest.importorskip("psycopg")

TOKEN = "kill-under-load-token"
CLIENTS = 6
WRITES = 6  # per client
KILL_AFTER = 12  # acknowledged writes


async def test_sigkill_under_load_loses_no_acknowledged_write(tmp_path, chroma_server, postgres):
    deployment = uuid.uuid4().hex[:12]
    root = tmp_path / "root"
    workers = [start_server(root, chroma_server, postgres.url, "--token", TOKEN, "--trust",
                            deployment=deployment, log=tmp_path / f"w{n}.log") for n in range(2)]
    (a_proc, a), (b_proc, b) = workers
    acked: list[tuple[str, str, str]] = []  # (id, task, the worker that acknowledged it)
    retried: list[int] = []
    killed = asyncio.Event()
    # Every client has its session on A before any writes, so none is done before the kill.
    all_on_a = asyncio.Barrier(CLIENTS)

    async def client(i: int) -> None:
        url, n = a, 0
        while n < WRITES:
            try:
                async with bearer_session(url, TOKEN, timeout=60) as session:
                    if url == a:
                        await all_on_a.wait()
                    while n < WRITES:
                        task = f"Restore replica zq{i}x{n} of the ledger cluster"
                        done = await call_ok(session, "record_experience",
                                             {"task": task, "outcome": "success"})
                        acked.append((done["id"], task, url))
                        n += 1
                        await asyncio.sleep(0.05)
            except Exception:  # noqa: BLE001 - worker A went away mid-session
                if url == b or not killed.is_set():
                    raise  # only A's death may fail a call: anything else is a failure here
                retried.append(i)
                url = b  # the same write again, on the other worker

    async def kill_when_loaded() -> None:
        while len(acked) < KILL_AFTER:
            await asyncio.sleep(0.01)
        a_proc.kill()
        killed.set()

    try:
        killer = asyncio.create_task(kill_when_loaded())
        await asyncio.wait_for(asyncio.gather(*(client(i) for i in range(CLIENTS))), 600)
        await killer
        a_proc.wait(10)
        assert killed.is_set() and a_proc.returncode is not None
        assert sorted(set(retried)) == list(range(CLIENTS)), "a client never moved to worker B"
        assert any(w == a for _, _, w in acked) and any(w == b for _, _, w in acked)
        assert len({task for _, task, _ in acked}) == CLIENTS * WRITES

        async with bearer_session(b, TOKEN, timeout=60) as on_b:
            for eid, task, _ in acked:
                found = await call_ok(on_b, "recall_experiences", {"task": task, "k": 5})
                assert eid in {e["id"] for e in found["experiences"]}, \
                    f"acknowledged write {eid} ({task}) lost"
    finally:
        for proc, _ in workers:
            stop_process(proc)
