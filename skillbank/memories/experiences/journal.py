"""The journal (the truth) and its replay into the index (a rebuildable copy).

The truth is an append-only journal, one file per month: `<folder>/<yyyy-mm>.jsonl`, one JSON
event per line, appended to and never reordered (a forget overwrites the forgotten record's
lines in place with same-length tombstones, so every byte offset stays valid):

    {"op": "add", "record": {...Experience...}}          a new experience or lesson ("status":
                                                          "pending" when an untrusted caller wrote it)
    {"op": "add", "record": {...}, "update": true}       a later turn of a conversation: the same id
                                                          written again, the last add wins (threads)
    {"op": "retire", "id": "exp-…", "reason": "…"}       pruned: no longer recalled
    {"op": "duplicate", "id": "exp-…", "of": "exp-…", "count": 3}
                                                          a near-identical record folded into "of"
    {"op": "approve", "id": "exp-…", "lessons": [...]}   a pending record (and its lessons) made active
    {"op": "forget", "id": "exp-…", "lessons": [...], "reason": "forget" | "rejected"}
                                                          removed from the index, never served again;
                                                          its `add` lines are then overwritten in place
                                                          by same-length `{"op": "erased"}` tombstones
                                                          (skillbank.forgetting: forget means gone)

Chroma (through the hybrid index) is only an index of it, so it can always be rebuilt.
`sync()` replays the journal into the index from a checkpoint, `<folder>/.indexed.json` (the
Chroma collection's id and a byte offset per journal file), written atomically after the index
write. A no-change open compares a few file sizes and reads nothing else. A crash between the
journal append and the index write is repaired by the next sync, which re-applies the events after
the checkpoint (each is idempotent: adds are upserts skipped when the index already holds the
same content hash, status events set absolute values). A torn last line is never applied: it is
left unconsumed while it is the last line, and the next append first ends it with a newline so
it becomes one skipped bad line instead of corrupting the next event. When the collection is new
(reindex, deleted chroma folder, another server) or a journal shrank, the whole journal is
replayed and index entries it does not know are removed.
"""

from __future__ import annotations

import json
import os
import re
import threading
import time
from collections import OrderedDict
from pathlib import Path
from typing import Any, Mapping

from pydantic import ValidationError

from skillbank.errors import InvalidInputError, NotFoundError
from skillbank.fsutil import append_line, atomic_write
from skillbank.index import HybridIndex, IndexItem
from skillbank.records import Experience, SyncReport, utcnow
from skillbank.usage import UsageLog
from skillbank.memories.experiences.indexing import (
    EMBED_LAYOUT, _digest, _index_item, embed_texts_of)
from skillbank.memories.experiences.validation import MAX_RECORD_BYTES

CHECKPOINT = ".indexed.json"
_JOURNAL = re.compile(r"^\d{4}-\d{2}\.jsonl$")
_CACHE_SIZE = 4096
_BATCH = 2048


class _Pending:
    """The folded state of one record while a sync replays events."""

    __slots__ = ("record", "loc", "digest", "status", "duplicates", "forgotten")

    def __init__(self) -> None:
        self.record: Experience | None = None
        self.loc = ""
        self.digest = ""
        self.status: str | None = None
        self.duplicates: int | None = None
        self.forgotten = False  # a `forget` event came after its last `add`



class JournalMixin:
    """Journal I/O, the checkpoint, `sync` and reading records back for `ExperienceMemory`."""

    folder: Path
    index: HybridIndex
    usage: UsageLog
    write_lock: threading.RLock
    _cache: OrderedDict[str, Experience]
    _cache_lock: threading.Lock

    @property
    def checkpoint_path(self) -> Path:
        return self.folder / CHECKPOINT

    def _journal_files(self) -> list[Path]:
        from skillbank.store.files.experiences import journal_files

        return journal_files(self.folder)

    def _current_journal(self) -> Path:
        return self.folder / f"{utcnow():%Y-%m}.jsonl"

    def _append(self, events: list[dict[str, Any]], vectors: Mapping[str, Any] | None = None
                ) -> None:
        """Append events to this month's journal (one fsync), then apply them to the index.

        Called with the write lock held. The checkpoint moves past the new lines only when it
        already covered everything before them; otherwise the next sync catches up.
        """
        path = self._current_journal()
        size = path.stat().st_size if path.exists() else 0
        if size and not _ends_with_newline(path):
            append_line(path, "")  # end a torn last line so it cannot swallow this event
            size = path.stat().st_size
        lines = [json.dumps(e, ensure_ascii=False, separators=(",", ":")) for e in events]
        for line in lines:
            if len(line.encode("utf-8")) > MAX_RECORD_BYTES * 2:
                raise InvalidInputError("record is too large to store")
        append_line(path, "\n".join(lines))
        end = path.stat().st_size
        offset = size
        parsed = []
        for line, event in zip(lines, events):
            parsed.append((event, f"{path.name}:{offset}", _digest(line)))
            offset += len(line.encode("utf-8")) + 1
        checkpoint = self._read_checkpoint()
        self._apply(parsed, vectors=vectors)
        if checkpoint.get("collection") == self._collection_id() and \
                int(checkpoint.get("files", {}).get(path.name, 0)) == size and \
                all(int(checkpoint.get("files", {}).get(p.name, -1)) == p.stat().st_size
                    for p in self._journal_files() if p != path):
            checkpoint["files"][path.name] = end
            self._write_checkpoint(checkpoint)

    def _apply(self, parsed: list[tuple[dict[str, Any], str, str]],
               report: SyncReport | None = None, vectors: Mapping[str, Any] | None = None
               ) -> None:
        """Apply journal events to the index: adds (upsert, skipping same-hash), status events."""
        state: dict[str, _Pending] = {}
        order: list[str] = []
        for event, loc, digest in parsed:
            op = event.get("op")
            if op == "add":
                raw = event.get("record")
                try:
                    record = Experience.model_validate(raw)
                except (ValidationError, TypeError):
                    if report is not None:
                        report.skipped.append(loc)
                    continue
                entry = state.get(record.id)
                if entry is None:
                    entry = state[record.id] = _Pending()
                    order.append(record.id)
                elif entry.forgotten:  # an id forgotten, then stored again: a new record
                    entry = state[record.id] = _Pending()
                entry.record, entry.loc, entry.digest = record, loc, digest
                entry.status = entry.status if entry.status is not None else "active"
                if record.status != "active" and entry.status == "active":
                    entry.status = record.status
                entry.duplicates = entry.duplicates if entry.duplicates is not None else record.duplicates
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
        for record_id in order:
            entry = state[record_id]
            current = self.index.metadata(record_id)
            if entry.forgotten:
                if current is not None:
                    forgotten.append(record_id)
                with self._cache_lock:
                    self._cache.pop(record_id, None)
                continue
            if entry.record is not None:
                status = entry.status or "active"
                duplicates = entry.duplicates or 0
                if (current is not None and current.get("hash") == entry.digest
                        and _vectors_current(entry.record, current)):
                    changes = {}
                    if current.get("status") != status:
                        changes["status"] = status
                    if int(current.get("duplicates", 0) or 0) != duplicates:
                        changes["duplicates"] = duplicates
                    if current.get("loc") != entry.loc:
                        changes["loc"] = entry.loc
                    if changes:
                        self.index.update_metadata(record_id, **changes)
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
                    self.index.update_metadata(record_id, **changes)
                    if report is not None:
                        report.changed.append(record_id)
        if forgotten:
            self.index.delete(forgotten)
            if report is not None:
                report.removed.extend(forgotten)
        for start in range(0, len(upserts), _BATCH):
            embedded = self.index.upsert(upserts[start:start + _BATCH])
            if report is not None:
                report.embedded += embedded

    def _read_events(self, path: Path, start: int, report: SyncReport
                     ) -> tuple[list[tuple[dict[str, Any], str, str]], int]:
        """Complete lines of one journal file from `start`; returns events and the end offset.

        A last line without its newline is left for later (it may be a crash's torn write).
        """
        events: list[tuple[dict[str, Any], str, str]] = []
        offset = start
        with path.open("rb") as handle:
            handle.seek(start)
            for raw in handle:
                if not raw.endswith(b"\n"):
                    break
                line_offset = offset
                offset += len(raw)
                text = raw.decode("utf-8", errors="replace").rstrip("\r\n")
                if not text.strip():
                    continue
                try:
                    event = json.loads(text)
                    if not isinstance(event, dict):
                        raise ValueError("not an object")
                except ValueError:
                    report.skipped.append(f"{path.name}:{line_offset}")
                    continue
                events.append((event, f"{path.name}:{line_offset}", _digest(text)))
        return events, offset

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
        try:
            data = json.loads(self.checkpoint_path.read_text("utf-8"))
            if isinstance(data, dict) and isinstance(data.get("files"), dict):
                return data
        except (OSError, ValueError):
            pass
        return {"collection": "", "files": {}}

    def _write_checkpoint(self, checkpoint: dict[str, Any]) -> None:
        atomic_write(self.checkpoint_path, json.dumps(checkpoint, sort_keys=True))

    # Sync ---------------------------------------------------------------------------------------
    def sync(self) -> SyncReport:
        """Replay the journal into the index from the checkpoint (all of it when the index is new).

        Fast when nothing changed: a few `stat` calls and one collection lookup, no reads.
        """
        started = time.perf_counter()
        report = SyncReport()
        with self.write_lock:
            checkpoint = self._read_checkpoint()
            done: dict[str, int] = {str(k): int(v) for k, v in checkpoint.get("files", {}).items()}
            files = self._journal_files()
            sizes = {p.name: p.stat().st_size for p in files}
            collection = self._collection_id()
            full = (checkpoint.get("collection") != collection
                    or int(checkpoint.get("layout", 1)) != EMBED_LAYOUT
                    or any(done.get(n, 0) > s for n, s in sizes.items())
                    or any(n not in sizes for n in done))
            if not full and any(sizes.values()) and self._collection_count() == 0:
                full = True  # the index was emptied (reindex) while the checkpoint remained
            starts = {n: 0 if full else done.get(n, 0) for n in sizes}
            if not full and all(starts[n] >= sizes[n] for n in sizes):
                report.unchanged = self._collection_count() if sizes else 0
                report.seconds = time.perf_counter() - started
                return report
            events: list[tuple[dict[str, Any], str, str]] = []
            ends: dict[str, int] = {}
            for path in files:
                found, ends[path.name] = self._read_events(path, starts[path.name], report)
                events.extend(found)
            known_before = set(self.index.ids()) if full else set()
            self._apply(events, report)
            if full:
                in_journal = {e["record"].get("id") for e, _, _ in events
                              if e.get("op") == "add" and isinstance(e.get("record"), dict)}
                stale = sorted(known_before - in_journal)
                if stale:
                    self.index.delete(stale)
                    report.removed.extend(stale)
                with self._cache_lock:
                    self._cache.clear()
            self._write_checkpoint({"collection": self._collection_id(), "files": ends,
                                    "layout": EMBED_LAYOUT})
        report.seconds = time.perf_counter() - started
        return report

    # Reading ------------------------------------------------------------------------------------
    def _read_record(self, record_id: str, meta: Mapping[str, Any]) -> Experience:
        with self._cache_lock:
            cached = self._cache.get(record_id)
            if cached is not None:
                self._cache.move_to_end(record_id)
        if cached is None:
            cached = self._load_from_journal(record_id, str(meta.get("loc", "")))
            with self._cache_lock:
                self._cache[record_id] = cached
                if len(self._cache) > _CACHE_SIZE:
                    self._cache.popitem(last=False)
        return cached.model_copy(update={
            "status": meta.get("status", "active"),
            "duplicates": int(meta.get("duplicates", 0) or 0),
            "usage": self.usage.get(record_id),
        })

    def _load_from_journal(self, record_id: str, loc: str) -> Experience:
        name, _, offset = loc.rpartition(":")
        path = self.folder / name
        if _JOURNAL.match(name) and offset.isdigit() and path.is_file():
            with path.open("rb") as handle:
                handle.seek(int(offset))
                raw = handle.readline()
            try:
                event = json.loads(raw)
                if event.get("op") == "add" and event["record"].get("id") == record_id:
                    return Experience.model_validate(event["record"])
            except (ValueError, KeyError, TypeError, AttributeError, ValidationError):
                pass
        # The pointer is stale (a hand-edited journal): look the record up the slow way.
        for path in reversed(self._journal_files()):
            with path.open("rb") as handle:
                for raw in handle:
                    if record_id.encode() not in raw:
                        continue
                    try:
                        event = json.loads(raw)
                        if event.get("op") == "add" and event["record"].get("id") == record_id:
                            return Experience.model_validate(event["record"])
                    except (ValueError, KeyError, TypeError, AttributeError, ValidationError):
                        continue
        raise NotFoundError(
            f"experience {record_id!r} is indexed but not in the journal; run `skillbank reindex`")


def _ends_with_newline(path: Path) -> bool:
    with path.open("rb") as handle:
        handle.seek(-1, os.SEEK_END)
        return handle.read(1) == b"\n"


def _vectors_current(record: Experience, meta: dict[str, Any]) -> bool:
    """Whether the index holds the vectors this version embeds for `record`: a record indexed
    before experiences without `when_to_use` got a second vector (their feedback and lessons)
    has one, and is embedded again when the sync replays an index of an older `EMBED_LAYOUT`,
    instead of waiting for a `reindex`."""
    if record.kind != "experience" or record.when_to_use or not (record.feedback or record.lessons):
        return True  # one vector, as always: no need to build the texts
    return int(meta.get("chunks", 1) or 1) == len(embed_texts_of(record))
