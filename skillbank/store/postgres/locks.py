"""The write lock on PostgreSQL: a session advisory lock instead of `<root>/.write.lock`.

The lock is per deployment, so writers on any machine exclude each other. Like the file lock it
is re-entrant within a thread and exclusive between threads (an in-process `RLock` in front),
and waiting longer than its timeout raises `BusyError`. While held it keeps one pooled
connection (the session that owns the advisory lock), idle while the critical section reads
and writes on others.

That session can end while the lock is held (PostgreSQL restarted, a DBA's
`pg_terminate_backend`, an `idle_session_timeout`, a proxy that cuts idle connections), and
PostgreSQL then releases the lock at once: another worker took it and both wrote, so votes the
callers were told were counted were lost (hunt-teamclock #1, session 30). Two things close that:

- The session is kept from being reaped as idle (`idle_session_timeout = 0` on it, PostgreSQL
  14+, until release), so the lock no longer ends on its own on a role with that setting.
- A memory's write is *fenced* (`Database.transaction(fenced=True)`): before it commits, in its
  own transaction, it takes this lock's fence key shared and checks that the lock session (its
  pid and start time) still holds the lock; if not, the write is rolled back and
  `LockLostError` says so (nothing written, try again). A new holder takes the fence key
  exclusively right after taking the lock, so it waits until a write that passed the check
  has committed: the check-then-commit window is closed too, and the new holder reads it.

A transaction-level advisory lock in each write's transaction would not do: the critical
section is a read, then a write, in several transactions (a vote refreshes, adds one, saves),
and only a lock over all of them keeps two workers' read-modify-writes apart. Only writes to
PostgreSQL are fenced: a Chroma index write that follows a fenced commit is not, and the
change feed's NOTIFY and the audit log's inserts (after the write, not part of it) are not.
"""

from __future__ import annotations

import threading
import time
from typing import Any

import psycopg

from skillbank.errors import BusyError
from skillbank.store.base import StoreUnavailableError
from skillbank.store.postgres.db import Database, explain, lock_key, masked


class LockLostError(StoreUnavailableError):
    """A write lock's PostgreSQL session ended while it was held: the write that found it out
    was rolled back (another worker may hold the lock now); trying it again is safe."""


#: Whether the session holding `key` (classid, objid: its two halves) is the one that took it.
_STILL_HELD = """SELECT EXISTS (
    SELECT 1 FROM pg_locks l JOIN pg_stat_activity a ON a.pid = l.pid
     WHERE l.locktype = 'advisory' AND l.classid = %s::oid AND l.objid = %s::oid
       AND l.objsubid = 1 AND l.granted AND l.mode = 'ExclusiveLock'
       AND l.pid = %s AND a.backend_start IS NOT DISTINCT FROM %s)"""


class AdvisoryWriteLock:
    def __init__(self, db: Database, deployment: str, timeout: float = 60.0,
                 name: str = "write") -> None:
        self.db = db
        self.timeout = timeout
        self.key = lock_key("skillbank", deployment, name)
        self.fence_key = lock_key("skillbank", deployment, name, "fence")
        self._halves = ((self.key >> 32) & 0xFFFFFFFF, self.key & 0xFFFFFFFF)
        self._session: tuple[int, Any] | None = None  # (pid, backend_start) of the holder
        self._local = threading.RLock()
        self._depth = 0
        self._conn: psycopg.Connection | None = None

    @property
    def is_locked(self) -> bool:
        return self._depth > 0

    def acquire(self, timeout: float | None = None, *args: Any, **kwargs: Any) -> "AdvisoryWriteLock":
        waited = self.timeout if timeout is None else timeout
        blocking = kwargs.get("blocking", True)
        forever = blocking is not False and waited is not None and waited < 0
        deadline = None if forever else time.monotonic() + (max(0.0, waited) if blocking is not False else 0.0)
        remaining = -1 if forever else max(0.0, deadline - time.monotonic())  # type: ignore[operator]
        if not self._local.acquire(timeout=remaining):
            raise self._busy(waited, blocking)
        if self._depth:
            self._depth += 1
            return self
        try:
            conn = self.db.pool.getconn()
        except Exception as exc:  # noqa: BLE001 - PoolTimeout, OperationalError
            self._local.release()
            raise explain(self.db.url, exc) from None
        try:
            while True:
                if conn.execute("SELECT pg_try_advisory_lock(%s)", (self.key,)).fetchone()[0]:
                    break
                if deadline is not None and time.monotonic() >= deadline:
                    self.db.pool.putconn(conn)
                    self._local.release()
                    raise self._busy(waited, blocking)
                time.sleep(0.02)
            # The last holder's fenced writes that passed their check have committed.
            conn.execute("SELECT pg_advisory_xact_lock(%s)", (self.fence_key,))
            session = conn.execute("SELECT pid, backend_start FROM pg_stat_activity "
                                   "WHERE pid = pg_backend_pid()").fetchone()
            if conn.info.server_version >= 140000:  # idle while held, never reaped as idle
                conn.execute("SET idle_session_timeout = 0")
        except psycopg.Error as exc:
            self._unlock(conn)
            self._local.release()
            raise explain(self.db.url, exc) from None
        self._conn, self._depth, self._session = conn, 1, (int(session[0]), session[1])
        self.db.held().append(self)
        return self

    def fence(self, conn: psycopg.Connection) -> None:
        """In a write's transaction (`conn`), just before it commits: raise `LockLostError`
        unless this lock's session still holds it. The fence key taken shared here holds off
        a next holder until this transaction has ended (see the module docstring)."""
        if self._session is None:
            return
        conn.execute("SELECT pg_advisory_xact_lock_shared(%s)", (self.fence_key,))
        if conn.execute(_STILL_HELD, (*self._halves, *self._session)).fetchone()[0]:
            return
        raise LockLostError(
            f"this deployment's write lock (a PostgreSQL advisory lock at "
            f"{masked(self.db.url)}) was lost while the write held it: PostgreSQL ended the "
            "session holding it (a restart, a pg_terminate_backend, a proxy that cut it), so "
            "another worker may be writing; this change was not saved. Try it again")

    def _busy(self, waited: float | None, blocking: Any) -> BusyError:
        how_long = f"within {waited:g} s" if blocking is not False and waited else "at once"
        return BusyError(
            f"another process is writing to this deployment and did not release its write lock "
            f"(a PostgreSQL advisory lock at {masked(self.db.url)}) {how_long}; try again when "
            "it has finished")

    def release(self, force: bool = False) -> None:
        if not self._depth:
            return
        self._depth = 0 if force else self._depth - 1
        if self._depth == 0:
            conn, self._conn, self._session = self._conn, None, None
            held = self.db.held()
            if self in held:
                held.remove(self)
            if conn is not None:
                self._unlock(conn)
        self._local.release()

    def _unlock(self, conn: psycopg.Connection) -> None:
        """Release the lock (if `conn` took it) and return `conn` to the pool."""
        try:
            conn.execute("SELECT pg_advisory_unlock(%s)", (self.key,))
            if conn.info.server_version >= 140000:
                conn.execute("RESET idle_session_timeout")
        except psycopg.Error:
            pass  # the session is gone, and its lock with it
        self.db.pool.putconn(conn)

    def __enter__(self) -> "AdvisoryWriteLock":
        return self.acquire()

    def __exit__(self, *exc: object) -> None:
        self.release()
