"""A team-mode accept never takes the net of an untrusted vote committed while it runs
(review1 #6, session 30).

`accept` deleted an item's untrusted row, then its principals' nets. An untrusted vote of a
first principal that committed between the two (the row was not there yet for the first
statement, its net was for the second) lost its net: its row stayed untrusted, and the next
accept counted its vote as the unnamed principal's, merged with every vote that names nobody.
Now an untrusted vote takes the item's vote lock that `accept` holds, so it waits and lands
whole after it. Forced here: the vote is cast from another worker right after accept's first
statement.
"""

from __future__ import annotations

import contextlib
import threading

from skillbank.store.postgres import PostgresStore


def test_an_untrusted_vote_during_an_accept_keeps_its_principal(postgres):
    with PostgresStore(postgres.url, deployment="review1-6") as one, \
            PostgresStore(postgres.url, deployment="review1-6") as other:
        usage, voter = one.usage("experiences"), other.usage("experiences")
        voter.vote("exp-race", "carol", True)  # a trusted row: accept reads it at the end
        real, done = usage.db.transaction, threading.Event()

        def cast() -> None:
            voter.record("exp-race", use=0, ok=False, trusted=False, principal="bob")
            done.set()

        def waiting_or_done() -> bool:
            if done.is_set():
                return True
            rows = other.db.execute(
                "SELECT count(*) FROM pg_locks WHERE locktype = 'advisory' AND NOT granted "
                "AND database = (SELECT oid FROM pg_database WHERE datname = current_database())")
            return int(rows[0][0]) > 0

        @contextlib.contextmanager
        def transaction(**kwargs):
            with real(**kwargs) as conn:
                execute = conn.execute

                def step(sql, *args, **kw):
                    result = execute(sql, *args, **kw)
                    if "AND NOT trusted RETURNING" in sql and not thread.is_alive() \
                            and not done.is_set():
                        thread.start()  # bob's vote, from the other worker, right now
                        for _ in range(6000):  # (a bound, not a timing: until it waits or is in)
                            if waiting_or_done():
                                break
                            done.wait(0.01)
                    return result

                conn.execute = step
                try:
                    yield conn
                finally:
                    conn.execute = execute

        thread = threading.Thread(target=cast)
        usage.db.transaction = transaction
        try:
            usage.accept("exp-race")
        finally:
            usage.db.transaction = real
        thread.join(60)
        assert done.is_set()
        assert usage.untrusted("exp-race").outside == {"bob": -1}  # {} before: his net taken
        usage.accept("exp-race")
        assert usage.outside("exp-race") == {"carol": 1, "bob": -1}  # {"": -1, ...} before
