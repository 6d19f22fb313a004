"""A write-lock holder that is alive but not running no longer blocks the deployment's writes.

hunt-teamchurn #2, session 33: a team worker SIGSTOPped while it held the deployment's write
lock (a PostgreSQL session advisory lock) kept it for as long as it stayed stopped; every other
worker's experience write waited 60 s and failed "another process is writing ... try again when
it has finished", which never came. Now a holder beats on its lock session; a waiter that finds
the session silent past the lease ends it (`pg_terminate_backend`) and takes the lock, and the
stopped holder's write, when it wakes, is refused (`LockLostError`, nothing written). A live
holder in a long write is named in the busy error and never broken; a holder that does not beat
(an older skillbank) is never broken, and the error says how to end it.

Real PostgreSQL (tests/pg_cluster.py); the frozen holder is a real process under SIGSTOP.
"""

from __future__ import annotations

import contextlib
import os
import signal
import subprocess
import sys
import threading
import uuid
from typing import Callable, Iterator

import psycopg
import pytest

from skillbank.errors import BusyError
from skillbank.store.postgres.db import Database
from skillbank.store.postgres.locks import AdvisoryWriteLock

pytestmark = pytest.mark.skipif(sys.platform == "win32", reason="SIGSTOP")

#: A holder process: takes the lock, says "held", waits for a line, then tries a fenced write;
#: with "mid-write", it stops inside a fenced write that has updated row 1 of `frozen_rows`.
HOLDER = """
import sys
from skillbank.store.postgres.db import Database
from skillbank.store.postgres.locks import AdvisoryWriteLock
db = Database(sys.argv[1])
lock = AdvisoryWriteLock(db, sys.argv[2], lease=float(sys.argv[3]))
with lock:
    try:
        if sys.argv[4:] == ["mid-write"]:
            with db.transaction(fenced=True) as conn:
                conn.execute("UPDATE frozen_rows SET v = v + 100 WHERE id = 1")
                print("held", flush=True)
                sys.stdin.readline()
        else:
            print("held", flush=True)
            sys.stdin.readline()
            with db.transaction(fenced=True) as conn:
                conn.execute("SELECT 1")
        print("written", flush=True)
    except Exception as exc:
        print(type(exc).__name__, flush=True)
db.close()
"""


@contextlib.contextmanager
def stopped_holder(url: str, deployment: str, *mode: str) -> Iterator[Callable[[], str]]:
    """A HOLDER process with a 2 s lease, SIGSTOPped once it holds the lock; yields `wake`,
    which resumes it and returns what became of its write."""
    holder = subprocess.Popen([sys.executable, "-c", HOLDER, url, deployment, "2", *mode],
                              stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)

    def wake() -> str:
        os.kill(holder.pid, signal.SIGCONT)
        holder.stdin.write("go\n")
        holder.stdin.flush()
        return holder.stdout.readline().strip()

    try:
        assert holder.stdout.readline().strip() == "held"
        os.kill(holder.pid, signal.SIGSTOP)
        yield wake
        assert holder.wait(timeout=60) == 0
    finally:
        if holder.poll() is None:
            os.kill(holder.pid, signal.SIGCONT)
            holder.kill()


def test_a_stopped_holder_is_broken_after_its_lease_and_its_late_write_refused(postgres):
    """Before: the waiter failed with BusyError ("another process is writing") after its whole
    timeout, and again on every try while the holder stayed stopped."""
    deployment = "frozen-" + uuid.uuid4().hex[:8]
    db = Database(postgres.url)
    try:
        with stopped_holder(postgres.url, deployment) as wake:
            with AdvisoryWriteLock(db, deployment, timeout=120, lease=2):  # was: BusyError
                with db.transaction(fenced=True) as conn:  # the new holder's write commits
                    conn.execute("SELECT 1")
                assert wake() == "LockLostError"  # nothing written
    finally:
        db.close()


def test_a_live_holder_in_a_long_write_is_named_and_never_broken(postgres):
    """A holder whose lease would have run out several times over keeps the lock while it
    beats; the busy error names it (host:pid, session pid) instead of "another process"."""
    deployment = "live-" + uuid.uuid4().hex[:8]
    one, two = Database(postgres.url), Database(postgres.url)
    held, release = threading.Event(), threading.Event()
    outcome: list[str] = []

    def long_write() -> None:
        with AdvisoryWriteLock(one, deployment, lease=3):
            held.set()
            release.wait(60)
            with one.transaction(fenced=True) as conn:
                conn.execute("SELECT 1")
            outcome.append("written")

    writer = threading.Thread(target=long_write)
    writer.start()
    try:
        assert held.wait(30)
        with pytest.raises(BusyError) as busy:
            AdvisoryWriteLock(two, deployment, timeout=10, lease=3).acquire()
        message = str(busy.value)
        assert f"held by {os.uname().nodename}:{os.getpid()}"[:40] in message, message
        assert "try again when it has finished" in message
    finally:
        release.set()
        writer.join(60)
        one.close()
        two.close()
    assert outcome == ["written"]  # was never at risk; now checked: not broken while beating


def test_a_holder_that_does_not_beat_is_never_broken_and_the_error_says_how_to_end_it(postgres):
    """An older skillbank's session (no heartbeat, no name) may be in a long write: it is not
    ended; the error names its session pid and the statement that would end it."""
    deployment = "old-" + uuid.uuid4().hex[:8]
    db = Database(postgres.url)
    lock = AdvisoryWriteLock(db, deployment, timeout=4, lease=1)
    with psycopg.connect(postgres.url, autocommit=True) as old:
        old.execute("SELECT pg_advisory_lock(%s)", (lock.key,))
        pid = old.execute("SELECT pg_backend_pid()").fetchone()[0]
        try:
            with pytest.raises(BusyError) as busy:
                lock.acquire()
            message = str(busy.value)
            assert f"pg_terminate_backend({pid})" in message, message
            assert "does not announce itself" in message
            assert old.execute("SELECT 1").fetchone() == (1,)  # its session was left alone
        finally:
            db.close()


def test_a_holder_stopped_inside_a_write_does_not_hold_its_rows_past_the_lease(postgres):
    """Review 1 of session 34: ending a stopped holder's lock session left its write's
    transaction open ("idle in transaction"), holding its row locks (and the fence key), so the
    next holder's write to the same row waited out statement_timeout and failed, on every
    worker, for as long as it stayed stopped. Now that transaction ends a lease later."""
    deployment = "midwrite-" + uuid.uuid4().hex[:8]
    with psycopg.connect(postgres.url, autocommit=True) as admin:
        admin.execute("CREATE TABLE IF NOT EXISTS frozen_rows (id int PRIMARY KEY, v int)")
        admin.execute("INSERT INTO frozen_rows VALUES (1, 0) ON CONFLICT (id) DO UPDATE SET v = 0")
    db = Database(postgres.url, statement_timeout=600)
    try:
        with stopped_holder(postgres.url, deployment, "mid-write") as wake:
            with AdvisoryWriteLock(db, deployment, timeout=120, lease=2):
                with db.transaction(fenced=True) as conn:  # was: waited on the row, then failed
                    conn.execute("UPDATE frozen_rows SET v = v + 1 WHERE id = 1")
            assert wake() != "written"  # its write was rolled back
        with psycopg.connect(postgres.url, autocommit=True) as admin:
            assert admin.execute("SELECT v FROM frozen_rows WHERE id = 1").fetchone() == (1,)
    finally:
        db.close()


def test_a_waiter_judges_and_ends_only_its_own_databases_holder(postgres):
    """Review 1 of session 34: advisory locks conflict only within a database, but the holder
    was looked up in every database: a waiter in one ended another database's stopped holder
    of a same-named deployment (which was not blocking it), and named it in its busy error."""
    deployment = "samename-" + uuid.uuid4().hex[:8]
    other_db = "other_" + uuid.uuid4().hex[:8]
    with psycopg.connect(postgres.url, autocommit=True) as admin:
        admin.execute(f"CREATE DATABASE {other_db}")
    other_url = postgres.url.rsplit("/", 1)[0] + "/" + other_db
    db = Database(postgres.url)
    lock = AdvisoryWriteLock(db, deployment, timeout=4, lease=1)
    try:
        with psycopg.connect(postgres.url, autocommit=True) as mine, \
                psycopg.connect(other_url, autocommit=True) as theirs:
            theirs.execute("SELECT set_config('application_name', 'skillbank lock far:1', false)")
            theirs.execute("SELECT pg_advisory_lock(%s)", (lock.key,))  # silent past the lease
            with db.connection() as conn:
                assert lock._holder(conn) is None  # was: theirs, as this lock's holder
            mine.execute("SELECT pg_advisory_lock(%s)", (lock.key,))  # unnamed: never ended
            my_pid = mine.execute("SELECT pg_backend_pid()").fetchone()[0]
            with pytest.raises(BusyError) as busy:
                lock.acquire()
            assert f"pg_terminate_backend({my_pid})" in str(busy.value), str(busy.value)
            assert theirs.execute("SELECT 1").fetchone() == (1,)  # was: ended
    finally:
        db.close()
