"""Usage counters on PostgreSQL: one row per item (and trust), incremented in place.

The files column appends events and sums them at open; here every worker increments the same
row (`INSERT … ON CONFLICT DO UPDATE`), so a count is durable when `record` returns and every
worker reads the same totals. Untrusted signals get their own row until `accept` folds them
into the trusted one (one transaction), as in `skillbank.usage.UsageLog`. An outsider's net
vote per item is a row of `sb_usage_votes` (`skillbank.outside_votes`); the trusted row holds
only its sign, moved in the same transaction. An untrusted vote's net per principal is a row
of `sb_usage_untrusted_votes`; `accept` folds each in as that principal's outside vote
(`outside_votes.merge`), and the votes of the untrusted row no such row accounts for (counted
before principals were kept, an import's counts) as one, `outside_votes.UNNAMED`. An outsider's
uses count once per item, as his votes (a row of `sb_usage_users` the first time), and so do an
untrusted principal's (that row with `trusted` false until accepted). `move` (a renamed skill)
re-keys an item's rows to its new id and `reset` (a deleted one) drops them, as
`UsageLog.move`/`reset` do.
"""

from __future__ import annotations

import time
from datetime import datetime
from typing import Any

from skillbank import outside_votes
from skillbank.records import Usage, utcnow
from skillbank.store.postgres.db import Database, lock_key

_COLUMNS = "uses, successes, failures, last_used"
#: Add counts to an item's row (made when missing): every count is an increment in place.
_ADD = f"""INSERT INTO sb_usage (deployment, memory, item_id, trusted, {_COLUMNS})
           VALUES (%s, %s, %s, %s, %s, %s, %s, %s)
           ON CONFLICT (deployment, memory, item_id, trusted) DO UPDATE SET
               uses = sb_usage.uses + excluded.uses,
               successes = sb_usage.successes + excluded.successes,
               failures = sb_usage.failures + excluded.failures,
               last_used = greatest(sb_usage.last_used, excluded.last_used)"""
#: An outsider's vote moves the trusted row by its net's sign, never below zero.
_ADD_VOTE = f"""INSERT INTO sb_usage (deployment, memory, item_id, trusted, {_COLUMNS})
                VALUES (%s, %s, %s, true, %s, greatest(0, %s), greatest(0, %s), %s)
                ON CONFLICT (deployment, memory, item_id, trusted) DO UPDATE SET
                    uses = sb_usage.uses + excluded.uses,
                    successes = greatest(0, sb_usage.successes + %s),
                    failures = greatest(0, sb_usage.failures + %s),
                    last_used = greatest(sb_usage.last_used, excluded.last_used)
                RETURNING {_COLUMNS}"""
_VOTES = "FROM sb_usage_votes WHERE deployment = %s AND memory = %s AND item_id = %s"
_VOTERS = ("FROM sb_usage_untrusted_votes WHERE deployment = %s AND memory = %s "
           "AND item_id = %s")
_TABLES = ("sb_usage", "sb_usage_votes", "sb_usage_untrusted_votes", "sb_usage_users")
#: An outsider's first use of an item: the row that says it is counted (RETURNING: it is now).
_FIRST_USE = ("INSERT INTO sb_usage_users (deployment, memory, item_id, principal, trusted) "
              "VALUES (%s, %s, %s, %s, %s) ON CONFLICT (deployment, memory, item_id, principal) "
              "DO UPDATE SET trusted = true WHERE excluded.trusted AND NOT sb_usage_users.trusted "
              "RETURNING 1")  # (trusted: his first trusted use, an untrusted one pending or not)
#: How stale the counts behind the ranking prior may be (seconds).
PRIOR_TTL = 1.0


def _usage(row: Any) -> Usage:
    return Usage() if row is None else Usage(uses=int(row[0]), successes=int(row[1]),
                                             failures=int(row[2]), last_used=row[3])


class PostgresUsageCounters:
    def __init__(self, db: Database, deployment: str, memory: str) -> None:
        self.db = db
        self.key = (deployment, memory)
        self._prior_cache: tuple[float, dict[str, Usage]] | None = None

    def record(self, item_id: str, *, use: int = 1, ok: bool | None = None,
               trusted: bool = True, principal: str | None = None,
               outsider: str | None = None) -> Usage:
        at: datetime = utcnow()
        values = (*self.key, item_id, trusted, int(use), int(ok is True), int(ok is False), at)
        if trusted and outsider and ok is None:  # counted once per item (`UsageLog.record`)
            with self.db.transaction() as conn:
                first = int(use) > 0 and conn.execute(
                    _FIRST_USE, (*self.key, item_id, outsider, True)).fetchone() is not None
                row = conn.execute(f"{_ADD} RETURNING {_COLUMNS}",
                                   (*values[:4], int(first), *values[5:])).fetchone()
            self._prior_cache = None
            return _usage(row)
        if trusted or (ok is None and not principal):
            rows = self.db.execute(f"{_ADD} RETURNING {_COLUMNS}", values)
            self._prior_cache = None
            return _usage(rows[0])
        with self.db.transaction() as conn:  # untrusted: its use once per principal
            if ok is not None:  # a vote, under the lock `accept` holds: an accept between its
                conn.execute("SELECT pg_advisory_xact_lock(%s)",  # statements took its net
                             (lock_key("usage-vote", *self.key, item_id),))  # (review1 #6)
            uses = int(use)
            if principal and uses > 0:  # (`UsageLog._first_untrusted_use`)
                uses = int(conn.execute(_FIRST_USE, (*self.key, item_id, principal, False)
                                        ).fetchone() is not None)
            row = conn.execute(f"{_ADD} RETURNING {_COLUMNS}",
                               (*values[:4], uses, *values[5:])).fetchone()
            if ok is None:
                return _usage(row)
            conn.execute(
                "INSERT INTO sb_usage_untrusted_votes (deployment, memory, item_id, principal, "
                "net) VALUES (%s, %s, %s, %s, %s) ON CONFLICT (deployment, memory, item_id, "
                "principal) DO UPDATE SET net = sb_usage_untrusted_votes.net + excluded.net",
                (*self.key, item_id, principal or outside_votes.UNNAMED, 1 if ok else -1))
        return _usage(row)

    def vote(self, item_id: str, principal: str, ok: bool, *, use: int = 0) -> Usage:
        """An outsider's rating, as `UsageLog.vote`: one transaction, under a lock on the item
        (two workers taking one principal's votes at once must not both count a first one)."""
        with self.db.transaction() as conn:
            conn.execute("SELECT pg_advisory_xact_lock(%s)",
                         (lock_key("usage-vote", *self.key, item_id),))
            votes = {row[0]: int(row[1]) for row in
                     conn.execute(f"SELECT principal, net {_VOTES}", (*self.key, item_id))}
            moved = outside_votes.step(votes, principal, ok, item_id)
            up, down = outside_votes.counted(*moved) if moved else (0, 0)
            if moved and moved[1]:
                conn.execute(
                    "INSERT INTO sb_usage_votes (deployment, memory, item_id, principal, net) "
                    "VALUES (%s, %s, %s, %s, %s) ON CONFLICT (deployment, memory, item_id, "
                    "principal) DO UPDATE SET net = excluded.net",
                    (*self.key, item_id, principal, moved[1]))
            elif moved:
                conn.execute(f"DELETE {_VOTES} AND principal = %s",
                             (*self.key, item_id, principal))
            first = int(use) > 0 and conn.execute(
                _FIRST_USE, (*self.key, item_id, principal, True)).fetchone() is not None
            row = conn.execute(_ADD_VOTE, (*self.key, item_id, int(first), up, down, utcnow(),
                                           up, down)).fetchone()
        self._prior_cache = None
        return _usage(row)

    def outside(self, item_id: str) -> dict[str, int]:
        """The outsiders' nets on an item (principal -> net vote; each counts once)."""
        rows = self.db.execute(f"SELECT principal, net {_VOTES}", (*self.key, item_id))
        return {row[0]: int(row[1]) for row in rows}

    def add(self, item_id: str, counts: Usage, *, trusted: bool = True) -> None:
        """Add counts kept elsewhere (an imported record's usage), as `UsageLog.add`: trusted,
        with the outsiders' nets behind them, under the item's vote lock."""
        nets = outside_votes.nets(counts.outside) if trusted else {}
        with self.db.transaction() as conn:
            conn.execute(_ADD, (*self.key, item_id, trusted, int(counts.uses),
                                int(counts.successes), int(counts.failures),
                                counts.last_used or utcnow()))
            if nets:
                conn.execute("SELECT pg_advisory_xact_lock(%s)",
                             (lock_key("usage-vote", *self.key, item_id),))
                held = {row[0]: int(row[1]) for row in
                        conn.execute(f"SELECT principal, net {_VOTES}", (*self.key, item_id))}
                for principal, net in nets.items():
                    if principal not in held and len(held) >= outside_votes.MAX_OUTSIDE_VOTERS:
                        continue
                    held[principal] = total = outside_votes.clamp(held.get(principal, 0) + net)
                    if total:
                        conn.execute(
                            "INSERT INTO sb_usage_votes (deployment, memory, item_id, "
                            "principal, net) VALUES (%s, %s, %s, %s, %s) ON CONFLICT "
                            "(deployment, memory, item_id, principal) DO UPDATE SET "
                            "net = excluded.net", (*self.key, item_id, principal, total))
                    else:
                        conn.execute(f"DELETE {_VOTES} AND principal = %s",
                                     (*self.key, item_id, principal))
        self._prior_cache = None

    def _get(self, item_id: str, trusted: bool) -> Usage:
        rows = self.db.execute(
            f"SELECT {_COLUMNS} FROM sb_usage WHERE deployment = %s AND memory = %s "
            "AND item_id = %s AND trusted = %s", (*self.key, item_id, trusted))
        return _usage(rows[0] if rows else None)

    def get(self, item_id: str) -> Usage:
        return self._get(item_id, True)

    def get_many(self, item_ids: list[str]) -> dict[str, Usage]:
        """`get` of many items in one query (a recall ranks every candidate by its counts)."""
        rows = self.db.execute(
            f"SELECT item_id, {_COLUMNS} FROM sb_usage WHERE deployment = %s AND memory = %s "
            "AND item_id = ANY(%s) AND trusted", (*self.key, list(item_ids)))
        found = {row[0]: _usage(row[1:]) for row in rows}
        return {item_id: found.get(item_id) or Usage() for item_id in item_ids}

    def untrusted(self, item_id: str) -> Usage:
        """As `UsageLog.untrusted`: `outside` holds who cast the votes (principal -> net)."""
        usage = self._get(item_id, False)
        rows = self.db.execute(f"SELECT principal, net {_VOTERS} AND net <> 0",
                               (*self.key, item_id))
        usage.outside = {row[0]: int(row[1]) for row in rows}
        return usage

    def all(self) -> dict[str, Usage]:
        rows = self.db.execute(
            f"SELECT item_id, {_COLUMNS} FROM sb_usage WHERE deployment = %s AND memory = %s "
            "AND trusted", self.key)
        return {row[0]: _usage(row[1:]) for row in rows}

    def accept(self, item_id: str) -> Usage:
        """As `UsageLog.accept`: the untrusted uses join the trusted row, and each principal's
        votes count as his outside vote (its net's sign), in one transaction under the item's
        vote lock, which an untrusted vote takes too: one committed between its statements
        lost its net, and the next accept counted it as the unnamed principal's (review1 #6)."""
        self._prior_cache = None
        with self.db.transaction() as conn:
            conn.execute("SELECT pg_advisory_xact_lock(%s)",
                         (lock_key("usage-vote", *self.key, item_id),))
            extra = conn.execute(
                f"DELETE FROM sb_usage WHERE deployment = %s AND memory = %s AND item_id = %s "
                f"AND NOT trusted RETURNING {_COLUMNS}", (*self.key, item_id)).fetchone()
            voters = {row[0]: int(row[1]) for row in conn.execute(
                f"DELETE {_VOTERS} RETURNING principal, net", (*self.key, item_id))}
            conn.execute("UPDATE sb_usage_users SET trusted = true WHERE deployment = %s AND "
                         "memory = %s AND item_id = %s AND NOT trusted", (*self.key, item_id))
            if extra is None:
                row = conn.execute(
                    f"SELECT {_COLUMNS} FROM sb_usage WHERE deployment = %s AND memory = %s "
                    "AND item_id = %s AND trusted", (*self.key, item_id)).fetchone()
                return _usage(row)
            unnamed = int(extra[1]) - int(extra[2]) - sum(voters.values())  # kept before
            voters[outside_votes.UNNAMED] = voters.get(outside_votes.UNNAMED, 0) + unnamed
            nets = {row[0]: int(row[1]) for row in
                    conn.execute(f"SELECT principal, net {_VOTES}", (*self.key, item_id))}
            up = down = 0
            for principal, net in voters.items():
                moved = outside_votes.merge(nets, principal, net, item_id)
                if not moved:
                    continue
                more, less = outside_votes.counted(*moved)
                up, down = up + more, down + less
                if moved[1]:
                    conn.execute(
                        "INSERT INTO sb_usage_votes (deployment, memory, item_id, principal, "
                        "net) VALUES (%s, %s, %s, %s, %s) ON CONFLICT (deployment, memory, "
                        "item_id, principal) DO UPDATE SET net = excluded.net",
                        (*self.key, item_id, principal, moved[1]))
                else:
                    conn.execute(f"DELETE {_VOTES} AND principal = %s",
                                 (*self.key, item_id, principal))
            row = conn.execute(_ADD_VOTE, (*self.key, item_id, int(extra[0]), up, down,
                                           extra[3], up, down)).fetchone()
            return _usage(row)

    def move(self, item_id: str, new_id: str) -> None:
        """An item now has the id `new_id`: its rows (counts, untrusted counts, outsiders'
        nets) are re-keyed, replacing `new_id`'s, in one transaction (nothing happens when
        `item_id` has no rows, as in `UsageLog.move`)."""
        if item_id == new_id:
            return
        where = "WHERE deployment = %s AND memory = %s AND item_id = %s"
        with self.db.transaction() as conn:
            if not any(conn.execute(f"SELECT 1 FROM {table} {where} LIMIT 1",
                                    (*self.key, item_id)).fetchone()
                       for table in _TABLES):
                return  # nothing to carry (another worker moved it already)
            for table in _TABLES:
                conn.execute(f"DELETE FROM {table} {where}", (*self.key, new_id))
                conn.execute(f"UPDATE {table} SET item_id = %s {where}",
                             (new_id, *self.key, item_id))
        self._prior_cache = None

    def reset(self, item_id: str) -> None:
        """Drop every row of `item_id`: the next item of that id starts at zero."""
        with self.db.transaction() as conn:
            for table in _TABLES:
                conn.execute(f"DELETE FROM {table} WHERE deployment = %s AND memory = %s "
                             "AND item_id = %s", (*self.key, item_id))
        self._prior_cache = None

    def prior(self, item_id: str, scale: float = 0.004) -> float:
        """The same rank bonus as `skillbank.usage.UsageLog.prior`.

        Ranking asks for every candidate of every search, so it reads from a copy of all
        trusted counts refreshed at most `PRIOR_TTL` seconds old (and after this worker's own
        writes): one query a second instead of one per hit. `get` stays exact."""
        now = time.monotonic()
        if self._prior_cache is None or now - self._prior_cache[0] > PRIOR_TTL:
            self._prior_cache = (now, self.all())
        usage = self._prior_cache[1].get(item_id) or Usage()
        judged = usage.successes + usage.failures
        if judged == 0:
            return 0.0
        confidence = judged / (judged + 3)
        return scale * (usage.successes / judged - 0.5) * 2 * confidence

    def flush(self) -> None:
        """Nothing is buffered: every count is written through."""

    @property
    def buffered(self) -> int:
        return 0
