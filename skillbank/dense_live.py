"""The live dense side of a small index: exact cosine over every vector, held in memory.

Asking Chroma for the nearest 1,000 texts was ~45% of a warm skill search at 2,000 skills
(HNSW plus the round trip through its bindings). For a collection of a few thousand vectors a
numpy matrix product over all of them is both quicker and exact (HNSW is approximate, so the
ranking is at least as right). The vectors are read from Chroma once, at the second search (the
first is answered by Chroma: a one-shot process never pays for the read, CHROMA_FIRST), and
kept current the way `keyword_live` keeps BM25 current: `LiveKeyword` tells this object of
every item written, removed, refreshed from another process (server mode's change feed) or of
the whole index being forgotten, and the changed items are read back from Chroma, so what is
ranked is always what Chroma holds.

Memory stays bounded: only collections of at most `MAX_TEXTS` texts are held (20,000 texts x
384 float32 dimensions is ~30 MB); a larger one keeps asking Chroma (`nearest` returns None).
The bank turns it on for the skill library and the guidelines (`enabled`, `bank.DENSE_IN_MEMORY`):
Chroma's query with a `where` filter made a rule search grow with the rule count (7.3 ms at 97
rules, 38.9 ms at 1,281, most of `context_for`). Experiences grow without end, and a process
restored from the keyword snapshot must not page every vector out of Chroma for them.
"""

from __future__ import annotations

import json
import threading
from typing import TYPE_CHECKING, Any

import numpy as np

from skillbank.filters import matches
from skillbank.index_ownership import owns

if TYPE_CHECKING:
    from skillbank.index import HybridIndex

#: Collections with more texts (items x their chunks) than this keep Chroma's query.
MAX_TEXTS = 20_000
#: Searches Chroma answers before the vectors are read (~0.3-0.6 s at 2,000 skills on a busy
#: machine): a one-shot process (a CLI search) asks once and never pays for the read.
CHROMA_FIRST = 1


class LiveDense:
    """Every vector of an index's collection as one normalised matrix, ranked exactly."""

    def __init__(self, index: "HybridIndex") -> None:
        # The index's collection, mirror, lock and ownership are read through it: `reset`
        # replaces the collection, and the mirror carries each item's current metadata.
        self._index = index
        self._lock: threading.RLock = index._lock
        self.matrix: np.ndarray | None = None  # rows: unit vectors, None until loaded
        self.ids: list[str] = []  # row -> text id (`<item>` or `<item>#<k>`)
        self._names = np.array([], dtype=object)  # the same as an array (set again when stale)
        self.stale: set[str] = set()  # items to read again from Chroma before the next search
        self._masks: dict[str, np.ndarray] = {}
        #: Off: every search asks Chroma (the bank holds skills and guidelines in memory).
        self.enabled = True
        self._asked = 0  # searches Chroma answered while nothing was loaded (CHROMA_FIRST)
        # (query, matrix, cosines) of the last search: a skill search asks twice with one vector
        # (the summaries alone, then every text for the body side) and pays for one product.
        self._last: tuple[np.ndarray, np.ndarray, np.ndarray] | None = None
        index._live.listeners.append(self)

    # Told by LiveKeyword ------------------------------------------------------------------------
    def note_changed(self, ids: list[str]) -> None:
        with self._lock:
            if self.matrix is not None:
                self.stale.update(i.split("#", 1)[0] for i in ids)
            self._masks.clear()

    def clear_masks(self) -> None:
        with self._lock:
            self._masks.clear()

    def invalidate(self) -> None:
        with self._lock:
            self.matrix, self.ids, self.stale = None, [], set()
            self._last = None
            self._names = np.array([], dtype=object)
            self._masks.clear()

    # Loading ----------------------------------------------------------------------------------
    def _rows(self, got: dict[str, Any]) -> tuple[list[str], list[np.ndarray]]:
        index = self._index
        ids, vectors = [], []
        for text_id, meta, vector in zip(got["ids"], got["metadatas"], got["embeddings"]):
            if owns(index.owner, index._adopt, meta) and vector is not None:
                ids.append(text_id)
                vectors.append(np.asarray(vector, dtype=np.float32))
        return ids, vectors

    @staticmethod
    def _unit(vectors: list[np.ndarray]) -> np.ndarray:
        if not vectors:
            return np.zeros((0, 0), dtype=np.float32)
        matrix = np.vstack(vectors).astype(np.float32)
        norms = np.linalg.norm(matrix, axis=1, keepdims=True)
        return matrix / np.where(norms > 0, norms, 1.0)

    def _load(self) -> None:
        collection, page = self._index._collection, self._index._batch_size()
        ids: list[str] = []
        vectors: list[np.ndarray] = []
        offset = 0
        while True:
            got = collection.get(include=["embeddings", "metadatas"], limit=page, offset=offset)
            more_ids, more = self._rows(got)
            ids += more_ids
            vectors += more
            if len(got["ids"]) < page:
                break
            offset += page
        self.matrix, self.ids, self.stale = self._unit(vectors), ids, set()
        self._names = np.array(ids, dtype=object)
        self._masks.clear()

    def _apply_stale(self) -> None:
        """Drop the changed items' rows and read their texts again from Chroma."""
        stale, self.stale = self.stale, set()
        got_ids: list[str] = []
        got_vectors: list[np.ndarray] = []
        step = self._index._batch_size()
        try:
            mirror = self._index._load_mirror()
            wanted: list[str] = []
            for item_id in stale:
                if item_id in mirror:
                    chunks = int(mirror[item_id][1].get("chunks", 1))
                    wanted += [item_id] + [f"{item_id}#{n}" for n in range(1, chunks)]
            for start in range(0, len(wanted), step):
                got = self._index._collection.get(ids=wanted[start:start + step],
                                                  include=["embeddings", "metadatas"])
                more_ids, more = self._rows(got)
                got_ids += more_ids
                got_vectors += more
        except BaseException:
            # Read again at the next search: a server that stopped answering here (the search
            # answered by keyword) lost them for good, and a rule written just before the
            # outage never ranked by its vector in this process again, hybrid as it said it
            # was (hunt-chromahttp #1, session 34).
            self.stale |= stale
            raise
        assert self.matrix is not None
        keep = [row for row, text_id in enumerate(self.ids) if text_id.split("#", 1)[0] not in stale]
        kept = self.matrix[keep] if len(self.ids) else self.matrix
        ids = [self.ids[row] for row in keep]
        if got_vectors:
            new = self._unit(got_vectors)
            kept = np.vstack([kept, new]) if len(kept) else new
            ids += got_ids
        self.matrix, self.ids = kept, ids
        self._names = np.array(ids, dtype=object)
        self._masks.clear()

    def _ready(self) -> bool:
        """Loaded and current; False for a collection too large to hold (Chroma answers)."""
        if not self.enabled:
            return False
        if self.matrix is None:
            if self._index._chunks > MAX_TEXTS or self._asked < CHROMA_FIRST:
                self._asked += 1
                return False
            self._load()
        if self.stale:
            self._apply_stale()
        if len(self.ids) > MAX_TEXTS:  # grew past the bound: let go, Chroma answers
            self.invalidate()
            return False
        return True

    def _mask(self, where: dict[str, Any]) -> np.ndarray:
        """Which rows pass `where`: a text's metadata is its item's (the mirror's, current after
        every metadata update) with its own chunk number, as Chroma stores it."""
        key = json.dumps(where, sort_keys=True, default=str)
        mask = self._masks.get(key)
        if mask is None:
            mirror = self._index._load_mirror()
            # Without a chunk clause all texts of an item pass or fail together: judged once
            # per item (a rule has ~3 texts; masks are rebuilt after every write, and learn
            # writes every time).
            by_text = '"chunk"' in key
            judged: dict[str, bool] = {}
            flags = []
            for text_id in self.ids:
                parent, _, chunk = text_id.partition("#")
                flag = None if by_text else judged.get(parent)
                if flag is None:
                    entry = mirror.get(parent)
                    flag = entry is not None and matches(
                        where, {**entry[1], "chunk": int(chunk) if chunk else 0})
                    judged[parent] = flag
                flags.append(flag)
            mask = np.array(flags, dtype=bool)
            if len(self._masks) > 64:
                self._masks.clear()
            self._masks[key] = mask
        return mask

    # Search -----------------------------------------------------------------------------------
    def declines(self) -> bool:
        """The collection is too large to hold: searches ask Chroma (and may share a query)."""
        return not self.enabled or self._index._chunks > MAX_TEXTS

    def nearest(self, vector: np.ndarray, n: int,
                where: dict[str, Any] | None = None) -> tuple[list[str], list[float]] | None:
        """The `n` nearest texts and their cosine distances (1 - cosine, as Chroma's), or None
        when this collection is too large to hold in memory (ask Chroma)."""
        with self._lock:
            if not self._ready():
                return None
            assert self.matrix is not None
            if not self.ids or n <= 0:
                return [], []
            query = np.asarray(vector, dtype=np.float32).reshape(-1)
            last = self._last
            if last is not None and last[1] is self.matrix and np.array_equal(last[0], query):
                similarity = last[2]
            else:
                norm = float(np.linalg.norm(query))
                # einsum, not `@`: BLAS threads woken right after the query's embedding (ONNX's
                # threads still spinning) cost ~2-5 ms on two busy cores; one thread ~0.1 ms.
                similarity = np.einsum("ij,j->i", self.matrix,
                                       query / norm if norm > 0 else query)
                self._last = (query.copy(), self.matrix, similarity)
            if where:
                mask = self._mask(where)
                similarity = np.where(mask, similarity, -np.inf)
                n = min(n, int(mask.sum()))
            n = min(n, len(self.ids))
            if n <= 0:
                return [], []
            top = np.argpartition(-similarity, n - 1)[:n] if n < len(self.ids) \
                else np.arange(len(self.ids))
            top = top[np.argsort(-similarity[top], kind="stable")]
            if len(self._names) != len(self.ids):
                self._names = np.array(self.ids, dtype=object)
            # Whole-array conversions: a Python loop over 1,000 numpy scalars cost more than the
            # matrix product.
            return self._names[top].tolist(), (1.0 - similarity[top].astype(np.float64)).tolist()
