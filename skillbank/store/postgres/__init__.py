"""The PostgreSQL column (team mode): the store every worker of a deployment shares.

psycopg 3 with a connection pool (`db.Database`); versioned migrations run on open
(`migrations`); a session advisory lock for writers (`locks`); LISTEN/NOTIFY for the change
feed (`changes`); usage counters, the experience journal and the audit log as tables. Rows
carry their deployment, so several deployments can share one database without seeing each
other's rows. Imported only in team mode (`skillbank.store.open_store` with a database URL):
psycopg is the optional extra `skillbank[team]`.
"""

from __future__ import annotations

from typing import Any

try:
    import psycopg  # noqa: F401
    import psycopg_pool  # noqa: F401
except ImportError as exc:  # pragma: no cover - depends on the install
    from skillbank.store.base import StoreUnavailableError

    raise StoreUnavailableError(
        "team mode stores its memory in PostgreSQL and needs psycopg: "
        "pip install -e '.[team]' in your skillbank clone (it is on no package index)") from exc

from skillbank.store.base import StoreUnavailableError
from skillbank.store.postgres.audit import PostgresAuditLog
from skillbank.store.postgres.changes import PostgresChangeFeed
from skillbank.store.postgres.db import Database
from skillbank.store.postgres.drafts import PostgresDrafts
from skillbank.store.postgres.experiences import PostgresExperienceLog
from skillbank.store.postgres.forgotten import PostgresForgottenIds
from skillbank.store.postgres.guidelines import PostgresGuidelineRecords
from skillbank.store.postgres.locks import AdvisoryWriteLock
from skillbank.store.postgres.migrations import migrate, schema_version
from skillbank.store.postgres.usage import PostgresUsageCounters


class PostgresStore:
    """One deployment's store in PostgreSQL (`skillbank.store.base.Store`)."""

    def __init__(self, url: str, *, deployment: str = "default", min_size: int = 1,
                 max_size: int = 8, timeout: float = 5.0, statement_timeout: float | None = 60.0,
                 migrate_schema: bool = True) -> None:
        self.deployment = deployment
        self.db = Database(url, min_size=min_size, max_size=max_size, timeout=timeout,
                           statement_timeout=statement_timeout)
        self._feed: PostgresChangeFeed | None = None
        self._audit: PostgresAuditLog | None = None
        self._usage: dict[str, PostgresUsageCounters] = {}
        try:
            self.applied = migrate(self.db) if migrate_schema else []
        except BaseException:
            self.db.close()
            raise

    def migrate(self) -> list[int]:
        """Apply missing migrations (a no-op when the schema is current)."""
        return migrate(self.db)

    @property
    def schema_version(self) -> int:
        return schema_version(self.db)

    def change_feed(self) -> PostgresChangeFeed:
        if self._feed is None:
            self._feed = PostgresChangeFeed(self.db, self.deployment)
        return self._feed

    def write_lock(self, timeout: float = 60.0, name: str = "write") -> AdvisoryWriteLock:
        """The deployment's write lock `name`: "write" (the bank's), or one memory's own (so a
        guideline write does not queue behind every experience write, docs/team.md)."""
        return AdvisoryWriteLock(self.db, self.deployment, timeout=timeout, name=name)

    def usage(self, memory: str) -> PostgresUsageCounters:
        if memory not in self._usage:
            self._usage[memory] = PostgresUsageCounters(self.db, self.deployment, memory)
        return self._usage[memory]

    def experiences(self) -> PostgresExperienceLog:
        return PostgresExperienceLog(self.db, self.deployment)

    def audit(self) -> PostgresAuditLog:
        """The deployment's audit log: one per store, so the events an append could not
        insert (kept by the log) are inserted by the next, or tried again at `close`."""
        if self._audit is None:
            self._audit = PostgresAuditLog(self.db, self.deployment)
        return self._audit

    def guidelines(self) -> PostgresGuidelineRecords:
        return PostgresGuidelineRecords(self.db, self.deployment, self.change_feed().token)

    def drafts(self, folder: Any) -> PostgresDrafts:
        """Skill drafts in tables, with this worker's working copy in `folder`."""
        return PostgresDrafts(self.db, self.deployment, folder)

    def forgotten(self) -> PostgresForgottenIds:
        return PostgresForgottenIds(self.db, self.deployment)

    def shared_secret(self, name: str) -> bytes:
        """The deployment's secret `name` (32 random bytes, hex), made by whichever worker asks
        first: the insert that loses the race changes nothing and every worker reads the one
        row, so all of them hold the same key (the MCP requestState key: hunt-sampling #2,
        session 36)."""
        import secrets

        self.db.execute("INSERT INTO sb_secrets (deployment, name, value) VALUES (%s, %s, %s) "
                        "ON CONFLICT (deployment, name) DO NOTHING",
                        (self.deployment, name, secrets.token_hex(32)))
        rows = self.db.execute("SELECT value FROM sb_secrets WHERE deployment = %s AND name = %s",
                               (self.deployment, name))
        return str(rows[0][0]).encode("ascii")

    def ping(self) -> None:
        """Raise `StoreUnavailableError` unless PostgreSQL answers in time (for /readyz)."""
        self.db.ping()

    def identity(self) -> dict[str, Any]:
        """Which PostgreSQL database this is (`skillbank.team.index_claim`: a deployment's
        Chroma database is one database's): its cluster's system identifier (kept by a
        failover to a streaming replica; None where the role may not read it), the database's
        oid (kept by `pg_restore --clean` into it and by a rename) and name, and the address
        and port the server answers on (as it says: a multi-host URL, `host1,host2`, made the
        URL's own port unreadable and every open failed; review 2, session 35)."""
        oid, name, address, port = self.db.execute(
            "SELECT oid, datname, host(inet_server_addr()), inet_server_port() "
            "FROM pg_database WHERE datname = current_database()")[0]
        try:
            system = str(self.db.execute(
                "SELECT system_identifier FROM pg_control_system()")[0][0])
        except StoreUnavailableError as exc:  # revoked by a hosting provider: the oid and name
            if "permission denied" not in str(exc):
                raise
            system = None
        server = f"{address}:{port}" if address else "a local socket"
        return {"system": system, "oid": int(oid), "name": str(name), "server": server}

    def close(self) -> None:
        if self._audit is not None:
            self._flush_audit()
        if self._feed is not None:
            self._feed.close()
        self.db.close()

    def _flush_audit(self) -> None:
        """Insert the audit events kept from failed appends before the pool closes; name in
        the log those that still cannot be (hunt-pg #1, session 28: never lost silently)."""
        import logging

        from skillbank.audit import as_lines

        try:
            self._audit.flush()
        except Exception as exc:  # noqa: BLE001 - closing must finish; the events are logged
            logging.getLogger("skillbank.audit").error(
                "skillbank: closing with %d audit events PostgreSQL did not take (%s); they "
                "are not in sb_audit: %s", len(self._audit.unsent), exc,
                as_lines(self._audit.unsent.held()))

    def __enter__(self) -> "PostgresStore":
        return self

    def __exit__(self, *exc: Any) -> None:
        self.close()
