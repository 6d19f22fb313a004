"""A PostgreSQL that accepts connections and never answers (a hung machine, a stalled disk)
fails calls and /readyz within a bound; it does not hang them.

Pooled connections had no bound on a wait for the server's answer: with PostgreSQL frozen a
worker's tool call and its /readyz blocked until the client gave up (95-100 s in the hunt; the
load balancer's readiness probe never answered), hunt-pg #6, session 28. Now every wait of a
pooled connection is bounded (skillbank/store/postgres/deadline.py).

The private cluster is frozen for real with SIGSTOP on the postmaster and every backend, and
continued in a `finally`. The bounds asserted are loose (60 s) for a loaded machine; the old
code never answered at all.
"""

from __future__ import annotations

import contextlib
import os
import signal
import threading
import time
from pathlib import Path
from typing import Any, Callable, Iterator

import httpx

from conftest import stop_process
from mcp_http import bearer_session, call
from skillbank.store.base import StoreUnavailableError
from skillbank.store.postgres.db import Database
from team_worker import start_server

BOUND = 60  # seconds: "answers", not "answers fast"; each answer takes about 5-10 s here
TOKEN = "frozen-test-token"


def _cluster_pids(data: Path) -> list[int]:
    postmaster = int((data / "postmaster.pid").read_text().split()[0])
    children = []
    for stat in Path("/proc").glob("[0-9]*/stat"):
        with contextlib.suppress(OSError, ValueError, IndexError):
            if int(stat.read_text().rsplit(")", 1)[1].split()[1]) == postmaster:
                children.append(int(stat.parent.name))
    return [postmaster, *children]


@contextlib.contextmanager
def frozen(cluster: Any) -> Iterator[None]:
    """PostgreSQL stopped (SIGSTOP) for the block: TCP still accepted, nothing answered."""
    pids = _cluster_pids(cluster.data)
    try:
        for pid in pids:
            os.kill(pid, signal.SIGSTOP)
        yield
    finally:
        for pid in pids:
            with contextlib.suppress(ProcessLookupError):
                os.kill(pid, signal.SIGCONT)


def _within(seconds: float, work: Callable[[], Any]) -> Any:
    """What `work` returned or raised, asserting it did so within `seconds`."""
    outcome: list[Any] = []

    def run() -> None:
        try:
            outcome.append(("returned", work()))
        except BaseException as exc:  # noqa: BLE001 - reported to the test
            outcome.append(("raised", exc))

    thread = threading.Thread(target=run, daemon=True)
    thread.start()
    thread.join(seconds)
    assert outcome, f"no answer within {seconds} s: it hangs"
    return outcome[0]


def test_store_calls_and_ping_fail_in_time_when_postgres_is_frozen(own_postgres):
    db = Database(own_postgres.url, timeout=5.0)
    try:
        held = [db.pool.getconn() for _ in range(3)]  # idle connections, as a busy worker has
        for conn in held:
            db.pool.putconn(conn)
        with frozen(own_postgres):
            for work in (lambda: db.execute("SELECT 1"), lambda: db.ping()):
                how, what = _within(BOUND, work)
                assert how == "raised" and isinstance(what, StoreUnavailableError), (how, what)
                assert "PostgreSQL at" in str(what) and "check" in str(what), what
        deadline = time.monotonic() + BOUND
        while True:  # and it serves again once PostgreSQL is continued
            try:
                assert db.execute("SELECT 1") == [(1,)]
                break
            except StoreUnavailableError:
                assert time.monotonic() < deadline, "the store did not serve again"
                time.sleep(0.5)
    finally:
        with contextlib.suppress(Exception):
            db.close()


async def test_worker_readyz_and_tool_call_answer_when_postgres_is_frozen(
        tmp_path, chroma_server, own_postgres):
    proc, url = start_server(tmp_path / "root", chroma_server, own_postgres.url,
                             "--token", TOKEN, "--trust")
    try:
        async with bearer_session(url, TOKEN, timeout=BOUND * 2) as client:
            ok, _ = await call(client, "record_experience",
                               {"task": "Rotate the Quillmore keys", "outcome": "success"})
            assert ok
            with frozen(own_postgres):
                answer = httpx.get(f"{url}/readyz", timeout=BOUND)  # was: no answer at all
                assert answer.status_code == 503, answer.text
                assert "PostgreSQL at" in answer.json()["checks"]["postgres"], answer.text
                started = time.monotonic()
                ok, text = await call(client, "record_experience",
                                      {"task": "Rotate the Quillmore keys", "outcome": "failure"})
                assert not ok and "PostgreSQL at" in text, text
                assert time.monotonic() - started < BOUND
    finally:
        stop_process(proc)
