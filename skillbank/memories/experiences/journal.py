"""The journal (the truth) and its replay into the index (a rebuildable copy).

The truth is an append-only journal, one file per month: `<folder>/<yyyy-mm>.jsonl`, one JSON
event per line, appended to and never reordered (a forget overwrites the forgotten record's
lines in place with same-length tombstones, so every byte offset stays valid):

    {"op": "add", "record": {...Experience...}}          a new experience or lesson ("status":
                                                          "pending" when an untrusted caller wrote it)
    {"op": "update", "id": "exp-…", "base": "<loc>", "steps": [[0, 12], {...}], "set": {...}}
                                                          a later turn of a conversation: what changed
                                                          since the version at "base" (the steps as
                                                          spans of its steps and new ones, the other
                                                          fields whose value changed), folded onto it
                                                          by every reader (skillbank.store.deltas)
    {"op": "add", "record": {...}, "update": true}       a later turn written whole: every so often,
                                                          so a read walks a short chain and bytes stay
                                                          linear; the last version wins (threads)
    {"op": "retire", "id": "exp-…", "reason": "…"}       pruned: no longer recalled
    {"op": "duplicate", "id": "exp-…", "of": "exp-…", "count": 3}
                                                          a near-identical record folded into "of"
                                                          (id = of: an imported record's own count)
    {"op": "approve", "id": "exp-…", "lessons": [...]}   a pending record (and its lessons) made active
    {"op": "forget", "id": "exp-…", "lessons": [...], "reason": "forget" | "rejected"}
                                                          ("source": "exp-…" when the id is a
                                                          lesson: that record repeats its text)
                                                          removed from the index, never served again;
                                                          its `add` and `update` lines are then
                                                          overwritten in place by same-length
                                                          `{"op": "erased"}` tombstones
                                                          (skillbank.forgetting: forget means gone)

Chroma (through the hybrid index) is only an index of it, so it can always be rebuilt.
`sync()` replays the journal into the index from a checkpoint, `<folder>/.indexed.json` (the
Chroma collection's id and a byte offset per journal file), written atomically after the index
write. A no-change open compares a few file sizes and reads nothing else. A crash between the
journal append and the index write is repaired by the next sync, which re-applies the events after
the checkpoint (each is idempotent: adds and updates are upserts skipped when the index already
holds the same content hash, status events set absolute values; an update is folded onto the
version its "base" names, from this replay or from the journal, and its digest chains its
base's, so a base rewritten in place by a forget is indexed again). A torn last line is never applied: it is
left unconsumed while it is the last line, and the next append first ends it with a newline so
it becomes one skipped bad line instead of corrupting the next event. When the collection is new
(reindex, deleted chroma folder, another server) or a journal shrank, the whole journal is
replayed and index entries it does not know are removed. So it is when the checkpoint names
another `EMBED_LAYOUT` or `CONTENT_KEY_VERSION` (an index an older version built): what changed
is embedded again, or re-keyed by a metadata update, record by record, without a reindex.
"""

from __future__ import annotations

import contextlib
import logging
import threading
import time
from collections import OrderedDict
from pathlib import Path
from typing import Any, Iterable, Mapping

from pydantic import ValidationError

from skillbank import index_mirror
from skillbank.errors import NotFoundError
from skillbank.index import HybridIndex, IndexItem
from skillbank.index_outage import ChromaUnavailableError, is_outage
from skillbank.records import Experience, Finding, SyncReport
from skillbank.usage import UsageLog
from skillbank.memories.experiences.indexing import (
    CONTENT_KEY_VERSION, EMBED_LAYOUT, _index_item, content_key, embed_texts_of)
from skillbank.memories.experiences.validation import MAX_RECORD_BYTES
from skillbank.store.base import StoreUnavailableError
from skillbank.store.deltas import UPDATE, Version, chain_digest, fold, updated_id

CHECKPOINT = ".indexed.json"  # the files column's checkpoint (skillbank.store.files)
log = logging.getLogger("skillbank.experiences")
_CACHE_SIZE = 4096
_BATCH = 2048


def _index_failure(exc: BaseException) -> bool:
    """A failure of the index itself (Chroma, its SQLite file, the disk under it), not of
    skillbank's code: what a write already in the journal may leave for the next sync."""
    import errno
    import sqlite3

    module = type(exc).__module__.split(".")[0]
    disk = isinstance(exc, OSError) and exc.errno in (errno.ENOSPC, errno.EIO, errno.EDQUOT,
                                                      errno.EROFS)
    return module == "chromadb" or isinstance(exc, sqlite3.Error) or disk


class _Pending:
    """The folded state of one record while a sync replays events."""

    __slots__ = ("record", "raw", "loc", "digest", "status", "duplicates", "forgotten")

    def __init__(self) -> None:
        self.record: Experience | None = None
        self.raw: dict[str, Any] | None = None  # the record as stored: what an update folds onto
        self.loc = ""
        self.digest = ""
        self.status: str | None = None
        self.duplicates: int | None = None
        self.forgotten = False  # a `forget` event came after its last `add`



class JournalMixin:
    """Journal I/O, the checkpoint, `sync` and reading records back for `ExperienceMemory`."""

    folder: Path
    journal: Any  # the store's ExperienceLog: month files, or PostgreSQL tables (team mode)
    index_behind: bool = False
    #: What is behind is only vectors (no model): staged records searchable by keyword. A
    #: recall then syncs only once the model may be back: each sync replayed every record
    #: written since the model went away (84-110 ms a recall at 1,000; review, session 21).
    only_vectors_behind: bool = False
    #: When a replay last met a Chroma server that did not answer (monotonic): a recall syncs
    #: again INDEX_RETRY_SECONDS later, as the guideline memory catches up. Each replayed the
    #: whole journal again, staging every record anew (~1 s a recall at 2,000 experiences).
    unreached_at: float = 0.0
    index: HybridIndex
    usage: UsageLog
    write_lock: threading.RLock
    _cache: OrderedDict[str, tuple[tuple[str, str], Experience]]  # id -> ((loc, hash), record)
    _cache_lock: threading.Lock

    @property
    def checkpoint_path(self) -> Path:
        return self.folder / CHECKPOINT

    def _append(self, events: list[dict[str, Any]], vectors: Mapping[str, Any] | None = None,
                *, defer: bool = False) -> Any:
        """Append events to the journal (one durable write), then apply them to the index.

        Called with the write lock held. The checkpoint moves past the new events only when it
        already covered everything before them; otherwise the next sync catches up. When the
        index cannot be reached (a Chroma server that does not answer), the events are kept in
        the journal and `index_behind` is set: the next sync (the next recall tries one)
        indexes them, so an acknowledged write is never lost to an outage.

        With `defer`, only the journal write happens here: the index lock is taken (before the
        caller lets the write lock go, so events reach the index in journal order) and a
        callable is returned that applies them and lets it go. The caller runs it after the
        write lock, so in team mode other workers' writes do not wait for Chroma's upsert; a
        crash before it runs leaves the checkpoint behind, and the next sync catches up.
        """
        parsed, before, after = self.journal.write(events, max_line_bytes=MAX_RECORD_BYTES * 2)
        self.index_lock.acquire()

        def index_them() -> None:
            try:
                self._index_appended(parsed, before, after, vectors)
            finally:
                self.index_lock.release()

        if defer:
            return index_them
        index_them()
        return None

    def _index_appended(self, parsed: list[tuple[dict[str, Any], str, str]],
                        before: Mapping[str, int], after: Mapping[str, int],
                        vectors: Mapping[str, Any] | None) -> None:
        checkpoint = self._read_checkpoint()
        try:
            self._apply(parsed, vectors=vectors)
        except Exception as exc:  # noqa: BLE001 - only the index's own failures are kept
            if not isinstance(exc, ChromaUnavailableError) and not (
                    getattr(self.index, "shared", False) and is_outage(exc)) \
                    and not _index_failure(exc):
                raise
            # The events are in the journal already: the write is stored, and saying it failed
            # made users retry and store it twice (an embedded Chroma that met a full disk said
            # "Error in compaction"; crash hunt, session 18). The next sync indexes them.
            self.index_behind, self.only_vectors_behind = True, False
            if isinstance(exc, ChromaUnavailableError) or is_outage(exc):
                self.unreached_at = time.monotonic()
                quiet_after_timeout(self.index, exc)
                if not index_mirror.detached(self.index) and \
                        index_mirror.detach_on_outage(self.index, exc):
                    with contextlib.suppress(ChromaUnavailableError):
                        self._apply(parsed, vectors=vectors)  # staged: keyword-recallable now
            log.warning("skillbank: %d experience event(s) kept in the journal, indexed when "
                        "the index answers again: %s", len(parsed), exc)
            return
        if _staged(self.index):
            # No model: the checkpoint waits for their vectors.
            self.only_vectors_behind = not self.index_behind or self.only_vectors_behind
            self.index_behind = True
            return
        done = {n: int(v) for n, v in checkpoint.get("files", {}).items() if int(v)}
        if checkpoint.get("collection") == self._collection_id() and \
                done == {n: v for n, v in before.items() if v}:
            checkpoint["files"] = dict(after)
            try:
                self._write_checkpoint(checkpoint)
            except StoreUnavailableError as exc:
                # The events are committed and indexed: only the mark of how far the index got
                # stays behind, and the next sync re-applies from the old one (idempotent).
                # Raised, it told the caller a saved experience failed ("write lock ... lost;
                # trying it again is safe"), and a retry was a second run (hunt-teamchurn #1).
                log.warning("skillbank: %d experience event(s) saved and indexed; the index "
                            "checkpoint was not moved (%s): the next sync re-applies them",
                            len(parsed), (str(exc).strip() or type(exc).__name__).splitlines()[0])

    def _apply(self, parsed: list[tuple[dict[str, Any], str, str]],
               report: SyncReport | None = None, vectors: Mapping[str, Any] | None = None
               ) -> None:
        """Apply journal events to the index: adds (upsert, skipping same-hash), status events."""
        state: dict[str, _Pending] = {}
        order: list[str] = []
        for event, loc, digest in parsed:
            op = event.get("op")
            if op in ("add", UPDATE):
                found = self._version_of(event, loc, digest, state)
                try:
                    record = Experience.model_validate(found[0]) if found else None
                except (ValidationError, TypeError):
                    record = None
                if record is None:
                    if report is not None:
                        report.skipped.append(loc)
                    continue
                entry = state.get(record.id)
                if entry is None:
                    entry = state[record.id] = _Pending()
                    order.append(record.id)
                elif entry.forgotten:  # an id forgotten, then stored again: a new record
                    entry = state[record.id] = _Pending()
                entry.record, entry.raw, entry.loc, entry.digest = record, found[0], loc, found[1]
                entry.status = entry.status if entry.status is not None else "active"
                if record.status != "active" and entry.status == "active":
                    entry.status = record.status
                if entry.duplicates is None and not _later_turn(event):
                    # A later turn's version never holds the count (`_dump` leaves it out):
                    # taking its 0 reset the runs folded into a conversation's record at its
                    # next turn (hunt-exp #1, session 27). The count stays the index's.
                    entry.duplicates = record.duplicates
            elif op in ("forget", "approve"):
                # One event for a record and the lesson records it brought, so a crash cannot
                # apply half of it (a torn line is never applied).
                targets = [event.get("id")] + list(event.get("lessons") or [])
                if not all(isinstance(t, str) for t in targets):
                    if report is not None:
                        report.skipped.append(loc)
                    continue
                for target in targets:
                    entry = state.get(target)
                    if entry is None:
                        entry = state[target] = _Pending()
                        order.append(target)
                    if op == "forget":
                        entry.forgotten = True
                    else:
                        entry.status = "active"
            elif op in ("retire", "duplicate", "restore"):
                target = event.get("of") if op == "duplicate" else event.get("id")
                if not isinstance(target, str):
                    if report is not None:
                        report.skipped.append(loc)
                    continue
                entry = state.get(target)
                if entry is None:
                    entry = state[target] = _Pending()
                    order.append(target)
                if op == "retire":
                    entry.status = "retired"
                elif op == "restore":
                    entry.status = "active"
                else:
                    try:
                        entry.duplicates = max(int(event.get("count", 1)), entry.duplicates or 0)
                    except (TypeError, ValueError):
                        entry.duplicates = (entry.duplicates or 0) + 1
            # unknown ops are ignored: a newer version may write events this one does not know
        upserts: list[IndexItem] = []
        forgotten: list[str] = []
        #: Metadata-only changes, written in one go (`update_metadatas`): per record, a full
        #: replay that re-keyed 3,000 records took 174 s (hunt-upgrade #1, session 23).
        updates: dict[str, dict[str, Any]] = {}
        unreached: ChromaUnavailableError | None = None
        held: set[str] = set()  # once the server did not answer: what this process holds
        for record_id in order:
            entry = state[record_id]
            try:
                current = None if unreached and record_id not in held \
                    else self.index.metadata(record_id)
            except ChromaUnavailableError as exc:  # asked once: each would wait for it
                current, unreached, held = None, exc, set(self.index.ids())
            if entry.forgotten:
                if current is not None:
                    forgotten.append(record_id)
                with self._cache_lock:
                    self._cache.pop(record_id, None)
                continue
            if entry.record is not None:
                status = entry.status or "active"
                duplicates = entry.duplicates if entry.duplicates is not None \
                    else int((current or {}).get("duplicates", 0) or 0)
                if (current is not None and current.get("hash") == entry.digest
                        and _vectors_current(entry.record, current)):
                    changes = {}
                    if current.get("status") != status:
                        changes["status"] = status
                    if int(current.get("duplicates", 0) or 0) != duplicates:
                        changes["duplicates"] = duplicates
                    if current.get("loc") != entry.loc:
                        changes["loc"] = entry.loc
                    key = content_key(entry.record)
                    if current.get("content") != key:  # keyed by an older CONTENT_KEY_VERSION
                        changes["content"] = key
                    if changes:
                        updates[record_id] = changes
                        if report is not None:
                            report.changed.append(record_id)
                    elif report is not None:
                        report.unchanged += 1
                    continue
                item = _index_item(entry.record, entry.loc, entry.digest, status, duplicates)
                if vectors and vectors.get(record_id) is not None:
                    item.vectors = list(vectors[record_id])
                upserts.append(item)
                if report is not None:
                    (report.changed if current is not None else report.added).append(record_id)
                with self._cache_lock:
                    self._cache.pop(record_id, None)
            elif current is not None:
                changes = {}
                if entry.status is not None and current.get("status") != entry.status:
                    changes["status"] = entry.status
                if entry.duplicates is not None and int(current.get("duplicates", 0) or 0) != entry.duplicates:
                    changes["duplicates"] = entry.duplicates
                if changes:
                    updates[record_id] = changes
                    if report is not None:
                        report.changed.append(record_id)
        if unreached is not None and not index_mirror.detached(self.index):
            raise unreached  # kept in the journal, indexed when the server answers again
        written = 0
        try:
            if updates:
                self.index.update_metadatas(updates)
            if forgotten:
                self.index.delete(forgotten)
                if report is not None:
                    report.removed.extend(forgotten)
            for written in range(0, len(upserts), _BATCH):
                embedded = self.index.upsert(upserts[written:written + _BATCH])
                if report is not None:
                    report.embedded += embedded
        except ChromaUnavailableError:
            if index_mirror.detached(self.index):
                # An index that has not reached its server searches by keyword what its memory
                # staged (index_mirror), and the sync that reaches the server indexes them. A
                # bank started while the server was down recalled nothing (hunt-chroma #3,
                # session 24). An index that has (it holds what Chroma holds) stages nothing:
                # team workers answer from the journal's own search meanwhile.
                self.index.stage(upserts[written:])
            raise
        if unreached is not None:  # records it could not look up wait for the next sync
            raise unreached

    def _version_of(self, event: dict[str, Any], loc: str, digest: str,
                    state: Mapping[str, _Pending]) -> tuple[dict[str, Any], str] | None:
        """The record an add or update event stores, and that version's digest: an update is
        folded onto its base, the version this replay holds when it is the one the update
        names, else as the journal holds it (a sync from a checkpoint, a write's own apply).
        None: not a record (a bad line, an update whose base is gone)."""
        if event.get("op") == "add":
            raw = event.get("record")
            return (raw, digest) if isinstance(raw, dict) else None
        record_id, base = updated_id(event), event.get("base")
        if record_id is None or not isinstance(base, str):
            return None
        entry = state.get(record_id)
        if entry is not None and entry.raw is not None and entry.loc == base \
                and not entry.forgotten:
            folded = fold(entry.raw, event)
            return (folded, chain_digest(entry.digest, digest)) if folded is not None else None
        version = self.journal.load_version(record_id, base)
        if version is None or version.loc != base:
            return None  # never folded onto another version than the one it extends
        folded = fold(version.record, event)
        return (folded, chain_digest(version.digest, digest)) if folded is not None else None

    # Checkpoint ---------------------------------------------------------------------------------
    def _collection(self) -> Any:
        """The index's Chroma collection, looked up by name through the index's public client.

        Only for its id and count, which need no mirror load: `HybridIndex.count()` reads
        every item's metadata from Chroma first (tens of seconds at 100k records), and a no-change
        sync must stay a few milliseconds.
        """
        return self.index.client.get_collection(
            self.index.name, embedding_function=self.index.embedding_function)

    def _collection_id(self) -> str:
        """The id of the Chroma collection: a new one (reindex, new server) means replay all."""
        try:
            return str(self._collection().id)
        except Exception:
            return ""

    def _collection_count(self) -> int:
        try:
            return int(self._collection().count())
        except Exception:
            return self.index.count()

    def _read_checkpoint(self) -> dict[str, Any]:
        return self.journal.read_checkpoint()

    def _write_checkpoint(self, checkpoint: dict[str, Any]) -> None:
        self.journal.write_checkpoint(checkpoint)

    def reset_index(self) -> None:
        """Empty the index for a rebuild from the journal (`Skillbank.reindex`; the sync after
        it replays everything). The checkpoint goes with it, under the write lock: in team mode
        the collection is emptied, not replaced, and a worker's write in between upserted its
        one entry and moved the shared checkpoint to the journal's end, so the sync saw a
        non-empty, current index and replayed nothing — a `reindex` under traffic left 60 of
        700 experiences indexed and recall empty on every worker (team hunt, session 19).
        With no checkpoint, writes meanwhile do not move it, and the sync replays all."""
        with self.write_lock:
            self.index.reset()
            self._write_checkpoint({})

    # Sync ---------------------------------------------------------------------------------------
    def sync(self) -> SyncReport:
        """Replay the journal into the index from the checkpoint (all of it when the index is new).

        Fast when nothing changed: a few `stat` calls and one collection lookup, no reads.
        While a Chroma server does not answer, what it replayed is staged (searchable by
        keyword in this process), a finding says the index is behind, and a later sync that
        reaches the server catches it up, as the guideline memory's sync does. It raised: a bank
        holding experiences did not even open while its server was down, `start_without_chroma`
        or not, and one that did recalled none of them (hunt-chroma #3, session 24).
        """
        started = time.perf_counter()
        report = SyncReport()
        try:
            self._replay(report)
        except ChromaUnavailableError as exc:
            self.index_behind, self.only_vectors_behind = True, False
            self.unreached_at = time.monotonic()
            quiet_after_timeout(self.index, exc)
            report.findings.append(Finding(severity="warning", code="index-unavailable",
                                           path="", message=str(exc)))
        report.seconds = time.perf_counter() - started
        return report

    def _replay(self, report: SyncReport) -> None:
        """`sync`'s work: ChromaUnavailableError when the index does not answer."""
        with self.write_lock:
            from skillbank.forgetting import finish_erasures

            finish_erasures(self)  # what a crash in the middle of a forget left (one stat)
            checkpoint = self._read_checkpoint()
            done: dict[str, int] = {str(k): int(v) for k, v in checkpoint.get("files", {}).items()}
            sizes = self.journal.positions()
            collection = self._collection_id()
            full = (checkpoint.get("collection") != collection
                    or int(checkpoint.get("layout", 1)) != EMBED_LAYOUT
                    or int(checkpoint.get("content_key", 1)) != CONTENT_KEY_VERSION
                    or any(done.get(n, 0) > s for n, s in sizes.items())
                    or any(n not in sizes for n in done))
            if not full and any(sizes.values()) and self._collection_count() == 0:
                full = True  # the index was emptied (reindex) while the checkpoint remained
            starts = {n: 0 if full else done.get(n, 0) for n in sizes}
            if not full and all(starts[n] >= sizes[n] for n in sizes) \
                    and not _staged(self.index):  # staged while detached: their vectors now
                report.unchanged = self._collection_count() if sizes else 0
                return
            events, ends = self.journal.events_from(starts, report.skipped)
            known_before = set(self.index.ids()) if full else set()
            with self.index_lock:  # after any deferred upsert of earlier events
                self._apply(events, report)
            if full:
                in_journal = {e["record"].get("id") for e, _, _ in events
                              if e.get("op") == "add" and isinstance(e.get("record"), dict)}
                in_journal |= {updated_id(e) for e, _, _ in events}
                stale = sorted(known_before - in_journal)
                if stale:
                    self.index.delete(stale)
                    report.removed.extend(stale)
                with self._cache_lock:
                    self._cache.clear()
            if _staged(self.index):
                self.index.fill(wait=False)  # the model may be back: their vectors now
            if _staged(self.index):
                # Searchable by keyword in this process, but not in Chroma: a checkpoint past
                # them would leave them out of the index of every later process.
                self.index_behind, self.only_vectors_behind = True, True
            else:
                self._write_checkpoint({"collection": self._collection_id(), "files": ends,
                                        "layout": EMBED_LAYOUT,
                                        "content_key": CONTENT_KEY_VERSION})
                self.index_behind, self.only_vectors_behind = False, False

    def _catch_up(self, ids: Iterable[str]) -> None:
        """Under the write lock: these index entries as the shared index holds them now (team
        mode, or processes on one Chroma server), for a decision on them (a status checked, the
        version a turn extends). Every writer indexes its status changes and turns before it
        lets the lock go; this worker's copy of the entries is brought up to date before a call
        (`Skillbank._before_use`, its change feed), not once the lock is taken, and a decision
        on that copy was stale: an approve and a reject of one pending record on two workers
        were both answered as done (hunt-teamclock #2), overlapping turns of a thread lost
        turns (#3, session 30). One `get` of these ids; an index that only this process
        writes is current under the lock already."""
        ids = list(ids)
        if not ids or not getattr(self.index, "shared", False):
            return
        try:
            self.index.refresh(ids)
        except ChromaUnavailableError as exc:
            # The read goes on as in any outage (`get` falls back to the journal), and the
            # calls after it in this decision do not ask the server again (a frozen one cost
            # each a whole `chroma_timeout`: session 31's review).
            index_mirror.detach_on_outage(self.index, exc)
        if index_mirror.detached(self.index):
            self._catch_up_from_journal(ids)

    def _catch_up_from_journal(self, ids: list[str]) -> None:
        """`_catch_up` while the shared index does not answer (`refresh` reads nothing): these
        entries at the versions the journal holds now, staged where this worker's copy is
        older. Another worker's turn written during the outage had not reached this worker's
        copy (its sync's upsert failed before the index was detached), and this worker's next
        turn of the thread extended the version before it: the other turn was dropped from the
        record (hunt-agents-team #1, session 31). One journal read per id."""
        mirror = index_mirror.current(self.index)
        items: list[IndexItem] = []
        for record_id in ids:
            entry = mirror.get(record_id)
            version = self.journal.load_version(record_id, "") if entry is not None else None
            if version is None or (version.loc, version.digest) == (
                    str(entry[1].get("loc", "")), str(entry[1].get("hash", ""))):
                continue
            try:
                record = Experience.model_validate(version.record)
            except (ValidationError, TypeError):
                continue
            items.append(_index_item(record, version.loc, version.digest,
                                     str(entry[1].get("status", "active")),
                                     int(entry[1].get("duplicates", 0) or 0)))
        self.index.stage(items)

    # Reading ------------------------------------------------------------------------------------
    def _read_record(self, record_id: str, meta: Mapping[str, Any]) -> Experience:
        return self._journal_record(record_id, meta).model_copy(update={
            "status": meta.get("status", "active"),
            "duplicates": int(meta.get("duplicates", 0) or 0),
            "usage": self.usage.get(record_id),
        })

    def _journal_record(self, record_id: str, meta: Mapping[str, Any]) -> Experience:
        """The record the index entry `meta` points at, as journaled (no status or usage: the
        cached copy, not to be changed). Recall of a task the model does not read reads a
        candidate's task this way (`RecallMixin._unread_evidence`), without its usage."""
        # A cached record is used only while the index still points at the same version of
        # it (its location and hash): another worker may have written a newer one (a
        # conversation's next turn) that this worker's index entry already shows.
        stamp = (str(meta.get("loc", "")), str(meta.get("hash", "")))
        with self._cache_lock:
            found = self._cache.get(record_id)
            cached = found[1] if found is not None and found[0] == stamp else None
            if cached is not None:
                self._cache.move_to_end(record_id)
        if cached is None:
            cached = self._load_from_journal(record_id, stamp[0])
            with self._cache_lock:
                self._cache[record_id] = (stamp, cached)
                if len(self._cache) > _CACHE_SIZE:
                    self._cache.popitem(last=False)
        return cached

    def _version(self, record_id: str, meta: Mapping[str, Any]) -> Version:
        """The version the index entry `meta` points at, as the journal stores it (with what a
        later turn needs to write a delta on it: `skillbank.store.deltas`)."""
        version = self.journal.load_version(record_id, str(meta.get("loc", "")))
        if version is None:
            raise NotFoundError(f"experience {record_id!r} is indexed but not in the journal; "
                                "run `skillbank reindex`")
        return version

    def _load_from_journal(self, record_id: str, loc: str) -> Experience:
        raw = self.journal.load(record_id, loc)
        if raw is not None:
            try:
                return Experience.model_validate(raw)
            except (ValidationError, TypeError):
                pass
        raise NotFoundError(
            f"experience {record_id!r} is indexed but not in the journal; run `skillbank reindex`")


def _later_turn(event: Mapping[str, Any]) -> bool:
    """Whether a journal event is a later version of a conversation's record (an `update`,
    or an `add` flagged "update"), not the event that first stored it."""
    return event.get("op") == UPDATE or bool(event.get("update"))


def _staged(index: HybridIndex) -> bool:
    """Whether the index holds records by keyword only, their vectors still to embed: written
    while no embedding model could be loaded (`HybridIndex.stage`, keyword-only mode). An
    offline machine that lost its model could not record a run (hunt-ops #1); now the run is
    journaled and staged, and the checkpoint stays before it until `fill` has embedded it."""
    return bool(getattr(index, "pending", 0))


def _vectors_current(record: Experience, meta: dict[str, Any]) -> bool:
    """Whether the index holds the vectors this version embeds for `record`: a record indexed
    before experiences without `when_to_use` got a second vector (their feedback and lessons)
    has one, and is embedded again when the sync replays an index of an older `EMBED_LAYOUT`,
    instead of waiting for a `reindex`."""
    if record.kind != "experience" or record.when_to_use or not (record.feedback or record.lessons):
        return True  # one vector, as always: no need to build the texts
    return int(meta.get("chunks", 1) or 1) == len(embed_texts_of(record))


def quiet_after_timeout(index: Any, exc: BaseException) -> None:
    """A sync or write whose Chroma request timed out (a frozen server) starts the index's
    quiet window, as a timed-out search does: recalls then answer by keyword at once and the
    catch-up sync waits for the window's end (`_sync_due`), where each recall waited the whole
    `chroma_timeout` up to three times again (hunt-chroma #2, session 29)."""
    timed_out = getattr(index, "_timed_out", None)
    if timed_out is not None:
        timed_out(exc.__context__ if isinstance(exc, ChromaUnavailableError)
                  and exc.__context__ is not None else exc)
