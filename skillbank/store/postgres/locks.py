"""The write lock on PostgreSQL: a session advisory lock instead of `<root>/.write.lock`.

The lock is per deployment, so writers on any machine exclude each other. Like the file lock it
is re-entrant within a thread and exclusive between threads (an in-process `RLock` in front),
and waiting longer than its timeout raises `BusyError`. While held it keeps one pooled
connection (the session that owns the advisory lock); if that session dies (PostgreSQL
restarted) PostgreSQL has already released the lock, and release just returns the connection.
"""

from __future__ import annotations

import threading
import time
from typing import Any

import psycopg

from skillbank.errors import BusyError
from skillbank.store.postgres.db import Database, explain, lock_key, masked


class AdvisoryWriteLock:
    def __init__(self, db: Database, deployment: str, timeout: float = 60.0,
                 name: str = "write") -> None:
        self.db = db
        self.timeout = timeout
        self.key = lock_key("skillbank", deployment, name)
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
        except (psycopg.OperationalError, psycopg.InterfaceError) as exc:
            self.db.pool.putconn(conn)
            self._local.release()
            raise explain(self.db.url, exc) from None
        self._conn, self._depth = conn, 1
        return self

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
            conn, self._conn = self._conn, None
            if conn is not None:
                try:
                    conn.execute("SELECT pg_advisory_unlock(%s)", (self.key,))
                except psycopg.Error:
                    pass  # the session is gone, and its lock with it
                self.db.pool.putconn(conn)
        self._local.release()

    def __enter__(self) -> "AdvisoryWriteLock":
        return self.acquire()

    def __exit__(self, *exc: object) -> None:
        self.release()
