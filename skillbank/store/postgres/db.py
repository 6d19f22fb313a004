"""Connecting to PostgreSQL: one pool per store, and errors that say what to fix.

psycopg's own messages name a libpq detail ("connection refused", "password authentication
failed for user x") but not which setting is wrong, and a pool that cannot connect only says it
timed out. Every error leaving this column is a `StoreUnavailableError` naming the database (its
URL with the password hidden), what went wrong and what to check. The pool checks a connection
before lending it, so after PostgreSQL restarts the next call reconnects: the store is never
recreated, and a retry is never scheduled further ahead than a call waits (`Database`).
"""

from __future__ import annotations

import contextlib
import re
from typing import Any, Iterator
from urllib.parse import urlsplit, urlunsplit

import psycopg
from psycopg_pool import ConnectionPool, PoolTimeout

from skillbank.store.base import StoreUnavailableError

SETTING = "database_url (SKILLBANK_DATABASE_URL)"


def masked(url: str) -> str:
    """The URL with its password replaced by ***, for messages and logs."""
    try:
        parts = urlsplit(url)
    except ValueError:
        return "<unparseable URL>"
    if parts.password is None:
        return url
    netloc = parts.netloc.replace(f":{parts.password}@", ":***@", 1)
    return urlunsplit(parts._replace(netloc=netloc))


def explain(url: str, exc: BaseException) -> StoreUnavailableError:
    """A clear error for a failure to reach or use the database at `url`."""
    where = f"PostgreSQL at {masked(url)}"
    text = str(exc).strip().splitlines()[0] if str(exc).strip() else type(exc).__name__
    low = str(exc).lower()
    if isinstance(exc, psycopg.ProgrammingError) and ("invalid" in low or "missing" in low
                                                       or "uri" in low):
        return StoreUnavailableError(
            f"{SETTING} {masked(url)!r} is not a PostgreSQL URL ({text}); write it as "
            "postgresql://user:password@host:5432/dbname")
    if "password authentication failed" in low or "no password supplied" in low:
        return StoreUnavailableError(
            f"{where} refused the login ({text}); check the user name and password in {SETTING}")
    if re.search(r'database ".*" does not exist', low):
        return StoreUnavailableError(
            f"{where}: {text}; create it (createdb) or fix the database name in {SETTING}")
    if isinstance(exc, PoolTimeout):
        text = "no connection could be made in time"
    return StoreUnavailableError(
        f"{where} is unreachable ({text}); check that PostgreSQL is running and that the host "
        f"and port in {SETTING} are right")


class Database:
    """A connection pool with clear errors; connections are autocommit unless in `transaction`."""

    def __init__(self, url: str, *, min_size: int = 1, max_size: int = 8,
                 timeout: float = 5.0) -> None:
        if not isinstance(url, str) or not url.startswith(("postgresql://", "postgres://")):
            raise StoreUnavailableError(
                f"{SETTING} {masked(str(url))!r} is not a PostgreSQL URL; write it as "
                "postgresql://user:password@host:5432/dbname")
        self.url = url
        self.timeout = timeout
        # One direct attempt first: the pool would only report a timeout, not the reason.
        try:
            psycopg.connect(url, connect_timeout=max(2, int(timeout)), autocommit=True).close()
        except psycopg.Error as exc:
            raise explain(url, exc) from None
        # `reconnect_timeout`: psycopg_pool retries a failed connection with a back-off that
        # doubles from 1 s until this many seconds have passed (300 by default), and the pending
        # retry keeps its slot, so a call after PostgreSQL came back waited `timeout` for a
        # retry scheduled up to a minute away: a worker answered "unreachable" for 20-50 s
        # while the database was up (hunt-team #2, session 25). A call waits `timeout`; a retry
        # later than that serves no one, so a retry chain ends then and the next call starts a
        # new one at once. While PostgreSQL is down that is still one attempt at a time per
        # store, 1 and 2 s apart, and none while nobody calls.
        self.pool = ConnectionPool(
            url, min_size=min_size, max_size=max_size, timeout=timeout, open=False,
            check=ConnectionPool.check_connection, name="skillbank-store",
            reconnect_timeout=max(1.0, timeout),
            kwargs={"autocommit": True, "connect_timeout": max(2, int(timeout))})
        self.pool.open(wait=False)

    @contextlib.contextmanager
    def connection(self) -> Iterator[psycopg.Connection]:
        try:
            with self.pool.connection() as conn:
                yield conn
        except (psycopg.OperationalError, psycopg.InterfaceError, PoolTimeout) as exc:
            raise explain(self.url, exc) from None

    @contextlib.contextmanager
    def transaction(self) -> Iterator[psycopg.Connection]:
        with self.connection() as conn:
            try:
                with conn.transaction():
                    yield conn
            except (psycopg.OperationalError, psycopg.InterfaceError) as exc:
                raise explain(self.url, exc) from None

    def execute(self, sql: str, params: Any = None) -> list[tuple]:
        with self.connection() as conn:
            try:
                cur = conn.execute(sql, params)
                return cur.fetchall() if cur.description else []
            except (psycopg.OperationalError, psycopg.InterfaceError) as exc:
                raise explain(self.url, exc) from None

    def close(self) -> None:
        self.pool.close()


def without_nul(value: Any) -> Any:
    """`value` (JSON-like) with every NUL character as U+FFFD: PostgreSQL's text and jsonb
    refuse NUL, which the files column stores (JSON escapes it), so a record the embedded
    default keeps would otherwise be refused in team mode with a database error."""
    if isinstance(value, str):
        return value.replace("\x00", "\ufffd") if "\x00" in value else value
    if isinstance(value, dict):
        return {without_nul(k): without_nul(v) for k, v in value.items()}
    if isinstance(value, list):
        return [without_nul(v) for v in value]
    return value


def lock_key(*parts: str) -> int:
    """A signed 64-bit advisory lock key for a name (the same in every process)."""
    import hashlib

    digest = hashlib.sha256("\x1f".join(parts).encode()).digest()
    return int.from_bytes(digest[:8], "big", signed=True)
