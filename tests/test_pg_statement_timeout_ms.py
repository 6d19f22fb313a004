"""`database_statement_timeout` becomes PostgreSQL's `statement_timeout` in whole milliseconds,
never 0 ("no limit") for a positive value and never past what PostgreSQL takes.

hunt-teamclock #5, session 30: `int(seconds * 1000)` made 0.0004 s a 0, so the server's limit
was gone: a statement waiting on a lock ran until the client's bound (5 s later) and was
reported as a PostgreSQL that "does not answer". Now it is at least 1 ms, and the lock wait
is cancelled by PostgreSQL ("cancelled a statement"). A value past PostgreSQL's range (30 days
is 2 592 000 000 ms, over its 32-bit limit) was refused on every new connection, so the store
answered "unreachable"; now it is PostgreSQL's longest.

Real PostgreSQL (tests/pg_cluster.py).
"""

from __future__ import annotations

import uuid

import psycopg
import pytest

from skillbank.store.base import StoreUnavailableError
from skillbank.store.postgres.db import Database


@pytest.mark.parametrize("seconds, expected", [(0.0004, "1ms"), (0.5, "500ms"),
                                               (30 * 86400, "2147483647ms")])
def test_a_positive_timeout_is_a_limit_postgresql_takes(postgres, seconds, expected):
    """Before: 0.0004 s was "0" (no limit), 30 days made every connection fail."""
    db = Database(postgres.url, statement_timeout=seconds)
    try:
        assert db.execute("SHOW statement_timeout") == [(expected,)]
    finally:
        db.close()


def test_a_lock_wait_under_a_tiny_timeout_is_cancelled_by_postgresql(postgres):
    """Before: "PostgreSQL ... does not answer (no answer within 5.0004 s)", after 5 s."""
    table = "sto_" + uuid.uuid4().hex[:10]
    with psycopg.connect(postgres.url, autocommit=True) as admin:
        admin.execute(f"CREATE TABLE {table} (n int)")
    db = Database(postgres.url, statement_timeout=0.0004)
    try:
        with psycopg.connect(postgres.url) as holder:  # a DBA's transaction holding the table
            holder.execute(f"LOCK TABLE {table} IN ACCESS EXCLUSIVE MODE")
            with pytest.raises(StoreUnavailableError, match="cancelled a statement"):
                db.execute(f"SELECT count(*) FROM {table}")
            holder.rollback()
    finally:
        db.close()
        with psycopg.connect(postgres.url, autocommit=True) as admin:
            admin.execute(f"DROP TABLE {table}")
