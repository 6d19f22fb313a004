"""A write lock whose PostgreSQL session ends while it is held: no write is silently lost.

hunt-teamclock #1, session 30: the write lock is a session advisory lock held on its own pooled
connection, idle while the critical section runs on others. When that session ended (a DBA's
`pg_terminate_backend`, an `idle_session_timeout`), PostgreSQL released the lock, another
worker took it, and both wrote at once: two processes casting 25 + 25 "helpful" votes, each
answered normally, left `helpful` at 33-42. Now a memory's write checks, in its own
transaction, that its lock is still held (`locks.AdvisoryWriteLock.fence`): a write after the
lock was lost is refused (`LockLostError`, nothing written), and the lock session is not
reaped as idle. Every acknowledged vote is counted.

Real PostgreSQL (tests/pg_cluster.py) and `chroma run`; the sessions are killed with
pg_terminate_backend, as a DBA or an idle-session reaper would.
"""

from __future__ import annotations

import asyncio
import threading
import time
import uuid
from typing import Any

import psycopg
import pytest

from conftest import stop_process
from skillbank.errors import BusyError
from skillbank.store.base import StoreUnavailableError
from skillbank.store.postgres.db import Database
from skillbank.store.postgres.locks import AdvisoryWriteLock, LockLostError
from team_worker import open_bank, start_server

TOKEN = "lock-lost-token"
RULE = "Always run the Quillon linter before pushing to main"
VOTES = 20  # per worker


def _halves(key: int) -> tuple[int, int]:
    return (key >> 32) & 0xFFFFFFFF, key & 0xFFFFFFFF


def kill_holders(admin: psycopg.Connection, key: int) -> int:
    """pg_terminate_backend the sessions holding the advisory lock `key`; how many."""
    return len(admin.execute(
        "SELECT pg_terminate_backend(pid) FROM pg_locks WHERE locktype = 'advisory' "
        "AND granted AND classid = %s::oid AND objid = %s::oid AND objsubid = 1",
        _halves(key)).fetchall())


def helpful(url: str, deployment: str, gid: str) -> int:
    with psycopg.connect(url, autocommit=True) as conn:
        return int(conn.execute("SELECT helpful FROM sb_guidelines WHERE deployment = %s "
                                "AND id = %s", (deployment, gid)).fetchone()[0])


def test_a_write_after_its_lock_session_was_killed_is_refused_and_not_written(
        tmp_path, chroma_server, postgres):
    """Before: worker A's vote, made while it believed it held the lock that worker B had just
    taken, was answered normally (both wrote at once); now it is refused, nothing written."""
    deployment = "d" + uuid.uuid4().hex[:12]
    a = open_bank(tmp_path / "a", chroma_server, postgres.url, deployment)
    b = open_bank(tmp_path / "b", chroma_server, postgres.url, deployment)
    try:
        gid = a.guidelines.add(RULE, topic="ci").guideline_id
        lock = a.guidelines.write_lock
        with lock:  # worker A in the middle of a guideline write
            with psycopg.connect(postgres.url, autocommit=True) as admin:
                assert kill_holders(admin, lock.key) == 1
            b.guidelines.vote(gid, True)  # A's lock is gone: B takes it at once
            with pytest.raises(LockLostError, match="was lost .* not saved"):
                a.guidelines.vote(gid, True)  # was: answered, while B could write too
        assert helpful(postgres.url, deployment, gid) == 1
        a.guidelines.vote(gid, True)  # the next write takes the lock again
        assert helpful(postgres.url, deployment, gid) == 2
        assert b.guidelines.get(gid).helpful == 2
    finally:
        b.close()
        a.close()


def test_an_idle_session_timeout_does_not_end_a_held_lock(postgres):
    """Before: with `idle_session_timeout` on the role (here in the URL's options), the idle
    lock session was reaped and another worker took the lock while it was held."""
    url = f"{postgres.url}?options=-c%20idle_session_timeout%3D200"
    one, two = Database(url), Database(url)
    try:
        deployment = "idle-" + uuid.uuid4().hex[:8]
        held, other = AdvisoryWriteLock(one, deployment), AdvisoryWriteLock(two, deployment)
        with held:
            time.sleep(1.0)  # well past the 200 ms idle limit
            with pytest.raises(BusyError):  # was: acquired, the holder's session reaped
                other.acquire(timeout=0)
            with one.transaction(fenced=True) as conn:  # the holder's write still commits
                conn.execute("SELECT 1")
        with other:  # released: the other takes it
            pass
    finally:
        one.close()
        two.close()


async def _votes_through(url: str, gid: str, n: int) -> tuple[int, list[str]]:
    from mcp_http import bearer_session, call

    ok, errors = 0, []
    async with bearer_session(url, TOKEN, timeout=120) as client:
        for _ in range(n):
            done, answer = await call(client, "rate_memory", {"id": gid, "helpful": True})
            if done:
                ok += 1
            else:
                errors.append(str(answer))
    return ok, errors


def _votes_in_process(bank: Any, gid: str, n: int) -> tuple[int, list[str]]:
    ok, errors = 0, []
    for _ in range(n):
        try:
            bank.guidelines.vote(gid, True)
            ok += 1
        except StoreUnavailableError as exc:  # a clear error: that vote was not counted
            errors.append(str(exc))
    return ok, errors


@pytest.mark.parametrize("remote", [False, True], ids=["in-process", "client-of-owner"])
def test_every_acknowledged_vote_is_counted_while_lock_sessions_are_killed(
        tmp_path, chroma_server, postgres, remote):
    """Two workers (own roots, one deployment) vote on one rule at once while a killer keeps
    terminating the guideline lock's sessions. Before: 25 + 25 votes acknowledged, `helpful`
    33-42. Now `helpful` is the number of votes answered as done; the others were refused
    with a clear error (in process a StoreUnavailableError, through MCP an error answer)."""
    deployment = "d" + uuid.uuid4().hex[:12]
    workers, banks = [], []
    try:
        if remote:
            for name in ("a", "b"):
                workers.append(start_server(tmp_path / name, chroma_server, postgres.url,
                                            "--token", TOKEN, "--trust",
                                            deployment=deployment))
        for name in ("a", "b") if not remote else ("setup",):
            banks.append(open_bank(tmp_path / name, chroma_server, postgres.url, deployment))
        gid = banks[0].guidelines.add(RULE, topic="ci").guideline_id
        key = banks[0].guidelines.write_lock.key
        if remote:
            banks.pop().close()

        results: list[tuple[int, list[str]]] = []
        stop = threading.Event()

        def voter(i: int) -> None:
            if remote:
                results.append(asyncio.run(_votes_through(workers[i][1], gid, VOTES)))
            else:
                results.append(_votes_in_process(banks[i], gid, VOTES))

        def killer() -> None:
            with psycopg.connect(postgres.url, autocommit=True) as admin:
                while not stop.is_set():
                    kill_holders(admin, key)
                    stop.wait(0.02)

        threads = [threading.Thread(target=voter, args=(i,)) for i in range(2)]
        reaper = threading.Thread(target=killer)
        reaper.start()
        for t in threads:
            t.start()
        for t in threads:
            t.join()
        stop.set()
        reaper.join()
        assert len(results) == 2
        acknowledged = sum(ok for ok, _ in results)
        errors = [e for _, errs in results for e in errs]
        # was: every vote acknowledged, and 8-17 of 50 of them missing from `helpful`
        assert helpful(postgres.url, deployment, gid) == acknowledged, errors[:3]
        assert all("PostgreSQL" in e for e in errors), errors[:3]
    finally:
        for bank in banks:
            bank.close()
        for proc, _ in workers:
            stop_process(proc)
