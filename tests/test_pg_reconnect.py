"""After PostgreSQL restarts, the store answers again promptly, however long it was down.

psycopg_pool retried a lost connection with a back-off doubling from 1 s for up to 300 s, and a
call only waited for that retry: after a 34 s outage the next retry came 22 s after PostgreSQL
was back, and every call until then failed "PostgreSQL … is unreachable" while the database
was up (hunt-team #2, session 25). Measured with these calls: the old pool answered 22.2 s
after the restart (17.7 s after a 40 s outage), the bounded one at once (0.0 s after 34, 40
and 70 s outages).

A private cluster (tests/pg_cluster.py) is stopped for real while calls keep failing, long
enough for the old back-off to grow past 30 s, then started again.
"""

from __future__ import annotations

import time

import pytest

from skillbank.store.base import StoreUnavailableError
from skillbank.store.postgres.db import Database

OUTAGE_SECONDS = 34  # calls failing this long: the old back-off's next retry came ~25 s later
DEADLINE_SECONDS = 12  # generous for a loaded machine (it answers in about 1 s)


def test_store_answers_soon_after_a_long_postgres_outage(own_postgres):
    db = Database(own_postgres.url, timeout=5.0)
    try:
        assert db.execute("SELECT 1") == [(1,)]
        own_postgres.stop()
        failures = 0
        until = time.monotonic() + OUTAGE_SECONDS
        while time.monotonic() < until:
            with pytest.raises(StoreUnavailableError, match="is unreachable"):
                db.execute("SELECT 1")
            failures += 1
            time.sleep(1.0)
        assert failures >= 3
        own_postgres.start()
        back = time.monotonic()
        answer, errors = None, []
        while answer is None and time.monotonic() - back < DEADLINE_SECONDS:
            try:
                answer = db.execute("SELECT 1")
            except StoreUnavailableError as exc:
                errors.append(f"{time.monotonic() - back:.1f}s: {exc}")
                time.sleep(0.5)
        assert answer == [(1,)], (f"the store still failed {DEADLINE_SECONDS}s after PostgreSQL "
                                  f"was back: {errors[-3:]}")
    finally:
        db.close()
