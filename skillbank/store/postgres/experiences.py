"""The experience journal on PostgreSQL: events in a table, in the order they were committed.

A cursor is the event's sequence number. Sequence numbers are handed out before commit, so two
concurrent appends could commit out of order and a reader between them would skip one; each
append therefore takes a transaction-scoped advisory lock per deployment, which makes commit
order equal sequence order.
"""

from __future__ import annotations

from typing import Any, Iterator

from psycopg.types.json import Jsonb

from skillbank.store.postgres.db import Database, lock_key


class PostgresExperienceLog:
    def __init__(self, db: Database, deployment: str) -> None:
        self.db = db
        self.deployment = deployment

    def append(self, events: list[dict[str, Any]]) -> list[str]:
        if not events:
            return []
        with self.db.transaction() as conn:
            conn.execute("SELECT pg_advisory_xact_lock(%s)",
                         (lock_key("skillbank", self.deployment, "experience-log"),))
            cursors = []
            for event in events:
                row = conn.execute(
                    "INSERT INTO sb_experience_events (deployment, event) VALUES (%s, %s) "
                    "RETURNING seq", (self.deployment, Jsonb(event))).fetchone()
                cursors.append(str(row[0]))
        return cursors

    def read(self, after: str | None = None) -> Iterator[tuple[str, dict[str, Any]]]:
        start = int(after) if after and after.isdigit() else 0
        page = 1000
        while True:
            rows = self.db.execute(
                "SELECT seq, event FROM sb_experience_events WHERE deployment = %s AND seq > %s "
                "ORDER BY seq LIMIT %s", (self.deployment, start, page))
            for seq, event in rows:
                yield str(seq), event
            if len(rows) < page:
                return
            start = rows[-1][0]
