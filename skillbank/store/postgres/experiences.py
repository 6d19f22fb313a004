"""The experience journal on PostgreSQL: events in a table, and each record's current state.

`sb_experience_events` is the journal itself: events in the order they were committed, which
the index is replayed from (`events_from`, `sync`). A cursor (and a position) is the event's
sequence number. Sequence numbers are handed out before commit, so two concurrent appends could
commit out of order and a reader between them would skip one; each append therefore takes a
transaction-scoped advisory lock per deployment, which makes commit order equal sequence order.

`sb_experiences` holds each record as it stands now (its last `add`, status and duplicate
count), kept in the same transaction as the events: reading a recalled record is one primary-key
lookup, and while the index (Chroma) does not answer, recall falls back to PostgreSQL's own
full-text search over it (`search`, a GIN index on a `tsvector`).

A conversation's later turn is an `update` event (`skillbank.store.deltas`): what changed since
the version it extends. Its row in `sb_experience_events` names the record (`record_id`), and
the same transaction folds it into the record's row, so a read stays one lookup; only the
event log shrinks from a whole record a turn (quadratic in a long conversation) to the delta.

Forget means gone here too: a `forget` event deletes the forgotten records' rows and their
`add` events in its own transaction (only the ids-only `forget` event stays). What PostgreSQL
itself still holds after that — dead tuples until VACUUM, the WAL until it is recycled, and
backups taken before — is the operator's to purge (docs/team.md).
"""

from __future__ import annotations

import json
import re
from typing import Any, Iterator

from psycopg.types.json import Jsonb

from skillbank.store.postgres.db import Database, lock_key, without_nul

Parsed = tuple[dict[str, Any], str, str]
#: The text-search configuration of the fallback search (English stemming, stop words).
TS_CONFIG = "english"
_WORD = re.compile(r"[^\W_]+", re.UNICODE)


def _digest(event: dict[str, Any]) -> str:
    from skillbank.store.files.experiences import line_digest

    return line_digest(json.dumps(event, ensure_ascii=False, separators=(",", ":")))


def searchable(record: dict[str, Any]) -> str:
    """What the full-text search sees of a record: what the index's keyword side sees."""
    lessons = record.get("lessons") or []
    parts = [record.get("task"), record.get("when_to_use"), record.get("feedback")]
    parts += [l.get("text") if isinstance(l, dict) else l for l in lessons]
    parts += [" ".join(str(t) for t in record.get("tags") or []), record.get("outcome")]
    return "\n".join(str(p) for p in parts if p)


def _lexemes(vector: str) -> set[str]:
    """The lexemes of a `tsvector` in its text form ("'plan':4 'queri':3")."""
    return set(re.findall(r"'((?:[^']|'')*)'", vector or ""))


def _kind(item_id: str, number: int) -> str:
    return "lesson" if item_id.startswith("lsn-") else "experience"


def _targets(event: dict[str, Any]) -> list[str]:
    ids = [event.get("id"), *(event.get("lessons") or [])]
    return [i for i in ids if isinstance(i, str)]


class PostgresExperienceLog:
    def __init__(self, db: Database, deployment: str) -> None:
        self.db = db
        self.deployment = deployment

    # The event log (the storage interface's first two methods) -----------------------------------
    def append(self, events: list[dict[str, Any]]) -> list[str]:
        parsed, _, _ = self.write(events)
        return [loc for _, loc, _ in parsed]

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

    # The journal's operations ---------------------------------------------------------------------
    def positions(self) -> dict[str, int]:
        rows = self.db.execute("SELECT max(seq) FROM sb_experience_events WHERE deployment = %s",
                               (self.deployment,))
        return {"seq": int(rows[0][0])} if rows and rows[0][0] is not None else {}

    def write(self, events: list[dict[str, Any]], max_line_bytes: int | None = None
              ) -> tuple[list[Parsed], dict[str, int], dict[str, int]]:
        """Insert events and fold them into the records table, in one transaction."""
        if not events:
            return [], self.positions(), self.positions()
        from skillbank.errors import InvalidInputError

        lines = [json.dumps(e, ensure_ascii=False, separators=(",", ":")) for e in events]
        if max_line_bytes is not None and any(len(l.encode("utf-8")) > max_line_bytes
                                              for l in lines):
            raise InvalidInputError("record is too large to store")
        parsed: list[Parsed] = []
        with self.db.transaction(fenced=True) as conn:
            conn.execute("SELECT pg_advisory_xact_lock(%s)",
                         (lock_key("skillbank", self.deployment, "experience-log"),))
            last = conn.execute("SELECT max(seq) FROM sb_experience_events WHERE deployment = %s",
                                (self.deployment,)).fetchone()[0]
            before = {"seq": int(last)} if last is not None else {}
            for event, line in zip(events, lines):
                parsed.append(self._insert(conn, event, line))
        return parsed, before, {"seq": int(parsed[-1][1])}

    def _insert(self, conn: Any, event: dict[str, Any], line: str) -> Parsed:
        from skillbank.store.files.experiences import line_digest

        if "\\u0000" in line:  # PostgreSQL refuses NUL in text and jsonb
            event = without_nul(event)
            line = json.dumps(event, ensure_ascii=False, separators=(",", ":"))
        from skillbank.store.deltas import updated_id

        op = event.get("op")
        record = event.get("record") if op == "add" else None
        record_id = record.get("id") if isinstance(record, dict) else updated_id(event)
        digest = line_digest(line)
        seq = conn.execute(
            "INSERT INTO sb_experience_events (deployment, event, record_id, digest) "
            "VALUES (%s, %s, %s, %s) RETURNING seq",
            (self.deployment, Jsonb(event), record_id if isinstance(record_id, str) else None,
             digest)).fetchone()[0]
        loc = str(seq)
        key = (self.deployment,)
        if op == "update" and isinstance(record_id, str):
            self._fold_update(conn, record_id, event, loc, digest)
        elif isinstance(record_id, str) and isinstance(record, dict):
            status = record.get("status") if record.get("status") in ("pending", "retired") \
                else "active"
            conn.execute(
                f"""INSERT INTO sb_experiences (deployment, id, record, loc, digest, status,
                        duplicates, search)
                    VALUES (%s, %s, %s, %s, %s, %s, %s, to_tsvector('{TS_CONFIG}', %s))
                    ON CONFLICT (deployment, id) DO UPDATE SET record = excluded.record,
                        loc = excluded.loc, digest = excluded.digest, search = excluded.search""",
                (*key, record_id, Jsonb(record), loc, digest, status,
                 int(record.get("duplicates") or 0), searchable(record)))
        elif op == "forget":
            from skillbank.store.postgres.forgotten import INSERT, _principal

            targets = _targets(event)
            self._drop_from_parents(conn, targets)
            at = event.get("at") if isinstance(event.get("at"), str) else None
            for number, target in enumerate(targets):  # ids only: never what they said
                conn.execute(INSERT, (*key, target, _kind(target, number), at or "now",
                                      _principal(None)))
            conn.execute("DELETE FROM sb_experiences WHERE deployment = %s AND id = ANY(%s)",
                         (*key, targets))
            conn.execute("DELETE FROM sb_experience_events WHERE deployment = %s "
                         "AND record_id = ANY(%s)", (*key, targets))
        elif op in ("approve", "restore", "retire"):
            targets = _targets(event) if op == "approve" else _targets(event)[:1]
            conn.execute("UPDATE sb_experiences SET status = %s WHERE deployment = %s "
                         "AND id = ANY(%s)",
                         ("retired" if op == "retire" else "active", *key, targets))
        elif op == "duplicate" and isinstance(event.get("of"), str):
            try:
                count = int(event.get("count", 1))
            except (TypeError, ValueError):
                count = 1
            conn.execute("UPDATE sb_experiences SET duplicates = greatest(duplicates, %s) "
                         "WHERE deployment = %s AND id = %s", (count, *key, event["of"]))
        return event, loc, digest

    def _fold_update(self, conn: Any, record_id: str, event: dict[str, Any], loc: str,
                     digest: str) -> None:
        """Fold an `update` event into its record's row (in the event's transaction)."""
        from skillbank.store.deltas import Version, extend, line_bytes

        row = conn.execute("SELECT record, loc, digest FROM sb_experiences WHERE deployment = %s "
                           "AND id = %s FOR UPDATE", (self.deployment, record_id)).fetchone()
        if row is None:
            return  # forgotten meanwhile: nothing to update, and nothing comes back
        base = Version(row[0], row[1], row[2]) if row[1] == event.get("base") \
            else self._version_in(conn, record_id, str(event.get("base")))
        version = extend(base, event, loc, line_bytes(event), digest) if base else None
        if version is None:
            return  # its base is not this record's (a damaged log): the row stays as it was
        conn.execute(
            f"UPDATE sb_experiences SET record = %s, loc = %s, digest = %s, "
            f"search = to_tsvector('{TS_CONFIG}', %s) WHERE deployment = %s AND id = %s",
            (Jsonb(version.record), loc, version.digest, searchable(version.record),
             self.deployment, record_id))

    def load_version(self, record_id: str, loc: str) -> Any:
        """`record_id`'s version at `loc` (a sequence number), its latest when `loc` is not
        one of its versions; None when the log does not hold it."""
        with self.db.transaction() as conn:
            version = self._version_in(conn, record_id, loc) if loc.isdigit() else None
            if version is None:
                row = conn.execute("SELECT loc FROM sb_experiences WHERE deployment = %s "
                                   "AND id = %s", (self.deployment, record_id)).fetchone()
                version = self._version_in(conn, record_id, row[0]) if row else None
        return version

    def _version_in(self, conn: Any, record_id: str, loc: str) -> Any:
        """The version at `loc`, read with one query for the chain (the record's latest events
        up to it; a link further back is read on its own)."""
        from skillbank.store.deltas import MAX_DEPTH, line_bytes, resolve

        if not loc.isdigit():
            return None
        rows = conn.execute(
            "SELECT seq, event, digest FROM sb_experience_events WHERE deployment = %s "
            "AND record_id = %s AND seq <= %s ORDER BY seq DESC LIMIT %s",
            (self.deployment, record_id, int(loc), MAX_DEPTH + 2)).fetchall()
        known = {str(seq): (event, digest) for seq, event, digest in rows}

        def read(at: str) -> tuple[dict[str, Any], int, str] | None:
            found = known.get(at)
            if found is None and at.isdigit():
                row = conn.execute("SELECT event, digest FROM sb_experience_events "
                                   "WHERE deployment = %s AND seq = %s",
                                   (self.deployment, int(at))).fetchone()
                found = (row[0], row[1]) if row else None
            if found is None or not isinstance(found[0], dict):
                return None
            return found[0], line_bytes(found[0]), found[1] or _digest(found[0])

        return resolve(record_id, loc, read)

    def events_from(self, starts: dict[str, int], skipped: list[str]
                    ) -> tuple[list[Parsed], dict[str, int]]:
        start = int(starts.get("seq", 0))
        events: list[Parsed] = []
        page = 2000
        while True:
            rows = self.db.execute(
                "SELECT seq, event, digest FROM sb_experience_events WHERE deployment = %s "
                "AND seq > %s ORDER BY seq LIMIT %s", (self.deployment, start, page))
            for seq, event, digest in rows:
                if not isinstance(event, dict):
                    skipped.append(str(seq))
                    continue
                events.append((event, str(seq), digest or _digest(event)))
            if len(rows) < page:
                break
            start = rows[-1][0]
        ends = {"seq": int(events[-1][1])} if events else (
            {"seq": start} if start else self.positions())
        return events, ends

    def load(self, record_id: str, loc: str) -> dict[str, Any] | None:
        """The record as its row holds it (its latest version: one lookup), or as the version
        at `loc` held it when that is an older one (a replay folding an update onto it)."""
        rows = self.db.execute("SELECT record, loc FROM sb_experiences WHERE deployment = %s "
                               "AND id = %s", (self.deployment, record_id))
        if rows and (not loc or rows[0][1] == loc):
            return rows[0][0]
        version = self.load_version(record_id, loc)
        return version.record if version is not None else (rows[0][0] if rows else None)

    def lessons_of(self, source_id: str) -> list[tuple[str, str]]:
        """(id, status) of the lesson records whose `source` is this experience, as the
        deployment holds them now: a decision on the experience (approve, forget) covers every
        one, whichever worker distilled it and whether or not Chroma has it yet."""
        rows = self.db.execute(
            "SELECT id, status FROM sb_experiences WHERE deployment = %s "
            "AND record->>'kind' = 'lesson' AND record->>'source' = %s",
            (self.deployment, source_id))
        return [(str(row[0]), str(row[1])) for row in rows]

    def search(self, text: str, limit: int, namespaces: tuple[str, ...] | None = None
               ) -> list[dict[str, Any]]:
        """Active records matching any word of `text` by PostgreSQL's full-text search, best
        first: each {"record", "status", "duplicates", "loc", "digest", "score"} (score 0..1,
        the share of the query's words the record holds). Only `namespaces` (None: all) and
        active records, filtered before the limit: another namespace's (or a pending or
        retired) record must not crowd the caller's own out of it."""
        words = list(dict.fromkeys(w.lower() for w in _WORD.findall(text or "")))[:64]
        if not words:
            return []
        query = " | ".join(words)
        spaces = None if namespaces is None else list(namespaces)
        rows = self.db.execute(
            f"""WITH q AS (SELECT to_tsquery('{TS_CONFIG}', %s) AS q)
                SELECT record, status, duplicates, loc, digest,
                       ts_rank_cd(search, q.q, 1) AS rank, search
                FROM sb_experiences, q
                WHERE deployment = %s AND search @@ q.q AND status = 'active'
                  AND (%s::text[] IS NULL OR record->>'namespace' = ANY(%s::text[]))
                ORDER BY rank DESC, id LIMIT %s""",
            (query, self.deployment, spaces, spaces, limit))
        if not rows:
            return []
        wanted = _lexemes(self.db.execute(f"SELECT to_tsvector('{TS_CONFIG}', %s)::text",
                                          (" ".join(words),))[0][0])
        out = []
        for record, status, duplicates, loc, digest, rank, vector in rows:
            share = len(wanted & _lexemes(str(vector))) / len(wanted) if wanted else 0.0
            out.append({"record": record, "status": status, "duplicates": int(duplicates),
                        "loc": loc, "digest": digest, "score": round(share, 4)})
        out.sort(key=lambda r: -r["score"])
        return out

    # The sync checkpoint: shared, as the index it describes is shared by every worker ---------
    def read_checkpoint(self) -> dict[str, Any]:
        rows = self.db.execute("SELECT data FROM sb_index_checkpoints WHERE deployment = %s "
                               "AND memory = 'experiences'", (self.deployment,))
        data = rows[0][0] if rows else None
        if isinstance(data, dict) and isinstance(data.get("files"), dict):
            return data
        return {"collection": "", "files": {}}

    def write_checkpoint(self, checkpoint: dict[str, Any]) -> None:
        self.db.execute(
            "INSERT INTO sb_index_checkpoints (deployment, memory, data) "
            "VALUES (%s, 'experiences', %s) ON CONFLICT (deployment, memory) "
            "DO UPDATE SET data = excluded.data", (self.deployment, Jsonb(checkpoint)),
            fenced=True)

    # Forget means gone ----------------------------------------------------------------------------
    def erase(self, ids: list[str]) -> None:
        """Delete the forgotten ids' records and add events (the `forget` event already did,
        in its own transaction; this is for callers that erase without one)."""
        wanted = [i for i in ids if isinstance(i, str) and i]
        if not wanted:
            return
        with self.db.transaction(fenced=True) as conn:
            conn.execute("DELETE FROM sb_experiences WHERE deployment = %s AND id = ANY(%s)",
                         (self.deployment, wanted))
            conn.execute("DELETE FROM sb_experience_events WHERE deployment = %s "
                         "AND record_id = ANY(%s)", (self.deployment, wanted))

    def drop_lessons(self, parent_id: str, texts: set[str]) -> list[Parsed]:
        """Rewrite `parent_id`'s stored record and events without those lessons; returns its
        latest event, for the index (an update there folds from the rewritten versions). A
        `forget` event already did the rewrite in its own transaction (`_drop_from_parents`),
        so this mostly just reads."""
        with self.db.transaction(fenced=True) as conn:
            changed = self.drop_lessons_in(conn, parent_id, texts)
            if changed:
                return changed
            rows = conn.execute(
                "SELECT seq, event, digest FROM sb_experience_events WHERE deployment = %s "
                "AND record_id = %s ORDER BY seq DESC LIMIT 1",
                (self.deployment, parent_id)).fetchall()
        return [(event, str(seq), digest) for seq, event, digest in rows
                if isinstance(event, dict) and event.get("op") in ("add", "update")]

    def forgotten_ids(self) -> set[str]:
        """The experience and lesson ids `sb_forgotten` holds for this deployment (a forget
        event adds them in its own transaction; migrate brings a root's), by their prefix."""
        rows = self.db.execute("SELECT id FROM sb_forgotten WHERE deployment = %s "
                               "AND (id LIKE 'exp-%%' OR id LIKE 'lsn-%%')", (self.deployment,))
        return {row[0] for row in rows}

    def _drop_from_parents(self, conn: Any, targets: list[str]) -> None:
        """For a `forget` event, in its transaction: each forgotten lesson record's text leaves
        the `lessons` of the experience it came from (its `source`), so a failure cannot leave
        the lesson forgotten and its text still stored in the parent."""
        rows = conn.execute(
            "SELECT record FROM sb_experiences WHERE deployment = %s AND id = ANY(%s) "
            "AND record->>'kind' = 'lesson'", (self.deployment, targets)).fetchall()
        for (record,) in rows:
            parent = record.get("source")
            if not isinstance(parent, str) or not parent or parent in targets:
                continue
            texts = {record.get("task") or "", *(
                (l.get("text") if isinstance(l, dict) else l) or ""
                for l in record.get("lessons") or [])}
            self.drop_lessons_in(conn, parent, {t for t in texts if isinstance(t, str) and t})

    def drop_lessons_in(self, conn: Any, parent_id: str, texts: set[str]) -> list[Parsed]:
        """`drop_lessons` inside the caller's transaction: its add events and the updates that
        set its lessons are rewritten, then its row is folded again from them."""
        from skillbank.forgetting import lessons_held, without_lessons

        out: list[Parsed] = []
        rows = conn.execute(
            "SELECT seq, event FROM sb_experience_events WHERE deployment = %s "
            "AND record_id = %s ORDER BY seq", (self.deployment, parent_id)).fetchall()
        for seq, event in rows:
            held = lessons_held(event) if isinstance(event, dict) else None
            if held is None or not without_lessons(held, texts):
                continue
            digest = _digest(event)
            conn.execute("UPDATE sb_experience_events SET event = %s, digest = %s "
                         "WHERE seq = %s", (Jsonb(event), digest, seq))
            out.append((event, str(seq), digest))
        row = conn.execute("SELECT loc FROM sb_experiences WHERE deployment = %s AND id = %s",
                           (self.deployment, parent_id)).fetchone()
        version = self._version_in(conn, parent_id, row[0]) if out and row else None
        if version is not None:
            conn.execute(
                f"UPDATE sb_experiences SET record = %s, digest = %s, "
                f"search = to_tsvector('{TS_CONFIG}', %s) WHERE deployment = %s AND id = %s",
                (Jsonb(version.record), version.digest, searchable(version.record),
                 self.deployment, parent_id))
            if out[-1][1] != version.loc:  # the latest version: an update folded from them
                latest = conn.execute("SELECT event, digest FROM sb_experience_events "
                                      "WHERE seq = %s", (int(version.loc),)).fetchone()
                out.append((latest[0], version.loc, latest[1]))
        return out
