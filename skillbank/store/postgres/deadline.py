"""A client-side bound on every wait for PostgreSQL's answer on a pooled connection.

A PostgreSQL that accepts TCP and never answers (a hung VM, a stalled disk, SIGSTOP) hung worker
tool calls and /readyz without bound: the server's own `statement_timeout` never fires there,
and TCP keepalives do not either, since the kernel still acknowledges (hunt-pg #6, session 28).
So every wait of a pooled connection (`BoundedConnection.wait`: queries, commits, the pool's
check) is watched by one thread per process; a wait past its connection's `wait_limit` has its
socket shut down, which ends the wait at once with an error (`NoAnswer`), without freeing
anything another thread still uses. The connection is then broken and the pool replaces it.
"""

from __future__ import annotations

import contextlib
import heapq
import itertools
import os
import socket
import threading
import time
from typing import Any, Iterator

import psycopg


class NoAnswer(psycopg.OperationalError):
    """PostgreSQL did not answer within the connection's wait limit."""


class Watchdog:
    """Shuts down the socket of a connection whose wait outlives its deadline."""

    def __init__(self) -> None:
        self._cond = threading.Condition()
        self._due: list[tuple[float, int, Any, threading.Event]] = []
        self._count = itertools.count()
        self._thread: threading.Thread | None = None

    @contextlib.contextmanager
    def bound(self, conn: Any, seconds: float) -> Iterator[threading.Event]:
        """Within the block, `conn`'s socket is shut down after `seconds`; the event says so."""
        fired = threading.Event()
        entry = (time.monotonic() + seconds, next(self._count), conn, fired)
        with self._cond:
            if self._thread is None:
                self._thread = threading.Thread(target=self._run, daemon=True,
                                                name="skillbank-pg-deadline")
                self._thread.start()
            heapq.heappush(self._due, entry)
            self._cond.notify()
        try:
            yield fired
        finally:
            with self._cond:
                if entry in self._due:  # identity compare is by the unique counter
                    self._due.remove(entry)
                    heapq.heapify(self._due)

    def _run(self) -> None:
        while True:
            with self._cond:
                while not self._due:
                    self._cond.wait()
                deadline, _, conn, fired = self._due[0]
                late = deadline - time.monotonic()
                if late > 0:
                    self._cond.wait(late)
                    continue
                heapq.heappop(self._due)
                fired.set()
            _shut_down(conn)


def _shut_down(conn: Any) -> None:
    """End every wait on `conn`'s socket (the waiting thread sees the connection closed)."""
    with contextlib.suppress(Exception):
        duplicate = socket.socket(fileno=os.dup(conn.pgconn.socket))
        try:
            duplicate.shutdown(socket.SHUT_RDWR)
        finally:
            duplicate.close()


WATCHDOG = Watchdog()


class BoundedConnection(psycopg.Connection):
    """A psycopg connection whose every wait for the server lasts at most `wait_limit` seconds
    (None: no bound, as for migrations and imports, whose statements may run long)."""

    wait_limit: float | None = None

    def wait(self, gen: Any, *args: Any, **kwargs: Any) -> Any:
        limit = self.wait_limit
        if not limit:
            return super().wait(gen, *args, **kwargs)
        with WATCHDOG.bound(self, limit) as fired:
            try:
                return super().wait(gen, *args, **kwargs)
            except psycopg.Error:
                if fired.is_set():
                    raise NoAnswer(f"no answer within {limit:g} s") from None
                raise
