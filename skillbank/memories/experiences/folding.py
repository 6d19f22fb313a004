"""Writing records with near-duplicates folded: one batch, one journal append, one upsert.

`record` and `record_many` share one path. Records are validated first (a batch is refused whole
when one is invalid), every text is embedded in one call outside the write lock, then, under it,
near-duplicates are decided in order as if each earlier record of the batch were already indexed,
and the batch is one journal append (one fsync) and one index upsert. A near-duplicate is folded
(a `duplicate` event counts one more on the record it repeats) instead of being stored twice.
"""

from __future__ import annotations

import threading
from typing import TYPE_CHECKING, Any, Mapping, Sequence

import numpy as np

from skillbank.errors import NotFoundError
from skillbank.index import HybridIndex, matches
from skillbank.records import Experience, Lesson, utcnow
from skillbank.review_queue import check_room
from skillbank.unread import mostly_unread
from skillbank.memories.experiences.indexing import (
    MAX_EMBED_TEXTS, _normalise_text, content_key, embed_text, embed_texts_of)
from skillbank.memories.experiences.validation import _new_id

if TYPE_CHECKING:
    from skillbank.memories.experiences.memory import ExperienceMemory

DUPLICATE_CANDIDATES = 20


def _duplicate_clauses(record: Experience) -> list[dict[str, Any]]:
    """What an active record must share with this one to be its near-duplicate (see `record`)."""
    clauses: list[dict[str, Any]] = [
        {"namespace": record.namespace}, {"status": "active"}, {"kind": record.kind},
        {"outcome": record.outcome}]
    if record.kind == "experience":
        clauses.append({"content": content_key(record)})
    return clauses


def _bucket(record: Experience) -> tuple[str, ...]:
    """`_duplicate_clauses` as a key: records in one bucket may fold into each other."""
    return (record.namespace, record.kind, record.outcome, content_key(record))


def _by_words(record: Experience, vector: Any) -> bool:
    """Whether a record folds only into a word-for-word repeat: with no model to compare with,
    or when the model does not read its task. "迁移用户表" and "迁移订单表" (migrate the users /
    orders table) are both runs of [UNK] to MiniLM, cosine 0.9999995: they were folded into one
    record and the second run's feedback was lost (hunt-i18n #1)."""
    return vector is None or mostly_unread(embed_text(record))


class _Pool:
    """Unit vectors of the records a batch added to one duplicate bucket, for exact cosines."""

    __slots__ = ("ids", "matrix")

    def __init__(self, dim: int) -> None:
        self.ids: list[str] = []
        self.matrix = np.empty((8, dim), dtype=np.float32)

    def add(self, record_id: str, unit: np.ndarray) -> None:
        if len(self.ids) == len(self.matrix):
            self.matrix = np.concatenate([self.matrix, np.empty_like(self.matrix)])
        self.matrix[len(self.ids)] = unit
        self.ids.append(record_id)

    def best(self, unit: np.ndarray) -> tuple[str, float]:
        similarities = self.matrix[:len(self.ids)] @ unit
        position = int(np.argmax(similarities))
        return self.ids[position], float(similarities[position])


def _unit(vector: Any) -> np.ndarray:
    array = np.asarray(vector, dtype=np.float32).ravel()
    norm = float(np.linalg.norm(array))
    return array / norm if norm else array


class _Batch:
    """Records being stored together, made with the write lock held (see `record_many`).

    `store` decides for one record what `record` decides (fold it into a near-duplicate, or add
    it and its lesson records) as if every record stored before it in the batch were already
    indexed: the index holds what it held before the batch, and the batch's own adds are
    compared here, exactly, bucketed by what a duplicate must share. A near-duplicate is the
    most similar qualifying record at or above the threshold, wherever it is. `flush` appends
    every event to the journal at once and applies them to the index in one upsert.
    """

    def __init__(self, memory: "ExperienceMemory", vectors: Mapping[str, Any]) -> None:
        self.memory = memory
        self.vectors = vectors  # embedded text -> vector (ExperienceMemory._embed)
        self.threshold = float(memory.settings.duplicate_threshold)
        self.events: list[dict[str, Any]] = []
        self.record_vectors: dict[str, Any] = {}  # id -> vectors, so the upsert embeds nothing
        self.added: set[str] = set()
        self.counts: dict[str, int] = {}  # duplicate counts of records folded into so far
        self.pools: dict[tuple[str, ...], _Pool] = {}
        #: No model: (bucket, normalised task) -> id of this batch's records, for word-for-word
        #: repeats (`_offline_twin`).
        self.offline: dict[tuple[tuple[str, ...], str], str] = {}
        #: An untrusted caller's write: its new pending experiences need room in the review
        #: queue (`review_queue.check_room`); `waiting` counts each namespace's, this batch's too.
        self.capped = False
        self.waiting: dict[str, int] = {}

    def _room(self, namespace: str) -> None:
        """QueueFullError (before anything of this batch is written) when `namespace` holds
        `max_pending_experiences` pending experiences already."""
        if namespace not in self.waiting:
            self.waiting[namespace] = self.memory._pending_count(namespace)
        check_room("experiences", namespace, self.waiting[namespace], self.memory._pending_cap())
        self.waiting[namespace] += 1

    def taken(self, record_id: str) -> bool:
        """Whether an id is in use, in the index or in this batch."""
        return record_id in self.added or self.memory.index.metadata(record_id) is not None

    def _duplicate_of(self, record: Experience, vector: Any) -> str | None:
        if self.threshold > 1.0:
            return None
        if _by_words(record, vector):  # no model, or no reading by it: a word-for-word repeat
            return self._offline_twin(record)
        found, similarity = self.memory._nearest_indexed(record, vector)
        pool = self.pools.get(_bucket(record))
        if pool is not None:
            twin, twin_similarity = pool.best(_unit(vector))
            if twin_similarity >= self.threshold - 1e-6 and twin != record.id and \
                    (found is None or twin_similarity > similarity):
                found = twin
        return found

    def _offline_twin(self, record: Experience) -> str | None:
        """With no model (or for a task it does not read, `_by_words`), the record this one
        repeats word for word (the same bucket and task, normalised), in this batch or in the
        index, the runs staged there meanwhile included. A task whose normalised text is empty
        repeats nothing: offline, "给客户写道歉信" (write an apology letter) was folded into
        "迁移订单数据库" (migrate the orders database), both "" to the key (hunt-i18n #1).

        Why: an agent offline that met the same task again recorded a copy each time (four runs,
        four records, still four once the model was back), where with the model they are one
        record counted four times (review, session 21). Runs only worded alike stay apart until
        a later write of them is compared with the model."""
        task = _normalise_text(embed_text(record))
        if not task:
            return None
        mine = self.offline.get((_bucket(record), task))
        if mine is not None:
            return mine
        where = {"$and": _duplicate_clauses(record)}
        index = self.memory.index
        for found in index.ids():
            meta = index.metadata(found)
            if found == record.id or meta is None or not matches(where, meta):
                continue
            try:
                other = self.memory._read_record(found, meta)  # type: ignore[attr-defined]
            except NotFoundError:
                continue
            if _normalise_text(embed_text(other)) == task:
                return found
        return None

    def store(self, experience: Experience, *, with_lessons: bool = True,
              status: str = "active", repeats: int = 0, fold: bool = True) -> str:
        """Plan one record (and its lesson records) unless it is a duplicate; returns its id,
        or the id of the record it was folded into.

        `status="retired"` (an import) adds the record and retires it at once. `"pending"` (an
        untrusted caller) adds it and its lessons quarantined and never folds them: untrusted
        input must not change an active record, not even its duplicate count, and a pending
        record is no one's twin (a trusted record folded into it would be hidden).
        `repeats` (an imported line's `duplicates`) is how many runs were folded into the
        record where it came from: it starts with them, or brings them along when it is
        folded itself; import dropped them (hunt-exp #1, session 27). A conversation's record
        (`thread`) is never folded: its later turns would have nothing to update; nor is a
        record with `fold=False` (an imported conversation whose thread is taken here).
        """
        quarantined = status == "pending"
        if quarantined and self.capped and experience.kind == "experience":
            self._room(experience.namespace)
        vector = self.vectors.get(embed_text(experience))  # None: no model (keyword-only mode)
        existing = None if quarantined or experience.thread is not None or not fold \
            else self._duplicate_of(experience, vector)
        if existing is not None:
            if existing in self.counts:
                count = self.counts[existing] + 1 + repeats
            else:
                meta = self.memory.index.metadata(existing) or {}
                count = int(meta.get("duplicates", 0) or 0) + 1 + repeats
            self.counts[existing] = count
            self.events.append({"op": "duplicate", "id": experience.id, "of": existing,
                                "count": count, "at": utcnow().isoformat()})
            return existing
        records = [(experience, vector)]
        if with_lessons and experience.kind == "experience" and experience.lessons:
            # Lessons are checked against what was stored before this record, not each other.
            for lesson in self.memory._lesson_candidates(experience):
                lesson_vector = self.vectors.get(embed_text(lesson))
                if quarantined or self._duplicate_of(lesson, lesson_vector) is None:
                    records.append((lesson, lesson_vector))
        for record, record_vector in records:
            dumped = self.memory._dump(record)
            if quarantined:
                dumped["status"] = "pending"
            self.events.append({"op": "add", "record": dumped})
            vectors = [self.vectors.get(text) for text in embed_texts_of(record)]
            if all(vector is not None for vector in vectors):  # else embedded when indexed
                self.record_vectors[record.id] = vectors
            self.added.add(record.id)
        if repeats:  # the runs it already counted, as one `duplicate` event on itself
            self.counts[experience.id] = repeats
            self.events.append({"op": "duplicate", "id": experience.id, "of": experience.id,
                                "count": repeats, "at": utcnow().isoformat()})
        if status == "retired":
            self.events.append({"op": "retire", "id": experience.id, "reason": "imported retired",
                                "at": utcnow().isoformat()})
        for record, record_vector in records:
            if quarantined or (record is experience and status != "active"):
                continue  # a retired or pending record is no one's twin
            if _by_words(record, record_vector):
                self.offline[(_bucket(record), _normalise_text(embed_text(record)))] = record.id
                continue
            unit = _unit(record_vector)
            pool = self.pools.get(_bucket(record))
            if pool is None:
                pool = self.pools[_bucket(record)] = _Pool(len(unit))
            pool.add(record.id, unit)
        return experience.id

    def flush(self, defer: bool = False) -> Any:
        """One journal append (one fsync) for every event, then one upsert of the adds; with
        `defer`, returns that upsert to run once the write lock is let go
        (`JournalMixin._append`), or None."""
        events, self.events = self.events, []
        if events:
            return self.memory._append(events, self.record_vectors, defer=defer)
        return None


class FoldingMixin:
    """The write path of `ExperienceMemory`: lesson records, embedding, folding, committing."""

    index: HybridIndex
    settings: Any
    write_lock: threading.RLock

    def _lesson_records(self, experience: Experience, lessons: Sequence[Lesson]) -> list[Experience]:
        out = []
        for lesson in lessons:
            out.append(Experience(
                id=_new_id("lsn"), task=lesson.text, lessons=[lesson],
                when_to_use=lesson.when_to_use or experience.when_to_use,
                outcome=experience.outcome, tags=list(experience.tags),
                namespace=experience.namespace, kind="lesson", source=experience.id,
            ))
        return out

    def _lesson_candidates(self, experience: Experience) -> list[Experience]:
        """The lesson records an experience brings, one per distinct lesson text."""
        seen: set[str] = set()
        out = []
        for lesson in self._lesson_records(experience, experience.lessons):
            key = _normalise_text(embed_text(lesson))
            if key not in seen:
                out.append(lesson)
            seen.add(key)
        return out

    def _pending_count(self, namespace: str) -> int:
        """Pending experiences of `namespace`: a pass over the index's metadata in memory (no
        read of Chroma or the journal); what the review-queue cap counts."""
        count = 0
        for record_id in self.index.ids():
            meta = self.index.metadata(record_id) or {}
            if meta.get("status") == "pending" and meta.get("kind") == "experience" \
                    and meta.get("namespace") == namespace:
                count += 1
        return count

    def _pending_room(self, records: Sequence[Experience], statuses: Sequence[str]) -> None:
        """`check_room` for the pending experiences these records would add, per namespace."""
        adding: dict[str, int] = {}
        for record, status in zip(records, statuses):
            if status == "pending" and record.kind == "experience":
                adding[record.namespace] = adding.get(record.namespace, 0) + 1
        for namespace, count in adding.items():
            check_room("experiences", namespace, self._pending_count(namespace),
                       self._pending_cap(), count)

    def _pending_cap(self) -> int:
        return int(getattr(self.settings, "max_pending_experiences", 0) or 0)

    def _embed(self, items: Sequence[tuple[Experience, bool]]) -> dict[str, Any]:
        """Vectors of every text these records (and, when flagged, their lessons) would embed.

        One embedding call for the lot, each distinct text once; keyed by text, because the
        ids of lesson records (and of imported records) are only settled when they are stored.
        Empty while no embedding model can be loaded: an offline machine that lost its model
        could not record a run at all (hunt-ops #1). The records are then journaled unfolded
        and staged in the index, searchable by keyword, embedded once the model is back.
        """
        from skillbank.embeddings import ModelUnavailableError, embed_texts

        texts: dict[str, None] = {}
        for record, with_lessons in items:
            texts.update(dict.fromkeys(embed_texts_of(record)))
            if with_lessons and record.kind == "experience" and record.lessons:
                for lesson in self._lesson_candidates(record):
                    texts.update(dict.fromkeys(embed_texts_of(lesson)))
        order = list(texts)
        try:
            vectors = embed_texts(self.index.embedding_function, order) if order else []
        except ModelUnavailableError as exc:
            self.index._model_unavailable(exc)  # keyword-only mode, said once per process
            return {}
        return dict(zip(order, vectors))

    def _commit(self, records: Sequence[Experience], *, with_lessons: bool = True,
                statuses: Sequence[str] | None = None, capped: bool = False) -> list[str]:
        """Store prepared records as `record` would one by one: one embedding call (made
        before the write lock is taken), one journal append, one index upsert. Returns the id
        each record was stored or folded under, in order. `statuses` (default all "active")
        says which records are stored "pending" (see `_Batch.store`); `capped` (an untrusted
        caller's write) refuses it whole when the review queue has no room for them."""
        if not records:
            return []
        statuses = list(statuses) if statuses is not None else ["active"] * len(records)
        if capped:  # refused before the embedding, too: a flood costs no model time
            self._pending_room(records, statuses)
        vectors = self._embed([(record, with_lessons) for record in records])
        with self.write_lock:
            batch = _Batch(self, vectors)
            batch.capped = capped
            ids = [batch.store(record, with_lessons=with_lessons, status=status)
                   for record, status in zip(records, statuses)]
            index_them = batch.flush(defer=True)
        if index_them is not None:
            index_them()  # after the write lock: the journal (the truth) already has them
        return ids

    def _dump(self, record: Experience) -> dict[str, Any]:
        dumped = record.model_dump(mode="json", exclude={"usage", "status", "duplicates"})
        if dumped.get("thread") is None:
            dumped.pop("thread", None)  # records outside a conversation keep their old lines
        if dumped.get("updated") is None:
            dumped.pop("updated", None)  # as a record's first turn always wrote it
        return dumped

    def _nearest_indexed(self, record: Experience, vector: Any) -> tuple[str | None, float]:
        """The indexed active record this one would only repeat (or None), and its cosine.

        That is the most similar record at or above `settings.duplicate_threshold` that has
        the same namespace, kind, outcome and content key (see `record`).
        """
        threshold = float(self.settings.duplicate_threshold)
        where = {"$and": _duplicate_clauses(record)}
        # Nearest records of any namespace first (an unfiltered query is the cheap one); only
        # when all of them are that close and none qualifies is the filter given to Chroma.
        # A record has up to MAX_EMBED_TEXTS vectors and `dense` counts texts: this many texts
        # hold DUPLICATE_CANDIDATES records unless the collection is smaller (checked below).
        nearest = self.index.dense(vector, DUPLICATE_CANDIDATES * MAX_EMBED_TEXTS, None)
        ranked = sorted(nearest.items(), key=lambda kv: kv[1], reverse=True)
        for found, similarity in ranked:
            if similarity < threshold - 1e-6:
                return None, 0.0
            meta = self.index.metadata(found)
            if found != record.id and meta is not None and matches(where, meta):
                return found, similarity
        if len(ranked) < DUPLICATE_CANDIDATES:
            return None, 0.0
        # Every nearest record has (nearly) this task and none has this content: many runs
        # recorded under one generic task. Their task vectors are one point repeated, where
        # Chroma's graph search is approximate (a filtered query, and a search by the content
        # vector too, missed exact repeats), so look the twin up by its key, exactly (only an
        # experience has a content key to narrow the lookup).
        if record.kind == "experience":
            twin = self._twin_by_key(record, where)
            if twin is not None:
                return twin, 1.0
        best = self.index.dense(vector, DUPLICATE_CANDIDATES * MAX_EMBED_TEXTS, where)
        if best:
            found, similarity = max(best.items(), key=lambda kv: kv[1])
            if similarity >= threshold - 1e-6 and found != record.id:
                return found, similarity
        return None, 0.0

    def _twin_by_key(self, record: Experience, where: dict[str, Any]) -> str | None:
        """An indexed record this one repeats word for word: the same namespace, kind, outcome
        and content key (`where`, an exact metadata filter) and the same task once normalised."""
        task = _normalise_text(embed_text(record))
        if not task:
            return None  # no word the key reads: "" == "" is no repeat
        for found in self.index.ids_where(where):
            meta = self.index.metadata(found)
            if found == record.id or meta is None:
                continue
            try:
                other = self._read_record(found, meta)  # type: ignore[attr-defined]
            except NotFoundError:  # a record missing from the journal is no one's twin
                continue
            if _normalise_text(embed_text(other)) == task:
                return found
        return None
