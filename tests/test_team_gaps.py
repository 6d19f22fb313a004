"""Team mode's remaining gaps (issue 24), on a real PostgreSQL (private cluster) and, where the
index matters, a real `chroma run`.

- The change feed is NOTIFY only: before, every write also added a row to `sb_changes` that
  nothing ever read back, so the table grew forever. A worker whose listener lost PostgreSQL
  still learns of the writes it missed (it flags everything when it reconnects).
"""

from __future__ import annotations

import time

import pytest

psycopg = pytest.importorskip("psycopg")


def _until(check, seconds: float):
    deadline = time.monotonic() + seconds
    while True:
        found = check()
        if found:
            return found
        assert time.monotonic() < deadline, f"not within {seconds} s"
        time.sleep(0.05)


def _rows(url: str, table: str) -> int:
    with psycopg.connect(url) as conn:
        return conn.execute(f"SELECT count(*) FROM {table}").fetchone()[0]


def test_the_change_feed_stores_no_rows_and_a_reconnected_worker_learns_what_it_missed(
        own_postgres):
    from skillbank.store.postgres import PostgresStore

    with PostgresStore(own_postgres.url, deployment="gaps") as a, \
            PostgresStore(own_postgres.url, deployment="gaps") as b:
        a.migrate()
        feed_a, feed_b = a.change_feed(), b.change_feed()
        for n in range(20):
            feed_a.wrote("experiences", [f"ex-{n}"])
        assert feed_b.wait("experiences", 2)
        assert _rows(own_postgres.url, "sb_changes") == 0, "every write left a row behind"

        # PostgreSQL restarts; a write lands before B's listener is back: B still learns of it.
        feed_b.take("experiences")
        own_postgres.stop()
        own_postgres.start()
        _until(lambda: _try_write(feed_a), 30)
        assert _until(lambda: feed_b.take("experiences") is not False, 10) is not False
        assert _rows(own_postgres.url, "sb_changes") == 0


def _try_write(feed) -> bool:
    try:
        feed.wrote("experiences", ["ex-after-restart"])
        return True
    except Exception:  # the pool is still reconnecting
        return False
