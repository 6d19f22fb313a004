"""Forgotten ids on PostgreSQL: `sb_forgotten`, one row per id (id, kind, time, principal).

What a team deployment forgot, and by whom, never what it said. The experience journal's
`forget` events add their ids here in the same transaction as the delete of the rows
(`experiences.PostgresExperienceLog`); guideline forgets through `add`.
"""

from __future__ import annotations

from datetime import datetime, timezone
from typing import Any

from skillbank.store.postgres.db import Database

INSERT = ("INSERT INTO sb_forgotten (deployment, id, kind, at, principal) "
          "VALUES (%s, %s, %s, %s, %s) ON CONFLICT (deployment, id) DO UPDATE SET "
          "kind = excluded.kind, at = excluded.at, principal = excluded.principal")


def _principal(principal: str | None) -> str:
    if principal is not None:
        return principal
    from skillbank import scope as scopes

    return scopes.current().principal


class PostgresForgottenIds:
    def __init__(self, db: Database, deployment: str) -> None:
        self.db = db
        self.deployment = deployment

    def add(self, item_id: str, kind: str, at: str | datetime,
            principal: str | None = None) -> None:
        when = datetime.fromisoformat(at) if isinstance(at, str) else at
        if when.tzinfo is None:
            when = when.replace(tzinfo=timezone.utc)
        self.db.execute(INSERT, (self.deployment, item_id, kind, when, _principal(principal)),
                        fenced=True)

    def list(self) -> list[dict[str, Any]]:
        rows = self.db.execute("SELECT id, kind, at, principal FROM sb_forgotten "
                               "WHERE deployment = %s ORDER BY at, id", (self.deployment,))
        return [{"id": r[0], "kind": r[1], "at": r[2].astimezone(timezone.utc).isoformat(),
                 "principal": r[3]} for r in rows]
