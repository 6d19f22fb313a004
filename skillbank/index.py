"""The search index: one Chroma collection per memory, plus BM25, fused by reciprocal rank.

Chroma holds the vectors and the filterable metadata (and is the only thing that survives a
restart); BM25 is rebuilt in memory from the documents Chroma stores, lazily and only after a
change. Local Chroma has no keyword search, and dense search alone misses exact names and rare
terms while keyword search alone misses paraphrases: fusing ranks gets both without having to
calibrate one score against the other.

An item may be embedded as several texts (a skill's summary and the sections of a long body);
its dense score is the best of its texts. Items are what callers see; chunks stay in here.
"""

from __future__ import annotations

import dataclasses
import logging
import threading
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Callable, Iterable, Iterator, Sequence
from urllib.parse import urlparse

import numpy as np

from skillbank.embeddings import ModelUnavailableError, embed_query, embed_texts, fingerprint
from skillbank.errors import EmbeddingMismatchError, IndexError_  # noqa: F401 - re-exported
from skillbank.filters import matches  # noqa: F401 - re-exported
from skillbank.index_outage import clear_outage, is_outage
from skillbank.index_ownership import OWNER_KEY
from skillbank.keyword import (  # noqa: F401 - re-exported
    TOKENIZER_VERSION,
    KeywordStats,
    _Keyword,
    union_stats,
    keyword_format,
    tokenize,
)
from skillbank.fusion import (  # noqa: F401 - re-exported
    FUSED_SCALE,
    RRF_K,
    _rrf_fuse,
    _standardise,
    _z_fuse,
    best_first,
    fuse_candidates,
)

if TYPE_CHECKING:
    from skillbank.index_snapshot import KeywordSnapshot

log = logging.getLogger("skillbank.index")
#: How `dense_error` begins while a Chroma server does not answer.
CHROMA_DOWN = "the Chroma server does not answer"
#: Texts embedded per step while dense vectors fill in behind keyword search.
FILL_BATCH = 64
_warned_keyword_only = False
@dataclass
class IndexItem:
    """What a memory hands the index for one record."""

    id: str
    embed_texts: list[str]  # first: the main text; more: sections (best one wins)
    keyword_text: str
    metadata: dict[str, Any] = field(default_factory=dict)  # filterable fields + "hash"
    vectors: Any = None  # precomputed embeddings of embed_texts (skip embedding them again)


from skillbank.records import Hits  # noqa: E402 - re-exported: results cross processes as records


@dataclass
class IndexHit:
    id: str
    score: float  # fused rank score (higher is better), before any caller prior
    dense: float | None  # best cosine similarity of the item's texts, when it was a dense hit
    keyword: float | None  # BM25 normalised to 0..1 by the query's best possible score
    why: str  # "dense" | "keyword" | "both"
    metadata: dict[str, Any] = field(default_factory=dict)


def make_client(path: str | None = None, url: str | None = None) -> Any:
    """An embedded `PersistentClient` at `path`, or an `HttpClient` for a `chroma run` server."""
    import chromadb
    from chromadb.config import Settings as ChromaSettings

    chroma_settings = ChromaSettings(anonymized_telemetry=False, allow_reset=True)
    if url:
        parsed = urlparse(url if "://" in url else f"http://{url}")
        port = parsed.port or (443 if parsed.scheme == "https" else 8000)
        return chromadb.HttpClient(
            host=parsed.hostname or "127.0.0.1",
            port=port,
            ssl=parsed.scheme == "https",
            settings=chroma_settings,
        )
    if path is None:
        return chromadb.EphemeralClient(settings=chroma_settings)
    return chromadb.PersistentClient(path=str(path), settings=chroma_settings)


class HybridIndex:
    """Dense (Chroma) + keyword (BM25) search over one collection of items."""

    def __init__(self, client: Any, name: str, embedding_function: Any, *,
                 shared: bool = False, snapshot: "KeywordSnapshot | None" = None,
                 owner: str | None = None, adopt_untagged: bool = True) -> None:
        self.client = client
        # Ownership (skillbank.index_ownership): entries are tagged with `owner`; this index
        # sees, syncs and deletes only its own. `adopt_untagged`: the collection is this
        # owner's alone, so entries written before tags existed are its own too.
        self.owner = owner
        self._adopt = adopt_untagged
        # The collection holds (or, when shared by configuration, may hold) entries that are
        # not ours: queries filter by owner.
        self._foreign = owner is not None and not adopt_untagged
        # On a Chroma server other processes write too: an id this process has not seen is
        # looked up in Chroma before it is called missing.
        self.shared = shared
        self.name = name
        self.embedding_function = embedding_function
        self._lock = threading.RLock()
        self._collection = self._open_collection()
        self._mirror: dict[str, tuple[str, dict[str, Any]]] | None = None
        self._keyword: _Keyword | None = None  # BM25 over every item, built lazily
        # Items written since that build: their rows in it are stale, and they are scored by a
        # small second BM25 instead, so a write costs a rebuild of the delta, not of everything.
        self._changed: set[str] = set()
        self._delta: _Keyword | None = None
        self._stats_cache: tuple[Any, KeywordStats] | None = None  # see _keyword_stats
        self._chunks = 0  # entries in the collection (items x their texts), kept with the mirror
        self._masks: dict[str, np.ndarray] = {}  # BM25 filter masks per `where`, per version
        # The mirror and BM25 saved by the last process (embedded mode only; see
        # skillbank.index_snapshot). `_unsaved`: this process has state the snapshot lacks.
        self._snapshot = None if shared else snapshot
        self._unsaved = False
        self._in_write = self._write_failed = False
        # Items keyword search knows but Chroma does not hold yet (or holds an older version
        # of): staged by `stage`, embedded by `fill`. Their mirror metadata counts only the
        # chunks Chroma really holds (0 for a new item), so deletes and updates stay exact.
        self._pending: dict[str, IndexItem] = {}
        self._fill_lock = threading.Lock()
        self.dense_error: str | None = None  # why dense search is off (keyword-only mode)
        #: Called after every write (server mode: tells other processes through the change feed).
        self.after_write: Any = None
        self.last_written: list[str] | None = None

    # Collection --------------------------------------------------------------------------------
    def _open_collection(self) -> Any:
        wanted = fingerprint(self.embedding_function)
        try:
            collection = self.client.get_or_create_collection(
                name=self.name,
                embedding_function=self.embedding_function,
                metadata={"skillbank_embedding": wanted, "hnsw:space": "cosine"},
            )
        except ValueError as exc:  # Chroma itself refuses a collection's other embedding
            if "embedding function conflict" not in str(exc).lower():
                raise
            recorded = str(exc).rsplit("persisted:", 1)[-1].strip()
            raise EmbeddingMismatchError.for_collection(self.name, recorded, wanted) from None
        recorded = (collection.metadata or {}).get("skillbank_embedding")
        if recorded and recorded != wanted:
            raise EmbeddingMismatchError.for_collection(self.name, recorded, wanted)
        return collection

    def reset(self) -> None:
        """Drop every vector; the caller re-adds from its files (reindex)."""
        with self._lock:
            self._before_write()
            if self._foreign or not self._adopt:  # others' entries live here: drop only ours
                self._delete_own_entries()
            else:
                try:
                    self.client.delete_collection(self.name)
                except Exception:
                    pass
            self._collection = self._open_collection()
            self._mirror = {}
            self._keyword = None
            self._chunks = 0
            self._pending.clear()
            self._write_failed = False  # everything is re-added from the files
            self._write_done()

    def count(self) -> int:
        return len(self._load_mirror())

    # Ownership ---------------------------------------------------------------------------------
    def _owns(self, meta: dict[str, Any] | None) -> bool:
        """Whether an entry is this index's to show, sync and delete."""
        if self.owner is None:
            return True
        tag = (meta or {}).get(OWNER_KEY)
        return tag == self.owner or (tag is None and self._adopt)

    def _tag(self, meta: dict[str, Any]) -> dict[str, Any]:
        if self.owner is not None:
            meta[OWNER_KEY] = self.owner
        return meta

    def _owned_where(self, where: dict[str, Any] | None) -> dict[str, Any] | None:
        """`where`, narrowed to this owner's entries when the collection holds others'."""
        if not self._foreign or self.owner is None:
            return where or None
        mine = {OWNER_KEY: self.owner}
        return {"$and": [where, mine]} if where else mine

    def _delete_own_entries(self) -> None:
        page = self._batch_size()
        while True:
            got = self._collection.get(where={OWNER_KEY: self.owner}, limit=page, include=[])
            if not got["ids"]:
                break
            self._collection.delete(ids=got["ids"])

    def _batch_size(self) -> int:
        try:
            return max(1, min(int(self.client.get_max_batch_size()), 5000))
        except Exception:
            return 1000

    @clear_outage("this memory's index could not be read")
    def _load_mirror(self) -> dict[str, tuple[str, dict[str, Any]]]:
        """Keyword texts and metadata of every item, read once from Chroma, then kept current."""
        with self._lock:
            if self._mirror is not None:
                return self._mirror
            if self._snapshot is not None:
                restored = self._snapshot.load(str(self._collection.id), self._collection.count(),
                                               keyword_format())
                if restored is not None:
                    self._mirror, self._chunks = restored.mirror, restored.chunks
                    if restored.keyword is not None:
                        self._keyword, self._changed, self._delta = restored.keyword, set(), None
                    return self._mirror
                self._unsaved = True  # whatever is built below is worth saving at close
            mirror: dict[str, tuple[str, dict[str, Any]]] = {}
            page = self._batch_size()
            offset = chunks = 0
            untagged: dict[str, dict[str, Any]] = {}
            while True:
                # No `where`: filtering in Chroma costs more than skipping section rows here.
                got = self._collection.get(
                    include=["documents", "metadatas"], limit=page, offset=offset
                )
                for item_id, doc, meta in zip(got["ids"], got["documents"], got["metadatas"]):
                    if not self._owns(meta):
                        self._foreign = True  # another deployment's: never shown, never deleted
                        continue
                    chunks += 1
                    if self.owner is not None and (meta or {}).get(OWNER_KEY) is None:
                        untagged[item_id] = dict(meta or {})
                    if (meta or {}).get("chunk", 0) == 0:
                        mirror[item_id] = (doc or "", dict(meta or {}))
                if len(got["ids"]) < page:
                    break
                offset += page
            if untagged and self._foreign:  # queries filter by owner now: tag what we adopted
                ids = list(untagged)
                for start in range(0, len(ids), page):
                    batch = ids[start:start + page]
                    self._collection.update(ids=batch,
                                            metadatas=[self._tag(untagged[i]) for i in batch])
                for item_id in mirror:
                    if item_id in untagged:
                        self._tag(mirror[item_id][1])
            self._mirror = mirror
            self._chunks = chunks
            return mirror

    def ids(self) -> list[str]:
        return list(self._load_mirror())

    def metadata(self, item_id: str) -> dict[str, Any] | None:
        entry = self._load_mirror().get(item_id)
        if entry is None and self.shared:
            entry = self._fetch(item_id)
        return None if entry is None else entry[1]

    def ids_where(self, where: dict[str, Any], page: int = 200) -> Iterator[str]:
        """Ids of the items whose metadata match `where`, by an exact filter (no vector search),
        a page at a time: for finding an item by a key where the nearest-neighbour graph is
        approximate (many near-identical vectors)."""
        self._load_mirror()
        offset = 0
        while True:
            got = self._collection.get(where=self._owned_where({"$and": [where, {"chunk": 0}]}),
                                       limit=page, offset=offset, include=[])
            yield from got["ids"]
            if len(got["ids"]) < page:
                return
            offset += page

    @clear_outage("this memory's index could not be read")
    def _fetch(self, item_id: str) -> tuple[str, dict[str, Any]] | None:
        """Read one item another process wrote to a shared server, and keep it."""
        got = self._collection.get(ids=[item_id], include=["documents", "metadatas"])
        if not got["ids"] or not self._owns(got["metadatas"][0]):
            return None
        entry = (got["documents"][0] or "", dict(got["metadatas"][0] or {}))
        with self._lock:
            mirror = self._load_mirror()
            if item_id not in mirror:
                mirror[item_id] = entry
                self._chunks += int(entry[1].get("chunks", 1))
                self._note_changed([item_id])
        return entry

    def hashes(self) -> dict[str, str]:
        return {i: str(m.get("hash", "")) for i, (_, m) in self._load_mirror().items()}

    # Writes ------------------------------------------------------------------------------------
    @clear_outage("the change was not written to the index")
    def upsert(self, items: Sequence[IndexItem]) -> int:
        """Add or replace items; returns how many texts were embedded."""
        if not items:
            return 0
        with self._lock:
            mirror = self._load_mirror()
            texts = [text or " " for item in items for text in item.embed_texts[:32] or [" "]]
            if all(item.vectors is not None for item in items):
                vectors = np.concatenate([np.asarray(item.vectors, dtype=np.float32).reshape(
                    len(item.embed_texts[:32] or [" "]), -1) for item in items])
                embedded = 0
            else:
                try:
                    vectors = embed_texts(self.embedding_function, texts)
                except ModelUnavailableError as exc:  # keyword-only until the model is back
                    self._model_unavailable(exc)
                    self.stage(items)
                    return 0
                self.dense_error = None
                embedded = len(texts)
            self._before_write()
            ids: list[str] = []
            docs: list[str] = []
            metas: list[dict[str, Any]] = []
            stale: list[str] = []
            for item in items:
                chunk_texts = item.embed_texts[:32] or [" "]
                old = mirror.get(item.id)
                old_chunks = int(old[1].get("chunks", 1)) if old else 0
                for number, text in enumerate(chunk_texts):
                    meta = self._tag({k: v for k, v in item.metadata.items() if v is not None})
                    meta.update(parent=item.id, chunk=number, chunks=len(chunk_texts))
                    ids.append(item.id if number == 0 else f"{item.id}#{number}")
                    docs.append(item.keyword_text if number == 0 else text)
                    metas.append(meta)
                stale.extend(f"{item.id}#{n}" for n in range(len(chunk_texts), old_chunks))
                self._chunks += len(chunk_texts) - old_chunks
            step = self._batch_size()
            for start in range(0, len(ids), step):
                self._collection.upsert(
                    ids=ids[start : start + step],
                    embeddings=vectors[start : start + step],
                    documents=docs[start : start + step],
                    metadatas=metas[start : start + step],
                )
            if stale:
                self._collection.delete(ids=stale)
            for item in items:
                meta = self._tag({k: v for k, v in item.metadata.items() if v is not None})
                meta.update(parent=item.id, chunk=0, chunks=len(item.embed_texts[:32] or [" "]))
                mirror[item.id] = (item.keyword_text, meta)
                self._pending.pop(item.id, None)
            self._note_changed(item.id for item in items)
            self._write_done([item.id for item in items])
            return embedded

    def stage(self, items: Sequence[IndexItem]) -> None:
        """Make items searchable by keyword now; their vectors come later (`fill`).

        This is what makes a first run useful in seconds: parsing a thousand files is quick,
        embedding them is not. Nothing is written to Chroma, so an interrupted first run loses
        no embedding work: what `fill` wrote is in Chroma (with its hash), the rest is staged
        again by the next sync and embedded once.
        """
        if not items:
            return
        with self._lock:
            mirror = self._load_mirror()
            for item in items:
                old = mirror.get(item.id)
                in_chroma = 0 if old is None else int(old[1].get("chunks", 1))
                meta = self._tag({k: v for k, v in item.metadata.items() if v is not None})
                meta.update(parent=item.id, chunk=0, chunks=in_chroma)
                mirror[item.id] = (item.keyword_text, meta)
                self._pending[item.id] = item
            self._note_changed(item.id for item in items)

    @property
    def pending(self) -> int:
        """How many items are searchable by keyword but not (yet) by their current vectors."""
        return len(self._pending)

    @property
    def dense_complete(self) -> bool:
        return not self._pending and self.dense_error is None

    def fill(self, batch: int = FILL_BATCH,
             progress: "Callable[[int, int], None] | None" = None,
             stop: threading.Event | None = None, wait: bool = True) -> int:
        """Embed staged items, shortest texts first, a batch at a time; returns texts embedded.

        Searches run between batches (the index lock is not held while the model works), and
        each batch is in Chroma as soon as it is embedded, so hybrid search takes over item by
        item. Stops early when `stop` is set or the model is unavailable (keyword-only mode).
        With `wait=False` it returns at once if another thread is filling: that one takes
        whatever was staged meanwhile before it stops.
        """
        embedded = done = 0
        if not self._fill_lock.acquire(blocking=wait):
            return 0
        try:
            while stop is None or not stop.is_set():
                with self._lock:
                    todo = sorted(self._pending.values(),
                                  key=lambda it: (sum(len(t) for t in it.embed_texts[:32]), it.id))
                    chunk = todo[:batch]
                total = done + len(todo)
                if not chunk:
                    break
                texts = [t or " " for item in chunk for t in item.embed_texts[:32] or [" "]]
                try:
                    vectors = embed_texts(self.embedding_function, texts)
                except ModelUnavailableError as exc:
                    self._model_unavailable(exc)
                    break
                self.dense_error = None
                ready, row = [], 0
                for item in chunk:
                    width = len(item.embed_texts[:32] or [" "])
                    ready.append(dataclasses.replace(item, vectors=vectors[row:row + width]))
                    row += width
                with self._lock:  # an item staged again meanwhile waits for its new text
                    fresh = [new for new, old in zip(ready, chunk) if self._pending.get(old.id) is old]
                    self.upsert(fresh)
                embedded += len(texts)
                done += len(chunk)
                if progress is not None:
                    progress(done, total)
        finally:
            self._fill_lock.release()
        return embedded

    def _model_unavailable(self, exc: Exception) -> None:
        """Switch to keyword-only search; say so once per process on stderr (a log warning)."""
        global _warned_keyword_only
        self.dense_error = str(exc)
        if not _warned_keyword_only:
            _warned_keyword_only = True
            log.warning("skillbank: no embedding model, searching by keyword only until one is "
                        "available (%s)", exc)

    @clear_outage("the change was not written to the index")
    def update_metadata(self, item_id: str, **fields: Any) -> None:
        """Change filterable fields of an item (all its chunks) without embedding again."""
        with self._lock:
            mirror = self._load_mirror()
            if item_id not in mirror:
                raise KeyError(item_id)
            self._before_write()
            text, meta = mirror[item_id]
            meta = {**meta, **fields}
            self._masks.clear()
            pending = self._pending.get(item_id)
            if pending is not None:  # written with these fields once it is embedded
                self._pending[item_id] = dataclasses.replace(
                    pending, metadata={**pending.metadata, **fields})
            in_chroma = int(meta.get("chunks", 1))
            chunk_ids = [item_id] + [f"{item_id}#{n}" for n in range(1, in_chroma)]
            metas = []
            for number in range(len(chunk_ids)):
                metas.append({k: v for k, v in {**meta, "chunk": number}.items() if v is not None})
            if in_chroma:
                self._collection.update(ids=chunk_ids, metadatas=metas)
            mirror[item_id] = (text, meta)
            self._write_done([item_id])

    @clear_outage("the removal was not written to the index")
    def delete(self, item_ids: Iterable[str]) -> int:
        with self._lock:
            mirror = self._load_mirror()
            self._before_write()
            doomed: list[str] = []
            removed = 0
            for item_id in item_ids:
                entry = mirror.pop(item_id, None)
                self._pending.pop(item_id, None)
                if entry is None:
                    continue
                removed += 1
                self._chunks -= int(entry[1].get("chunks", 1))
                doomed.append(item_id)
                doomed.extend(f"{item_id}#{n}" for n in range(1, int(entry[1].get("chunks", 1))))
            step = self._batch_size()
            for start in range(0, len(doomed), step):
                self._collection.delete(ids=doomed[start : start + step])
            if removed:
                self._note_changed(doomed)
            self._write_done([d for d in doomed if "#" not in d])
            return removed

    def _before_write(self) -> None:
        """A write is coming: the saved snapshot stops being the truth until the next save."""
        if self._snapshot is not None:
            self._snapshot.mark_dirty()
            self._unsaved = True
            # Still set from the last write: that one failed part-way, so Chroma and the mirror
            # may differ for the rest of this process. Nothing it holds is saved.
            self._write_failed = self._write_failed or self._in_write
            self._in_write = True

    def _write_done(self, written: list[str] | None = None) -> None:
        self._in_write = False
        #: The items the last write touched (None: any of them), for `after_write` to announce.
        self.last_written = written
        if self.after_write is not None:
            self.after_write()

    @clear_outage("this memory's index could not be read")
    def refresh(self, item_ids: Iterable[str]) -> None:
        """Re-read just these items from Chroma: another worker wrote them (team mode).

        What `invalidate` does for everything, for a few items: their mirror rows are replaced
        (or dropped when gone) and they are scored by the delta BM25, so hearing of another
        worker's write costs one `get` of those ids instead of reloading the whole collection
        and rebuilding BM25."""
        ids = list(dict.fromkeys(item_ids))
        with self._lock:
            if self._mirror is None or not ids:
                return  # nothing loaded yet: the first read loads everything fresh
            found: dict[str, tuple[str, dict[str, Any]]] = {}
            step = self._batch_size()
            for start in range(0, len(ids), step):
                got = self._collection.get(ids=ids[start:start + step],
                                           include=["documents", "metadatas"])
                for item_id, doc, meta in zip(got["ids"], got["documents"], got["metadatas"]):
                    if self._owns(meta):
                        found[item_id] = (doc or "", dict(meta or {}))
            for item_id in ids:
                old = self._mirror.pop(item_id, None)
                if old is not None:
                    self._chunks -= int(old[1].get("chunks", 1))
                new = found.get(item_id)
                if new is not None:
                    self._mirror[item_id] = new
                    self._chunks += int(new[1].get("chunks", 1))
            self._masks.clear()
            self._note_changed(ids)

    def invalidate(self) -> None:
        """Forget what this process holds in memory (mirror, BM25): another process wrote.

        The next read loads it again from Chroma (server mode's change feed calls this)."""
        with self._lock:
            self._mirror = None
            self._keyword = None
            self._changed = set()
            self._delta = None
            self._masks.clear()

    def save_snapshot(self) -> None:
        """Save the mirror and BM25 for the next process, if this one has anything new.

        Called by ``Skillbank.close``; cheap when nothing changed (no file is written)."""
        with self._lock:
            if (self._snapshot is None or self._mirror is None or not self._unsaved
                    or self._in_write or self._write_failed or not self._snapshot.saves
                    or self._pending):
                # After a failed write DIRTY stays: the next process rebuilds. Staged items
                # are not in Chroma: the next process finds them missing and stages them again.
                return
            exact = None if self._changed else self._keyword  # never the delta approximation
            self._snapshot.save(str(self._collection.id), self._mirror, self._chunks, exact,
                                keyword_format())
            self._unsaved = False

    def _note_changed(self, item_ids: Iterable[str]) -> None:
        """Mark items written or removed since the full BM25 build; rebuild when many are."""
        if self._keyword is None:
            return
        self._changed.update(item_ids)
        self._delta = None
        if len(self._changed) > max(DELTA_MIN, DELTA_SHARE * len(self._keyword.ids)):
            self._keyword = None

    # Search ------------------------------------------------------------------------------------
    def _keyword_index(self) -> _Keyword:
        with self._lock:
            if self._keyword is None:
                mirror = self._load_mirror()
                ids = list(mirror)
                self._keyword = _Keyword(ids, [mirror[i][0] for i in ids])
                self._changed = set()
                self._delta = None
                self._masks.clear()
                if self._snapshot is not None:
                    self._unsaved = True  # a BM25 worth keeping for the next process
            return self._keyword

    def _delta_index(self) -> _Keyword | None:
        if not self._changed:
            return None
        if self._delta is None:
            mirror = self._load_mirror()
            ids = sorted(i for i in self._changed if i in mirror)
            self._delta = _Keyword(ids, [mirror[i][0] for i in ids]) if ids else None
        return self._delta

    def _keyword_stats(self, index: _Keyword, delta: _Keyword | None) -> KeywordStats:
        """BM25 statistics of the items as they are now (the full build minus its stale rows,
        plus the delta), so keyword scores after a write equal a fresh build's: the delta's own
        statistics (a few items) would inflate the idf of every word a new item brings."""
        if not self._changed:
            return index.stats()
        key = (index, delta, len(self._changed))
        cached = self._stats_cache
        if cached is not None and all(a is b for a, b in zip(cached[0][:2], key[:2])) \
                and cached[0][2] == key[2]:
            return cached[1]
        stale = [index.position[i] for i in self._changed if i in index.position]
        stats = union_stats(index, stale, delta)
        self._stats_cache = (key, stats)
        return stats

    def dense(
        self, query_vector: np.ndarray, n: int, where: dict[str, Any] | None = None
    ) -> dict[str, float]:
        """Best cosine similarity per item among its `n` nearest texts."""
        best: dict[str, float] = {}
        for text_id, similarity in self.dense_texts(query_vector, n, where).items():
            parent = text_id.split("#", 1)[0]
            if similarity > best.get(parent, -2.0):
                best[parent] = similarity
        return best

    def dense_texts(
        self, query_vector: np.ndarray, n: int, where: dict[str, Any] | None = None
    ) -> dict[str, float]:
        """Cosine similarity of each of the `n` nearest texts, by text id: an item's first
        text is `<id>`, its k-th `<id>#<k>`. For a memory whose items embed texts of different
        kinds (an experience's task and its lessons) that need different evidence.

        Only distances are fetched: asking Chroma for metadata too made a 1,000-result query
        20x slower.
        """
        self._load_mirror()
        total = self._chunks
        if total <= 0 or n <= 0:
            return {}
        result = self._collection.query(
            query_embeddings=[query_vector],
            n_results=min(n, total),
            where=self._owned_where(where),
            include=["distances"],
        )
        stale = self._pending  # Chroma still holds their old text's vector, or none
        return {text_id: 1.0 - float(distance)
                for text_id, distance in zip(result["ids"][0], result["distances"][0])
                if text_id.split("#", 1)[0] not in stale}

    def _dense_or_none(self, vector: np.ndarray, n: int,
                       where: dict[str, Any] | None) -> dict[str, float] | None:
        """Dense scores, or None while a Chroma server does not answer (issue 24).

        The keyword side lives in this process (the mirror and BM25), so a search can still
        answer by keyword, saying so through `dense_error` and `Hits.dense_complete`, instead
        of failing every read while the server is down."""
        try:
            found = self.dense(vector, n, where)
        except Exception as exc:
            if not self.shared or not is_outage(exc):
                raise
            first = (str(exc).strip().splitlines() or [type(exc).__name__])[0]
            if not (self.dense_error or "").startswith(CHROMA_DOWN):
                log.warning("skillbank: the Chroma server does not answer (%s); searching by "
                            "keyword only until it does", first)
            self.dense_error = f"{CHROMA_DOWN} ({first}); searching by keyword only"
            return None
        if (self.dense_error or "").startswith(CHROMA_DOWN):
            self.dense_error = None  # back
        return found

    def _mask(self, index: _Keyword, where: dict[str, Any]) -> np.ndarray:
        """Which BM25 rows pass `where`, computed once per filter until the index changes."""
        import json

        key = json.dumps(where, sort_keys=True, default=str)
        mask = self._masks.get(key)
        if mask is None:
            mirror = self._load_mirror()
            mask = np.fromiter(
                (matches(where, mirror[i][1]) if i in mirror else False for i in index.ids),
                dtype=bool,
                count=len(index.ids),
            )
            if len(self._masks) > 64:
                self._masks.clear()
            self._masks[key] = mask
        return mask

    def keyword(
        self, query: str, n: int, where: dict[str, Any] | None = None
    ) -> dict[str, float]:
        """Top `n` items by BM25, normalised to 0..1, filtered like the dense side."""
        with self._lock:
            index = self._keyword_index()
            delta = self._delta_index()
            stats = self._keyword_stats(index, delta)  # of all items now: exact, as a rebuild
            found: dict[str, float] = {}
            scored = index.scores(query, stats)
            if scored is not None:
                scores, best_possible = scored
                if self._changed:
                    stale = [index.position[i] for i in self._changed if i in index.position]
                    scores = scores.copy()
                    scores[stale] = 0.0
                if where:
                    scores = np.where(self._mask(index, where), scores, 0.0)
                positive = int((scores > 0).sum())
                if positive:
                    top = best_first(scores, index.ids, min(n, positive))
                    found = {index.ids[i]: float(scores[i]) / best_possible for i in top}
            scored = delta.scores(query, stats) if delta is not None else None
            if scored is not None:
                mirror = self._load_mirror()
                scores, best_possible = scored
                for row, value in enumerate(scores):
                    item_id = delta.ids[row]
                    if value > 0 and (not where or matches(where, mirror[item_id][1])):
                        found[item_id] = float(value) / best_possible
        if len(found) > n:
            found = dict(sorted(found.items(), key=lambda kv: (-kv[1], kv[0]))[:n])
        return found

    def search(
        self,
        query: str,
        k: int = 5,
        *,
        where: dict[str, Any] | None = None,
        candidates: int = 50,
        fusion: str = "rrf",
        dense_weight: float = 1.0,
        keyword_weight: float = 1.0,
        query_vector: np.ndarray | None = None,
    ) -> Hits:
        """Fuse dense and keyword evidence and return the best `k` items (all when k=0).

        `fusion="rrf"` (reciprocal rank) needs no calibration and suits large collections where
        only the top candidates are seen. `fusion="z"` standardises each side's scores over
        every item and averages them, which keeps *how much* better an item is, not just its
        place; it needs (nearly) every item's score, so it is for small collections such as
        skill libraries. On the routing set it lifted R@1 from 0.80 to 0.90 (docs/benchmarks.md).
        The result also carries the best raw dense and keyword evidence, for "nothing fits".
        """
        hits = Hits()
        if not query or not query.strip():
            return hits
        with self._lock:
            mirror = self._load_mirror()
            if not mirror:
                return hits
        vector = query_vector
        if vector is None:
            try:  # outside the lock: a model still loading must not hold up keyword search
                vector = embed_query(self.embedding_function, query)
            except ModelUnavailableError as exc:
                self._model_unavailable(exc)
        with self._lock:
            mirror = self._load_mirror()
            dense: dict[str, float] = {}
            if fusion == "z":
                if vector is not None:
                    dense = self._dense_or_none(vector, Z_CANDIDATES, where)
                    vector = None if dense is None else vector
                    dense = dense or {}
                keyword = self.keyword(query, len(mirror), where)
                ids, scores = _z_fuse(dense, keyword, dense_weight, keyword_weight, mirror,
                                      where, set(self._pending) if vector is not None else set(mirror))
            else:
                if vector is not None:
                    dense = self._dense_or_none(vector, candidates * 2, where)
                    vector = None if dense is None else vector
                    dense = dense or {}
                keyword = self.keyword(query, candidates, where)
                ids, scores = _rrf_fuse(dense, keyword, dense_weight, keyword_weight, mirror,
                                        where)
            hits.dense_complete = vector is not None and not self._pending
            hits.pending = len(mirror) if vector is None else len(self._pending)
        hits.best_dense = max(dense.values(), default=0.0)
        hits.best_keyword = max(keyword.values(), default=0.0)
        for position in best_first(scores, ids, k):
            item_id = ids[position]
            in_dense, in_keyword = item_id in dense, item_id in keyword
            why = "both" if in_dense and in_keyword else ("dense" if in_dense else "keyword")
            hits.append(
                IndexHit(
                    id=item_id,
                    score=float(scores[position]),
                    dense=dense.get(item_id),
                    keyword=keyword.get(item_id),
                    why=why,
                    metadata=mirror[item_id][1],
                )
            )
        return hits


#: Written items are scored by a delta BM25 until they are this many, or this share of the whole.
DELTA_MIN = 2000
DELTA_SHARE = 0.2
#: How many nearest chunks z-fusion asks Chroma for; items beyond it get the lowest seen score.
Z_CANDIDATES = 1000
