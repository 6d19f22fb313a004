"""When PostgreSQL drops every session of a pool (a restart, a DBA's pg_terminate_backend, an
idle cut), the next call runs on a fresh connection at once: it does not fail.

psycopg_pool checked idle connections one by one before lending, backing off 1, 2, 4 s after
each dead one, so with 3+ dead idle connections (a worker that has served a team keeps several)
a call's 5 s ran out and it failed "PostgreSQL ... is unreachable" with PostgreSQL up; an idle
worker refused its first write and answered /readyz 503 after every restart (hunt-pg #2,
session 28). Measured on the old pool: StoreUnavailableError after 5.0 s; now the call answers.

Real PostgreSQL (tests/pg_cluster.py): sessions killed with pg_terminate_backend, and a real
restart of a private cluster.
"""

from __future__ import annotations

import contextlib

import psycopg

from skillbank.store.postgres.db import Database

IDLE_CONNECTIONS = 6  # more than the old back-off (0 + 1 + 2 + 4 s) let a 5 s call get through


def _fill(db: Database) -> list[int]:
    """Make the pool hold IDLE_CONNECTIONS idle connections; returns their backend pids."""
    held = [db.pool.getconn() for _ in range(IDLE_CONNECTIONS)]
    pids = [conn.info.backend_pid for conn in held]
    for conn in held:
        db.pool.putconn(conn)
    assert db.pool.get_stats()["pool_available"] >= IDLE_CONNECTIONS
    return pids


def test_a_call_after_every_session_was_terminated_succeeds(postgres):
    db = Database(postgres.url, max_size=8, timeout=5.0)
    try:
        pids = _fill(db)
        with psycopg.connect(postgres.url, autocommit=True) as admin:
            for pid in pids:
                admin.execute("SELECT pg_terminate_backend(%s)", (pid,))
        assert db.execute("SELECT 1") == [(1,)]  # was: StoreUnavailableError after 5 s
        assert db.execute("SELECT 2") == [(2,)]
    finally:
        db.close()


def test_the_first_call_and_ping_after_a_restart_succeed(own_postgres):
    db = Database(own_postgres.url, max_size=8, timeout=5.0)
    try:
        _fill(db)
        own_postgres.stop()
        own_postgres.start()
        assert db.execute("SELECT 1") == [(1,)]  # was: StoreUnavailableError after 5 s
        db.ping()  # /readyz
    finally:
        with contextlib.suppress(Exception):
            db.close()
