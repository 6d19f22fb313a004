"""The audit log on PostgreSQL: `skillbank.audit.AuditLog` (append, query) over a table.

An event is inserted after its write's own transaction (the memories note every write point
the same way, `skillbank.audit.note`), so PostgreSQL may drop in between: the events an append
could not insert are kept (`UnsentEvents`) and inserted first by the next append, and `flush`
tries again when the store closes (hunt-pg #1, session 28). Inserting the event in the write's
own transaction would need every write point of every memory to pass its events down to the
store; this keeps them all on the one path they share.

An event's time is stamped by the worker that made it, and workers' clocks may disagree: a
worker an hour behind wrote events an hour in the past, which `skillbank audit --since 10m`
left out, and the table's times went backwards (hunt-teamclock #4, session 30). The insert
measures the worker's clock against PostgreSQL's (the one clock every worker shares) and, when
they differ by more than `CLOCK_TOLERANCE`, moves the events' times onto PostgreSQL's clock. An
event kept from a failed append keeps the time it happened (moved by the offset measured when
it is inserted).
"""

from __future__ import annotations

from datetime import datetime, timedelta, timezone
from typing import Any, Iterable

from skillbank.audit import AuditEvent, UnsentEvents
from skillbank.moments import typed_since
from skillbank.store.postgres.db import Database

_FIELDS = ("at", "principal", "role", "face", "namespace", "action", "kind", "id", "trusted")
#: How far this worker's clock may be from PostgreSQL's before event times are moved onto
#: PostgreSQL's (below it the measurement is mostly the round trip; NTP keeps clocks closer).
CLOCK_TOLERANCE = timedelta(seconds=1)
#: Spans back from now counted on PostgreSQL's clock; a longer one (past the years there are)
#: is read as a time by `typed_since`, which clamps it.
SPAN_ON_SERVER = timedelta(days=365 * 1000)


def clock_offset(conn: Any) -> timedelta:
    """PostgreSQL's clock minus this process's, measured on `conn` (zero when within
    `CLOCK_TOLERANCE`)."""
    sent = datetime.now(timezone.utc)
    theirs = conn.execute("SELECT clock_timestamp()").fetchone()[0]
    ours = sent + (datetime.now(timezone.utc) - sent) / 2
    offset = theirs - ours
    return offset if abs(offset) > CLOCK_TOLERANCE else timedelta(0)


def _moved(at: str, offset: timedelta) -> str:
    if not offset:
        return at
    try:
        return (datetime.fromisoformat(at) + offset).isoformat(timespec="microseconds")
    except (TypeError, ValueError, OverflowError):
        return at  # PostgreSQL refuses it as it is, as before


class PostgresAuditLog:
    def __init__(self, db: Database, deployment: str) -> None:
        self.db = db
        self.deployment = deployment
        self.unsent = UnsentEvents()

    def append(self, events: Iterable[AuditEvent]) -> None:
        """Insert `events`, after any an earlier append could not (one transaction)."""
        self.unsent.send(self._insert, events)

    def flush(self) -> int:
        """Insert the events kept from failed appends; returns how many are still unsent."""
        self.unsent.send(self._insert, [])
        return len(self.unsent)

    def _insert(self, events: Iterable[AuditEvent]) -> None:
        events = list(events)
        if not events:
            return
        with self.db.transaction() as conn:
            offset = clock_offset(conn)
            rows = [(self.deployment, _moved(e.at, offset), *(getattr(e, f) for f in _FIELDS[1:]))
                    for e in events]
            with conn.cursor() as cur:
                cur.executemany(
                    "INSERT INTO sb_audit (deployment, at, principal, role, face, namespace, "
                    "action, kind, item_id, trusted) "
                    "VALUES (%s, %s, %s, %s, %s, %s, %s, %s, %s, %s)", rows)

    def blank_ids(self, kind: str, ids: list[str]) -> int:
        """Blank the item ids of `kind`'s events (a forgotten draft's name is made of its
        experiences' words: it must not outlive them here); returns the rows changed."""
        if not ids:
            return 0
        self.unsent.blank_ids(kind, ids)
        with self.db.transaction() as conn:
            cur = conn.execute("UPDATE sb_audit SET item_id = '' WHERE deployment = %s "
                               "AND kind = %s AND item_id = ANY(%s)",
                               (self.deployment, kind, list(ids)))
            return cur.rowcount

    def query(self, *, principal: str | None = None, action: str | None = None,
              since: datetime | None = None, item_id: str | None = None,
              namespace: str | None = None, limit: int | None = None,
              namespaces: Iterable[str] | None = None,
              trusted: bool | None = None) -> list[AuditEvent]:
        """Matching events, oldest first; `limit` keeps the newest `limit` (as the files do).
        Every filter is in the SQL, so `limit` bounds the rows read (hunt-pg #4, session 28)."""
        if limit is not None and limit <= 0:
            return []
        where, params = ["deployment = %s"], [self.deployment]
        for column, value in (("principal", principal), ("action", action),
                              ("item_id", item_id), ("namespace", namespace)):
            if value is not None:
                where.append(f"{column} = %s")
                params.append(value)
        if namespaces is not None:
            where.append("namespace = ANY(%s)")
            params.append(sorted(set(namespaces)))
        if trusted is not None:
            where.append("trusted = %s")
            params.append(trusted)
        if isinstance(since, timedelta) and timedelta(0) <= since <= SPAN_ON_SERVER:
            where.append("at >= clock_timestamp() - %s")  # back from the clock `at` is on
            params.append(since)
        elif since is not None:
            where.append("at >= %s")
            params.append(typed_since(since))  # a naive `since` is local time (hunt-time #3)
        sql = ("SELECT at, principal, role, face, namespace, action, kind, item_id, trusted "
               "FROM sb_audit "
               f"WHERE {' AND '.join(where)} ORDER BY seq DESC")
        if limit is not None:
            sql += " LIMIT %s"
            params.append(limit)
        rows = self.db.execute(sql, params)
        return [AuditEvent(at=row[0].astimezone(timezone.utc).isoformat(timespec="microseconds"),
                           principal=row[1], role=row[2], face=row[3], namespace=row[4],
                           action=row[5], kind=row[6], id=row[7], trusted=row[8])
                for row in reversed(rows)]
