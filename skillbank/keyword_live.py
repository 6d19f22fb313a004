"""The live keyword side of an index: BM25 over the mirror, kept current after every write.

`skillbank.keyword` is BM25 itself (a build over fixed texts); this is its lifecycle in a
running index. A full build over every item is costly, so it is made lazily and kept; items
written (or removed) since are scored by a small delta BM25 instead and their rows in the full
build masked, with statistics of all items as they are now, so a write costs a rebuild of the
delta, not of everything, and scores equal a fresh build's. Past a share of the whole, the full
build is dropped and made again. The snapshot saves the full build only when it is exact.

It knows nothing of Chroma: `HybridIndex` gives it a callable returning the mirror (item id ->
keyword text and metadata), its lock, and the snapshot, tells it which items changed, and asks
it for scores. That keeps the vector store's paging, ownership and outages out of here, and the
keyword bookkeeping out of the index.
"""

from __future__ import annotations

import json
import threading
from typing import TYPE_CHECKING, Any, Callable, Iterable

import numpy as np

from skillbank.filters import matches
from skillbank.fusion import best_first
from skillbank.keyword import KeywordStats, _Keyword, keyword_format, union_stats

if TYPE_CHECKING:
    from skillbank.index_snapshot import KeywordSnapshot

Mirror = dict[str, tuple[str, dict[str, Any]]]

#: Written items are scored by a delta BM25 until they are this many, or this share of the whole.
DELTA_MIN = 2000
DELTA_SHARE = 0.2


class LiveKeyword:
    """BM25 over an index's mirror: a lazy full build, a delta for what changed since."""

    def __init__(self, mirror: Callable[[], Mirror], lock: threading.RLock,
                 snapshot: "KeywordSnapshot | None" = None) -> None:
        self._mirror = mirror
        self._lock = lock
        self._snapshot = snapshot
        self.full: _Keyword | None = None  # BM25 over every item, built lazily
        # Items written since that build: their rows in it are stale, and they are scored by
        # the delta instead.
        self.changed: set[str] = set()
        self.delta: _Keyword | None = None
        self._stats_cache: tuple[Any, KeywordStats] | None = None  # see stats
        self._masks: dict[str, np.ndarray] = {}  # filter masks per `where`, per full build
        #: This process has state the snapshot lacks (the index sets it too: a fresh mirror, a
        #: write).
        self.unsaved = False
        #: Told of the same changes (`note_changed`, `clear_masks`, `invalidate`): the live dense
        #: side (skillbank.dense_live) follows every write the index reports here.
        self.listeners: list[Any] = []

    # Lifecycle ---------------------------------------------------------------------------------
    def restore(self, collection_id: str, chunks_in_chroma: int) -> tuple[Mirror, int] | None:
        """The mirror and chunk count the last process saved, taking its BM25 when it saved one;
        None when there is nothing usable (what is built instead is worth saving at close)."""
        if self._snapshot is None:
            return None
        restored = self._snapshot.load(collection_id, chunks_in_chroma, keyword_format())
        if restored is None:
            self.unsaved = True
            return None
        if restored.keyword is not None:
            self.full, self.changed, self.delta = restored.keyword, set(), None
        return restored.mirror, restored.chunks

    def save(self, collection_id: str, mirror: Mirror, chunks: int) -> None:
        """Save the mirror, with BM25 only when it is an exact full build (never the delta
        approximation: the next process would not know which rows are stale)."""
        assert self._snapshot is not None
        exact = None if self.changed else self.full
        self._snapshot.save(collection_id, mirror, chunks, exact, keyword_format())
        self.unsaved = False

    def invalidate(self) -> None:
        """Forget every build: the mirror was replaced; the next search builds again."""
        with self._lock:
            self.full = None
            self.changed = set()
            self.delta = None
            self._masks.clear()
            for listener in self.listeners:
                listener.invalidate()

    def clear_masks(self) -> None:
        """Metadata changed: filter masks computed from the old metadata are wrong."""
        self._masks.clear()
        for listener in self.listeners:
            listener.clear_masks()

    def note_changed(self, item_ids: Iterable[str]) -> None:
        """Mark items written or removed since the full build; drop it when many are."""
        item_ids = list(item_ids)  # may be a generator: the listeners read it too
        for listener in self.listeners:
            listener.note_changed(item_ids)
        if self.full is None:
            return
        self.changed.update(item_ids)
        self.delta = None
        if len(self.changed) > max(DELTA_MIN, DELTA_SHARE * len(self.full.ids)):
            self.full = None

    # Builds ------------------------------------------------------------------------------------
    def full_index(self) -> _Keyword:
        with self._lock:
            if self.full is None:
                mirror = self._mirror()
                ids = list(mirror)
                self.full = _Keyword(ids, [mirror[i][0] for i in ids])
                self.changed = set()
                self.delta = None
                self._masks.clear()
                if self._snapshot is not None:
                    self.unsaved = True  # a BM25 worth keeping for the next process
            return self.full

    def delta_index(self) -> _Keyword | None:
        if not self.changed:
            return None
        if self.delta is None:
            mirror = self._mirror()
            ids = sorted(i for i in self.changed if i in mirror)
            self.delta = _Keyword(ids, [mirror[i][0] for i in ids]) if ids else None
        return self.delta

    def stats(self, index: _Keyword, delta: _Keyword | None) -> KeywordStats:
        """BM25 statistics of the items as they are now (the full build minus its stale rows,
        plus the delta), so keyword scores after a write equal a fresh build's: the delta's own
        statistics (a few items) would inflate the idf of every word a new item brings."""
        if not self.changed:
            return index.stats()
        key = (index, delta, len(self.changed))
        cached = self._stats_cache
        if cached is not None and all(a is b for a, b in zip(cached[0][:2], key[:2])) \
                and cached[0][2] == key[2]:
            return cached[1]
        stale = [index.position[i] for i in self.changed if i in index.position]
        stats = union_stats(index, stale, delta)
        self._stats_cache = (key, stats)
        return stats

    def mask(self, index: _Keyword, where: dict[str, Any]) -> np.ndarray:
        """Which BM25 rows pass `where`, computed once per filter until the index changes."""
        key = json.dumps(where, sort_keys=True, default=str)
        mask = self._masks.get(key)
        if mask is None:
            mirror = self._mirror()
            mask = np.fromiter(
                (matches(where, mirror[i][1]) if i in mirror else False for i in index.ids),
                dtype=bool,
                count=len(index.ids),
            )
            if len(self._masks) > 64:
                self._masks.clear()
            self._masks[key] = mask
        return mask

    # Search ------------------------------------------------------------------------------------
    def search(self, query: str, n: int, where: dict[str, Any] | None = None) -> dict[str, float]:
        """Top `n` items by BM25, normalised to 0..1, filtered like the dense side."""
        with self._lock:
            index = self.full_index()
            delta = self.delta_index()
            stats = self.stats(index, delta)  # of all items now: exact, as a rebuild
            found: dict[str, float] = {}
            scored = index.scores(query, stats)
            if scored is not None:
                scores, best_possible = scored
                if self.changed:
                    stale = [index.position[i] for i in self.changed if i in index.position]
                    scores = scores.copy()
                    scores[stale] = 0.0
                if where:
                    scores = np.where(self.mask(index, where), scores, 0.0)
                positive = int((scores > 0).sum())
                if positive:
                    top = best_first(scores, index.ids, min(n, positive), index.id_rank)
                    # Whole-array conversions (float64, as float() of each float32 score was):
                    # a Python loop over every matching item cost ~0.8 ms at 2,000 skills.
                    found = dict(zip(index.id_array[top].tolist(),
                                     (scores[top].astype(np.float64) / best_possible).tolist()))
            scored = delta.scores(query, stats) if delta is not None else None
            if scored is not None:
                mirror = self._mirror()
                scores, best_possible = scored
                for row, value in enumerate(scores):
                    item_id = delta.ids[row]
                    if value > 0 and (not where or matches(where, mirror[item_id][1])):
                        found[item_id] = float(value) / best_possible
        if len(found) > n:
            found = dict(sorted(found.items(), key=lambda kv: (-kv[1], kv[0]))[:n])
        return found

    def held(self, item_id: str, terms: Iterable[str]) -> set[str]:
        """Which of `terms` (tokens as `skillbank.keyword.tokenize` gives them) the item's keyword
        text holds, read from its BM25 row (the delta's, for an item written since the full
        build): no text is tokenised again. Empty for an item the index does not hold."""
        with self._lock:
            index = self.full_index()
            source = self.delta_index() if item_id in self.changed else index
            row = None if source is None else source.position.get(item_id)
            if row is None:
                return set()
            wanted = {source.vocabulary[t]: t for t in terms if t in source.vocabulary}
            held = source.row_terms[source.row_ptr[row]:source.row_ptr[row + 1]].tolist()
            return {wanted[i] for i in held if i in wanted}

