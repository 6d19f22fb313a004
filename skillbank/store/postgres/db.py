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
import threading
from typing import Any, Iterator
from urllib.parse import urlsplit, urlunsplit

import psycopg
from psycopg_pool import ConnectionPool, PoolTimeout

from skillbank.store.base import StoreUnavailableError
from skillbank.store.postgres.deadline import BoundedConnection, NoAnswer

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


#: SQLSTATE classes of errors that are the database's or its operator's to fix, never the
#: caller's: privileges and schema (42), a read-only standby (25006), resources (53, 54),
#: object state and operator intervention (55, 57), system and internal errors (58, F0, XX).
#: Only connection errors were converted, so a revoked privilege reached MCP callers as a bare
#: "Error executing tool X", counted as a caller's mistake (hunt-pg #3, session 28). Data and
#: integrity errors (22, 23) are left to the code that wrote the statement (`skillbank migrate`
#: names the line PostgreSQL refused).
OPERATORS = ("42", "25006", "53", "54", "55", "57", "58", "F0", "XX")


def is_the_databases(exc: BaseException) -> bool:
    """Whether `exc` is PostgreSQL failing or refusing us (explained as `StoreUnavailableError`)."""
    if isinstance(exc, (psycopg.OperationalError, psycopg.InterfaceError, PoolTimeout)):
        return True
    state = getattr(exc, "sqlstate", None) or ""
    return isinstance(exc, psycopg.Error) and state.startswith(OPERATORS)


def explain(url: str, exc: BaseException, last_failure: str | None = None) -> StoreUnavailableError:
    """A clear error for a failure to reach or use the database at `url` (`last_failure`: why
    the pool's last connection failed its check, for a pool timeout)."""
    where = f"PostgreSQL at {masked(url)}"
    text = str(exc).strip().splitlines()[0] if str(exc).strip() else type(exc).__name__
    low = str(exc).lower()
    state = getattr(exc, "sqlstate", None) or ""
    if isinstance(exc, psycopg.ProgrammingError) and not state and (
            "invalid" in low or "missing" in low or "uri" in low):
        return StoreUnavailableError(
            f"{SETTING} {masked(url)!r} is not a PostgreSQL URL ({text}); write it as "
            "postgresql://user:password@host:5432/dbname")
    if "password authentication failed" in low or "no password supplied" in low:
        return StoreUnavailableError(
            f"{where} refused the login ({text}); check the user name and password in {SETTING}")
    if re.search(r'database ".*" does not exist', low):
        return StoreUnavailableError(
            f"{where}: {text}; create it (createdb) or fix the database name in {SETTING}")
    if state == "42501":
        return StoreUnavailableError(
            f"{where} refused: {text}; the database role in {SETTING} lacks a privilege on "
            "skillbank's tables: grant it (see docs/team.md, section 2)")
    if state == "57014":
        return StoreUnavailableError(
            f"{where} cancelled a statement ({text}); it ran past database_statement_timeout "
            "(SKILLBANK_DATABASE_STATEMENT_TIMEOUT) or was cancelled by an operator: check "
            "what holds locks or loads the database")
    if isinstance(exc, NoAnswer):
        return StoreUnavailableError(
            f"{where} does not answer ({text}); a write under way may or may not have been "
            f"saved (look before writing it again); check that PostgreSQL and its machine are "
            f"not hung, and that the host and port in {SETTING} are right")
    if state and state.startswith(OPERATORS):
        return StoreUnavailableError(
            f"{where} refused the statement ({text}; SQLSTATE {state}); this is the "
            "database's state, not the request: check PostgreSQL's log")
    if isinstance(exc, PoolTimeout):
        text = "no connection could be made in time"
        if last_failure:
            text += f"; the last one tried: {last_failure}"
    return StoreUnavailableError(
        f"{where} is unreachable ({text}); check that PostgreSQL is running and that the host "
        f"and port in {SETTING} are right")


#: The longest `statement_timeout` PostgreSQL takes (milliseconds, a 32-bit integer: ~24.8 days).
MAX_STATEMENT_TIMEOUT_MS = 2**31 - 1


def server_milliseconds(seconds: float) -> int:
    """A positive `database_statement_timeout` as PostgreSQL's `statement_timeout`: whole
    milliseconds, at least 1 and at most what PostgreSQL takes. `int(seconds * 1000)` made
    0.0004 s a 0, PostgreSQL's "no limit": a lock wait then ran until the client's bound and
    was reported as a PostgreSQL that "does not answer" (hunt-teamclock #5, session 30); and
    30 days was past PostgreSQL's range, refused on every new connection ("unreachable")."""
    return min(MAX_STATEMENT_TIMEOUT_MS, max(1, round(seconds * 1000)))


class Database:
    """A connection pool with clear errors; connections are autocommit unless in `transaction`.

    Every wait for PostgreSQL's answer is bounded (`deadline.BoundedConnection`): the pool's
    check before lending at `timeout`, any statement at `statement_timeout` (also set as the
    server's own `statement_timeout`, which cancels it there) plus `timeout`, so a PostgreSQL
    that accepts connections and never answers fails a call instead of hanging it (hunt-pg #6,
    session 28). 0 or None: statements unbounded (the check stays bounded).
    """

    def __init__(self, url: str, *, min_size: int = 1, max_size: int = 8,
                 timeout: float = 5.0, statement_timeout: float | None = 60.0) -> None:
        if not isinstance(url, str) or not url.startswith(("postgresql://", "postgres://")):
            raise StoreUnavailableError(
                f"{SETTING} {masked(str(url))!r} is not a PostgreSQL URL; write it as "
                "postgresql://user:password@host:5432/dbname")
        self.url = url
        self.timeout = timeout
        bounded = statement_timeout and statement_timeout != float("inf")
        self.statement_timeout = float(statement_timeout) if bounded else None
        #: Why the last connection failed the pool's check (named when the pool times out).
        self.last_check_failure: str | None = None
        self._holding = threading.local()  # the advisory write locks each thread holds here
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
            check=self._check, configure=self._configure, connection_class=BoundedConnection,
            name="skillbank-store", reconnect_timeout=max(1.0, timeout),
            kwargs={"autocommit": True, "connect_timeout": max(2, int(timeout))})
        self.pool.open(wait=False)

    def held(self) -> list[Any]:
        """The write locks (`locks.AdvisoryWriteLock`) the calling thread holds on this
        database: a `fenced` write checks each is still held before it commits."""
        locks = getattr(self._holding, "locks", None)
        if locks is None:
            locks = self._holding.locks = []
        return locks

    @property
    def statement_wait(self) -> float | None:
        """How long a statement's answer is awaited here: the server cancels it at
        `statement_timeout`, so only a server that does not answer at all is waited out."""
        return None if self.statement_timeout is None else self.statement_timeout + self.timeout

    def _configure(self, conn: BoundedConnection) -> None:
        """The session's `statement_timeout`: ours, or the one the DBA set on the role or the
        database where that is shorter. Ours replaced it, so a role's 5 s became 60 s and
        `database_statement_timeout = 0` removed it (review of session 28)."""
        conn.wait_limit = self.timeout
        ours = 0 if self.statement_timeout is None else \
            server_milliseconds(self.statement_timeout)
        row = conn.execute("SELECT setting::bigint FROM pg_settings "
                           "WHERE name = 'statement_timeout'").fetchone()
        theirs = int(row[0]) if row else 0
        milliseconds = min((t for t in (ours, theirs) if t > 0), default=0)
        conn.execute("SELECT set_config('statement_timeout', %s, false)", (str(milliseconds),))
        conn.wait_limit = self.statement_wait

    def _check(self, conn: BoundedConnection) -> None:
        """The pool's check before lending `conn`, bounded. A connection whose session is gone
        (PostgreSQL restarted, a DBA's pg_terminate_backend, a proxy's idle cut) means its idle
        siblings are gone too: psycopg_pool tried them one by one, backing off 1, 2, 4 s after
        each, so with 3+ dead idle connections the call's 5 s ran out and it failed
        "unreachable" with PostgreSQL up (hunt-pg #2, session 28). The pool is drained: every
        idle connection is closed unchecked and replaced in the background, so the next attempt
        gets a fresh connection. `pool.check()` did so by checking each idle sibling, each with
        the statement limit (65 s), so one stalled sibling held the call a minute (review of
        session 28). Not when PostgreSQL did not answer (`NoAnswer`): it would not answer the
        new connections either."""
        conn.wait_limit = self.timeout
        try:
            ConnectionPool.check_connection(conn)
        except psycopg.Error as exc:
            self.last_check_failure = str(exc).strip().splitlines()[0] if str(exc).strip() \
                else type(exc).__name__
            if not isinstance(exc, NoAnswer):
                (getattr(self.pool, "drain", None) or self.pool.check)()  # drain: 3.2+
            raise
        finally:
            conn.wait_limit = self.statement_wait

    @contextlib.contextmanager
    def explained(self) -> Iterator[None]:
        """PostgreSQL's failures inside the block as `StoreUnavailableError` (`explain`)."""
        try:
            yield
        except (psycopg.Error, PoolTimeout) as exc:
            if not is_the_databases(exc):
                raise
            raise explain(self.url, exc, self.last_check_failure) from None

    @contextlib.contextmanager
    def connection(self) -> Iterator[psycopg.Connection]:
        with self.explained(), self.pool.connection() as conn:
            yield conn

    @contextlib.contextmanager
    def transaction(self, *, unbounded: bool = False,
                    fenced: bool = False) -> Iterator[psycopg.Connection]:
        """One transaction; `unbounded`: its statements may run as long as they take (schema
        migrations, `skillbank migrate`'s import), never cut by `statement_timeout`; `fenced`:
        a memory's write, which commits only if every write lock this thread holds is still
        held (`locks.AdvisoryWriteLock.fence`), else it is rolled back with a clear error."""
        with self.connection() as conn, self.explained():
            if unbounded:
                conn.wait_limit = None
            try:
                with conn.transaction():
                    if unbounded:
                        conn.execute("SET LOCAL statement_timeout = 0")
                    if fenced:
                        for lock in list(self.held()):
                            lock.fence_limits(conn)
                    yield conn
                    if fenced:
                        for lock in list(self.held()):
                            lock.fence(conn)
            finally:
                conn.wait_limit = self.statement_wait

    def execute(self, sql: str, params: Any = None, *, fenced: bool = False) -> list[tuple]:
        """One statement (autocommit); `fenced`: a memory's write (see `transaction`)."""
        if fenced and self.held():
            with self.transaction(fenced=True) as conn:
                cur = conn.execute(sql, params)
                return cur.fetchall() if cur.description else []
        with self.connection() as conn, self.explained():
            cur = conn.execute(sql, params)
            return cur.fetchall() if cur.description else []

    def ping(self) -> None:
        """Raise `StoreUnavailableError` unless PostgreSQL answers within `timeout` (for
        /readyz, which a load balancer waits on: it hung with PostgreSQL frozen, hunt-pg #6)."""
        with self.connection() as conn, self.explained():
            conn.wait_limit = self.timeout
            try:
                conn.execute("SELECT 1")
            finally:
                conn.wait_limit = self.statement_wait

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
