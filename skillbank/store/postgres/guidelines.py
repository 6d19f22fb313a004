"""Guideline records in PostgreSQL: one row per rule, its links in a table of their own.

`sb_guidelines` keeps the whole record (jsonb) and, as columns, what is asked of it: namespace,
topic and status (the pending rows are the proposal queue, with a partial index), the trusted
and untrusted votes apart, `superseded_by`, and a full-text vector (`tsv`) over the rule, when
it applies, its topic, and the tasks and critiques it was learnt from: the keyword search that
answers while the Chroma index cannot. `sb_guideline_links` holds the `supersedes` and `related`
links, one row per link. Every `save` and `delete` is one transaction: the row, its links and
the change notification (LISTEN/NOTIFY, as `PostgresChangeFeed.wrote`) commit together or not
at all, so another worker hears of a write exactly when it is durable, even if the index write
that follows fails.

`rev` (a sequence) orders writes: `stale()` is one indexed query (row count and highest rev).
"""

from __future__ import annotations

import contextlib
import hashlib
import json
from typing import Any, Callable, Iterator, Sequence

import psycopg
from psycopg.types.json import Jsonb

from skillbank.records import Guideline
from skillbank.store.base import LoadedGuidelines, StoreUnavailableError
from skillbank.store.postgres.changes import CHANNEL, MAX_IDS_BYTES
from skillbank.store.postgres.db import SETTING, Database, masked, without_nul

KIND = "guidelines"


def _document(g: Guideline) -> str:
    """The words full-text search looks at (as the index's keyword text does)."""
    parts = [g.text, g.when_to_use or "", g.topic.replace("-", " ")]
    for source in g.sources:
        parts.extend([source.task or "", source.critique or ""])
    return "\n".join(p for p in parts if p)[:20_000]


class PostgresGuidelineRecords:
    """`skillbank.store.base.GuidelineRecords` for one deployment in PostgreSQL."""

    def __init__(self, db: Database, deployment: str, token: str = "") -> None:
        self.db = db
        self.deployment = deployment
        self.token = token  # this worker's change-feed token: its own notes are not news to it
        self._seen: tuple[int, int] | None = None  # (rows, highest rev) at the last load/write
        self._revs: dict[str, int] = {}  # id -> rev of the version this object last read
        self._read: dict[str, tuple[Guideline, str]] = {}  # id -> (record, digest) at that rev

    # Reading -------------------------------------------------------------------------------------
    def _stamp(self, conn: Any = None) -> tuple[int, int]:
        sql = ("SELECT count(*), coalesce(max(rev), 0) FROM sb_guidelines "
               "WHERE deployment = %s")
        if conn is not None:
            row = conn.execute(sql, (self.deployment,)).fetchone()
        else:
            row = self.db.execute(sql, (self.deployment,))[0]
        return int(row[0]), int(row[1])

    def load(self) -> LoadedGuidelines:
        """Every record: ids and revs in one snapshot, then only the rows whose rev this
        object has not read yet (a worker hearing of one write reads one row, not all)."""
        loaded = LoadedGuidelines()
        with self.db.transaction() as conn:  # one snapshot: the rows and their stamp agree
            conn.execute("SET TRANSACTION ISOLATION LEVEL REPEATABLE READ")
            revs = {gid: int(rev) for gid, rev in conn.execute(
                "SELECT id, rev FROM sb_guidelines WHERE deployment = %s", (self.deployment,))}
            wanted = [gid for gid, rev in revs.items() if self._revs.get(gid) != rev
                      or gid not in self._read]
            rows = conn.execute(
                "SELECT id, record, digest, rev FROM sb_guidelines WHERE deployment = %s "
                "AND id = ANY(%s)", (self.deployment, wanted)).fetchall() if wanted else []
        read = {gid: self._read[gid] for gid in revs if gid in self._read and gid not in wanted}
        for gid, record, digest, _ in rows:
            read[gid] = (Guideline.model_validate(record), digest)
        loaded.records = {gid: read[gid] for gid in sorted(read)}
        self._read, self._revs = read, revs
        self._seen = (len(revs), max(revs.values(), default=0))
        return loaded

    def stale(self) -> bool:
        return self._stamp() != self._seen

    def changed(self, guideline: Guideline) -> bool:
        rows = self.db.execute("SELECT rev FROM sb_guidelines WHERE deployment = %s AND id = %s",
                               (self.deployment, guideline.id))
        return not rows or int(rows[0][0]) != self._revs.get(guideline.id)

    def changed_among(self, guidelines: Sequence[Guideline]) -> bool:
        if not guidelines:
            return False
        ids = [g.id for g in guidelines]
        revs = dict(self.db.execute(
            "SELECT id, rev FROM sb_guidelines WHERE deployment = %s AND id = ANY(%s)",
            (self.deployment, ids)))
        return any(gid not in revs or int(revs[gid]) != self._revs.get(gid) for gid in ids)

    def edited_by_hand(self, guideline: Guideline) -> bool:
        return False  # rows: every write is the bank's

    def search_text(self, query: str, limit: int, namespaces: tuple[str, ...] | None = None,
                    topic: str | None = None) -> dict[str, float]:
        """Active rules sharing words with `query` (English stemming), by the share of the
        query's words each holds: an any-word match, since a task rarely repeats a rule. Only
        `namespaces` (None: all) and `topic`, filtered before the limit (as the index's
        `where` is): another namespace's rules must not crowd the caller's own out."""
        lexemes = [row[0] for row in self.db.execute(
            "SELECT DISTINCT lexeme FROM unnest(to_tsvector('english', %s))",
            (without_nul(query),))]
        if not lexemes:
            return {}
        rows = self.db.execute(
            """SELECT id,
                      (SELECT count(*) FROM unnest(%(lexemes)s::text[]) AS l
                        WHERE tsv @@ quote_literal(l)::tsquery) AS matched,
                      ts_rank_cd(tsv, q) AS rank
                 FROM sb_guidelines, to_tsquery('simple', %(q)s) AS q
                WHERE deployment = %(deployment)s AND status = 'active' AND tsv @@ q
                  AND (%(spaces)s::text[] IS NULL OR namespace = ANY(%(spaces)s::text[]))
                  AND (%(topic)s::text IS NULL OR topic = %(topic)s::text)
                ORDER BY matched DESC, rank DESC, id LIMIT %(limit)s""",
            {"lexemes": lexemes, "deployment": self.deployment, "limit": int(limit),
             "spaces": None if namespaces is None else list(namespaces), "topic": topic,
             "q": " | ".join("'" + lx.replace("'", "''") + "'" for lx in lexemes)})
        return {gid: round(int(matched) / len(lexemes), 6) for gid, matched, _ in rows}

    # Writing -------------------------------------------------------------------------------------
    @contextlib.contextmanager
    def _write(self, what: str) -> Iterator[Any]:
        """One transaction; any refusal becomes a clear error saying nothing was written."""
        try:
            with self.db.transaction(fenced=True) as conn:
                yield conn
        except psycopg.Error as exc:
            first = (str(exc).strip().splitlines() or [type(exc).__name__])[0]
            raise StoreUnavailableError(
                f"PostgreSQL at {masked(self.db.url)} refused {what} ({first}); nothing of it "
                f"was written. Check the database named by {SETTING} and its log") from None

    def _announce(self, conn: Any, ids: list[str]) -> None:
        listed = json.dumps(ids, separators=(",", ":"))
        if len(listed) > MAX_IDS_BYTES:
            listed = "*"
        conn.execute("SELECT pg_notify(%s, %s)",  # sent at commit; no row (see changes.py)
                     (CHANNEL, f"{self.deployment}\t{KIND}\t{self.token}\t{listed}"))

    def _after(self, conn: Any, gid: str, written: tuple[Guideline, str, int] | None) -> None:
        """Keep what this object read current with its own write, and its stamp too unless
        someone else wrote meanwhile (then the next `stale()` says so)."""
        rows, top = self._stamp(conn)
        if written is None:
            self._revs.pop(gid, None)
            self._read.pop(gid, None)
        else:
            self._revs[gid] = written[2]
            self._read[gid] = (written[0], written[1])
        if self._seen is not None and (rows, top) == (len(self._revs),
                                                      max(self._revs.values(), default=0)):
            self._seen = (rows, top)

    def save(self, guideline: Guideline, previous: Guideline | None = None, *,
             also: Callable[[Any], Any] | None = None) -> tuple[Guideline, str]:
        """Write the rule; `also(conn)` runs in the same transaction (`skillbank migrate`
        notes what it imported with the rule it wrote: both commit, or neither)."""
        g = guideline.model_copy(update={"path": ""})
        record = g.model_dump(mode="json")
        if "\\u0000" in json.dumps(record):  # PostgreSQL refuses NUL in text and jsonb
            record = without_nul(record)
            g = Guideline.model_validate(record)
        text = json.dumps(record, sort_keys=True, ensure_ascii=False)
        digest = hashlib.sha256(f"{g.id}\0{text}".encode()).hexdigest()
        with self._write(f"the write of guideline {g.id}") as conn:
            rev = conn.execute(
                """INSERT INTO sb_guidelines
                       (deployment, id, namespace, topic, status, helpful, harmful,
                        untrusted_helpful, untrusted_harmful, superseded_by, record, digest,
                        document, rev, updated)
                   VALUES (%s, %s, %s, %s, %s, %s, %s, %s, %s, %s, %s, %s, %s,
                           nextval('sb_guidelines_rev'), now())
                   ON CONFLICT (deployment, id) DO UPDATE SET
                       namespace = EXCLUDED.namespace, topic = EXCLUDED.topic,
                       status = EXCLUDED.status, helpful = EXCLUDED.helpful,
                       harmful = EXCLUDED.harmful,
                       untrusted_helpful = EXCLUDED.untrusted_helpful,
                       untrusted_harmful = EXCLUDED.untrusted_harmful,
                       superseded_by = EXCLUDED.superseded_by, record = EXCLUDED.record,
                       digest = EXCLUDED.digest, document = EXCLUDED.document,
                       rev = EXCLUDED.rev, updated = EXCLUDED.updated
                   RETURNING rev""",
                (self.deployment, g.id, g.namespace, g.topic, g.status, g.helpful, g.harmful,
                 g.untrusted_helpful, g.untrusted_harmful, g.superseded_by, Jsonb(record),
                 digest, _document(g))).fetchone()[0]
            conn.execute("DELETE FROM sb_guideline_links WHERE deployment = %s AND id = %s",
                         (self.deployment, g.id))
            links = [("supersedes", other) for other in dict.fromkeys(g.supersedes)] + [
                ("related", other) for other in dict.fromkeys(g.related)]
            if links:
                with conn.cursor() as cur:
                    cur.executemany(
                        "INSERT INTO sb_guideline_links (deployment, id, link, other) "
                        "VALUES (%s, %s, %s, %s) ON CONFLICT DO NOTHING",
                        [(self.deployment, g.id, link, other) for link, other in links])
            if also is not None:
                also(conn)
            self._announce(conn, [g.id])
            self._after(conn, g.id, (g, digest, int(rev)))
        return g, digest

    def delete(self, guideline: Guideline) -> None:
        """Remove the row (its text and full-text vector), its links, and note the id in
        `sb_forgotten` in the same transaction: a worker killed right after cannot leave a
        rule gone with no record that it was forgotten (which `skillbank migrate` reads, so
        a rerun never brings it back). The forget's own note then only updates that row."""
        from skillbank.store.postgres.forgotten import INSERT, _principal

        with self._write(f"the removal of guideline {guideline.id}") as conn:
            conn.execute(INSERT.split(" ON CONFLICT")[0] + " ON CONFLICT DO NOTHING",
                         (self.deployment, guideline.id, "guideline", "now", _principal(None)))
            conn.execute("DELETE FROM sb_guideline_links WHERE deployment = %s AND id = %s",
                         (self.deployment, guideline.id))
            conn.execute("DELETE FROM sb_guidelines WHERE deployment = %s AND id = %s",
                         (self.deployment, guideline.id))
            self._announce(conn, [guideline.id])
            self._after(conn, guideline.id, None)

    # For operators and tests -------------------------------------------------------------------
    def pending(self) -> list[str]:
        """The proposal queue: ids of pending rules, oldest first."""
        return [row[0] for row in self.db.execute(
            "SELECT id FROM sb_guidelines WHERE deployment = %s AND status = 'pending' "
            "ORDER BY (record->>'created'), id", (self.deployment,))]

    def links(self, gid: str) -> list[tuple[str, str]]:
        return [(row[0], row[1]) for row in self.db.execute(
            "SELECT link, other FROM sb_guideline_links WHERE deployment = %s AND id = %s "
            "ORDER BY link, other", (self.deployment, gid))]
