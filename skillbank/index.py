"""The search index: one Chroma collection per memory, plus BM25, fused by reciprocal rank.

Chroma holds the vectors and the filterable metadata (and is the only thing that survives a
restart); BM25 is rebuilt in memory from the documents Chroma stores, lazily and only after a
change. Local Chroma has no keyword search, and dense search alone misses exact names and rare
terms while keyword search alone misses paraphrases: fusing ranks gets both without having to
calibrate one score against the other.

An item may be embedded as several texts (a skill's summary and the sections of a long body);
its dense score is the best of its texts. Items are what callers see; chunks stay in here.

This module is the Chroma side and the fusion; its parts with a job of their own live beside
it: BM25 kept current after every write (`keyword_live`), whose entries are this index's
(`index_ownership`), answering by keyword while a Chroma server is down (`index_outage`).
"""

from __future__ import annotations

import contextlib
import dataclasses
import logging
import threading
import time
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Callable, Iterable, Iterator, Mapping, Sequence

import numpy as np

from skillbank.embeddings import (
    ModelUnavailableError, embed_query, embed_texts, fingerprint, register_with_chroma,
)
from skillbank.errors import EmbeddingMismatchError, IndexError_  # noqa: F401 - re-exported
from skillbank.filters import matches  # noqa: F401 - re-exported
from skillbank import index_batch, index_fill, index_mirror
from skillbank.chroma_client import make_client  # noqa: F401 - re-exported
from skillbank.index_fill import FILL_BATCH, PARTIAL  # noqa: F401 - re-exported
from skillbank.index_outage import CHROMA_DOWN, clear_outage, dense_unless_down  # noqa: F401
from skillbank.index_gone import reopen_when_gone
from skillbank.index_ownership import OWNER_KEY, delete_owned, owned_where, owns, tag_entry
from skillbank.keyword import (  # noqa: F401 - re-exported
    TOKENIZER_VERSION, KeywordStats, _Keyword, union_stats, keyword_format, tokenize,
)
from skillbank.dense_live import LiveDense
from skillbank.keyword_live import DELTA_MIN, DELTA_SHARE, LiveKeyword  # noqa: F401 - re-exported
from skillbank.fusion import (  # noqa: F401 - re-exported
    FUSED_SCALE, RRF_K, _rrf_fuse, _standardise, _z_fuse, best_first, fuse_candidates,
)

if TYPE_CHECKING:
    from skillbank.index_snapshot import KeywordSnapshot

log = logging.getLogger("skillbank.index")
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


#: After a dense request to the server timed out (a stopped or frozen server, not a refused
#: connection), searches answer by keyword without asking it for DENSE_QUIET_SECONDS: each would
#: otherwise wait the whole timeout again. A refused connection fails at once, and is asked
#: again on the next search.
DENSE_QUIET_SECONDS = 30.0


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
        self._coll = None if client is None else self._open_collection()  # None: detached
        self._connect: Any = None  # how to reach the server again (index_mirror.open_index)
        self._detached, self._attach_after, self._unreached = False, 0.0, "not reached yet"
        self.on_attach: Callable[[], None] | None = None  # once a detached index reaches it
        self._mirror: dict[str, tuple[str, dict[str, Any]]] | None = None
        self._chunks = 0  # entries in the collection (items x their texts), kept with the mirror
        # The mirror and BM25 the last process saved (embedded only: skillbank.index_snapshot).
        self._snapshot = None if shared else snapshot
        # BM25 over the mirror, kept current after every write (skillbank.keyword_live).
        self._live = LiveKeyword(self._load_mirror, self._lock, self._snapshot)
        self._dense = LiveDense(self)  # exact cosine in memory for a small collection (dense_live)
        self._in_write = self._write_failed = False
        self.gone = False  # its server lost the collection: the memory re-syncs (index_gone)
        # Items keyword search knows but Chroma does not hold yet (or holds an older version
        # of): staged by `stage`, embedded by `fill`. Their mirror metadata counts only the
        # chunks Chroma really holds (0 for a new item), so deletes and updates stay exact.
        self._pending: dict[str, IndexItem] = {}
        # Items in Chroma by their first text alone (PARTIAL), their other texts still to embed:
        # the item with its first text's vector (`fill(first_texts_first=True)`).
        self._rest: dict[str, IndexItem] = {}
        # Items deleted while the server was not reached, for Chroma once it answers.
        self._doomed: set[str] = set()
        self._fill_lock = threading.Lock()
        self.dense_error: str | None = None  # why dense search is off (keyword-only mode)
        self._dense_quiet_until = 0.0  # a server that timed out: not asked again until then
        self._quiet_reason: str | None = None
        # Concurrent searches share Chroma queries (skillbank.index_batch; read by dense_texts).
        self._combiner = index_batch.Combiner()
        self._prefetched: dict[Any, tuple[list[str], list[float]]] = {}
        #: Called after every write (server mode: tells other processes through the change feed).
        self.after_write: Any = None
        self.last_written: list[str] | None = None

    # Collection --------------------------------------------------------------------------------
    @property
    def _collection(self) -> Any:
        if self._coll is None:  # detached: a write fails as one during an outage does
            raise index_mirror.unreached(self)
        return self._coll

    def _open_collection(self) -> Any:
        register_with_chroma()  # Chroma knows our embeddings by name (not at import: #27)
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
        index_mirror.attach_if_due(self)
        with self._lock:
            self._before_write()
            # Others' entries live here, or other workers hold this collection open (a server:
            # dropping it would leave them a handle on a deleted collection): drop only ours.
            if self._foreign or not self._adopt or self.shared:
                delete_owned(self._collection, self.owner, self._batch_size())
            else:
                with contextlib.suppress(Exception):  # not there: nothing to drop
                    self.client.delete_collection(self.name)
            self._coll = self._open_collection()
            self._mirror = {}
            self._live.invalidate()
            self._chunks = 0
            self._pending.clear()
            self._rest.clear()
            self._write_failed = False  # everything is re-added from the files
            self._write_done()

    def count(self) -> int:
        return len(index_mirror.current(self))

    def _batch_size(self) -> int:
        try:
            return max(1, min(int(self.client.get_max_batch_size()), 5000))
        except Exception:
            return 1000

    @clear_outage("this memory's index could not be read")
    def _load_mirror(self) -> dict[str, tuple[str, dict[str, Any]]]:
        """Keyword texts and metadata of every item, read once from Chroma, then kept current;
        while its server has not answered, what the memory staged (skillbank.index_mirror)."""
        with self._lock:
            if self._mirror is not None:
                return self._mirror
            if self._coll is None:
                return index_mirror.detach(self, self._unreached)
            return index_mirror.read_or_detach(self)

    def ids(self) -> list[str]:
        return list(index_mirror.current(self))

    def has_sections(self) -> bool:
        """Some item is embedded as more than one text (more entries than embedded items)."""
        mirror = self._load_mirror()
        return self._chunks > len(mirror) - len(self._pending)

    def metadata(self, item_id: str) -> dict[str, Any] | None:
        entry = index_mirror.current(self).get(item_id)
        if entry is None and self.shared:  # detached: ChromaUnavailableError, as when down
            entry = self._fetch(item_id)
        return None if entry is None else entry[1]

    def ids_where(self, where: dict[str, Any], page: int = 200) -> Iterator[str]:
        """Ids of the items whose metadata match `where`, by an exact filter (no vector search),
        a page at a time: for finding an item by a key where the nearest-neighbour graph is
        approximate (many near-identical vectors). While the server does not answer, from the
        keyword side's mirror (`index_mirror.ids_where`)."""
        return index_mirror.ids_where(self, where, page)

    @clear_outage("this memory's index could not be read")
    def _fetch(self, item_id: str) -> tuple[str, dict[str, Any]] | None:
        """Read one item another process wrote to a shared server, and keep it."""
        got = self._collection.get(ids=[item_id], include=["documents", "metadatas"])
        if not got["ids"] or not owns(self.owner, self._adopt, got["metadatas"][0]):
            return None
        entry = (got["documents"][0] or "", dict(got["metadatas"][0] or {}))
        with self._lock:
            mirror = self._load_mirror()
            if item_id not in mirror:
                mirror[item_id] = entry
                self._chunks += int(entry[1].get("chunks", 1))
                self._live.note_changed([item_id])
        return entry

    def hashes(self) -> dict[str, str]:
        return {i: str(m.get("hash", "")) for i, (_, m) in index_mirror.current(self).items()}

    # Writes ------------------------------------------------------------------------------------
    @clear_outage("the change was not written to the index")
    def upsert(self, items: Sequence[IndexItem]) -> int:
        """Add or replace items; returns how many texts were embedded."""
        if not items:
            return 0
        index_mirror.attach_if_due(self)
        if self._detached:  # not reached: refused before any embedding work
            raise index_mirror.unreached(self)
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
                # Chroma's upsert merges metadata into what an id had: a key the item no longer
                # carries (`partial` once a skill's sections are in) is removed only by a None.
                # Left in place, every reopen read a finished skill as half-embedded and a
                # sync embedded the whole library again.
                dropped = {k: None for k in (old[1] if old else {})
                           if item.metadata.get(k) is None and k != OWNER_KEY}
                for number, text in enumerate(chunk_texts):
                    meta = tag_entry(self.owner, {k: v for k, v in item.metadata.items()
                                                  if v is not None})
                    meta.update(parent=item.id, chunk=number, chunks=len(chunk_texts))
                    meta = {**dropped, **meta}
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
                meta = tag_entry(self.owner, {k: v for k, v in item.metadata.items()
                                              if v is not None})
                meta.update(parent=item.id, chunk=0, chunks=len(item.embed_texts[:32] or [" "]))
                mirror[item.id] = (item.keyword_text, meta)
                self._pending.pop(item.id, None)
                if not item.metadata.get(PARTIAL):
                    self._rest.pop(item.id, None)
            self._live.note_changed(item.id for item in items)
            self._write_done([item.id for item in items])
            return embedded

    # Staged embedding (`skillbank.index_fill`): keyword now, vectors in batches behind.
    stage = index_fill.stage
    keep_first = index_fill.keep_first
    fill = index_fill.fill
    _model_unavailable = index_fill.model_unavailable

    def completing(self, item_id: str) -> bool:
        """The item is in Chroma by its first text and this process is embedding the rest."""
        return item_id in self._rest

    @property
    def pending(self) -> int:
        """How many items are searchable by keyword but not (yet) by their current vectors."""
        return len(self._pending)

    @property
    def dense_complete(self) -> bool:
        return not self._pending and self.dense_error is None

    def update_metadata(self, item_id: str, **fields: Any) -> None:
        self.update_metadatas({item_id: fields})  # its chunks' fields; nothing embedded again

    @clear_outage("the change was not written to the index")
    def update_metadatas(self, changes: Mapping[str, Mapping[str, Any]]) -> None:
        """Fields of items (all their chunks), not embedded again, in one Chroma update a batch:
        one an item (55 ms) made re-keying 3,000 experiences on open 174 s (hunt-upgrade #1)."""
        index_mirror.attach_if_due(self)
        with self._lock:
            mirror = self._load_mirror()
            new = {item_id: {**mirror[item_id][1], **fields} for item_id, fields in changes.items()}
            self._before_write()
            self._live.clear_masks()
            for item_id in changes.keys() & self._pending.keys():  # staged: embedded with them
                self._pending[item_id] = dataclasses.replace(self._pending[item_id], metadata={
                    **self._pending[item_id].metadata, **changes[item_id]})
            chunks = [(f"{i}#{n}" if n else i, {k: v for k, v in {**meta, "chunk": n}.items()
                                                if v is not None})
                      for i, meta in new.items() for n in range(int(meta.get("chunks", 1)))]
            step = self._batch_size()
            for start in range(0, len(chunks), step):
                ids, metas = zip(*chunks[start:start + step])
                self._collection.update(ids=list(ids), metadatas=list(metas))
            for item_id, meta in new.items():  # after Chroma: a failure part-way is redone
                mirror[item_id] = (mirror[item_id][0], meta)  # by the next sync (its checkpoint)
            self._write_done(list(changes))

    @clear_outage("the removal was not written to the index")
    def delete(self, item_ids: Iterable[str]) -> int:
        index_mirror.attach_if_due(self)
        with self._lock:
            if self._detached:  # gone from keyword search now, from Chroma once it answers
                return index_mirror.delete_detached(self, item_ids)
            mirror = self._load_mirror()
            self._before_write()
            doomed: list[str] = []
            removed = 0
            for item_id in item_ids:
                entry = mirror.pop(item_id, None)
                self._pending.pop(item_id, None)
                self._rest.pop(item_id, None)
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
                self._live.note_changed(doomed)
            self._write_done([d for d in doomed if "#" not in d])
            return removed

    def _before_write(self) -> None:
        """A write is coming: the saved snapshot stops being the truth until the next save."""
        if self._snapshot is not None:
            self._snapshot.mark_dirty()
            self._live.unsaved = True
            # Still set from the last write: that one failed part-way, so Chroma and the mirror
            # may differ for the rest of this process. Nothing it holds is saved.
            self._write_failed = self._write_failed or self._in_write
            self._in_write = True

    def _write_done(self, written: list[str] | None = None) -> None:
        self._in_write = False
        #: The items the last write touched (None: any of them), for `after_write` to announce.
        self.last_written = written
        if self.after_write is not None:
            try:  # the write is committed: a failed notice must not answer it as failed, or a
                self.after_write()  # retry writes it twice (hunt-teamchurn #1, session 33)
            except Exception as exc:  # others re-read everything on their feed's reconnect
                log.warning("skillbank: the write to %s is saved, but telling the other "
                            "processes failed (%s); they see it at their next sync",
                            self.name, (str(exc).strip() or type(exc).__name__).splitlines()[0])

    @clear_outage("this memory's index could not be read")
    def refresh(self, item_ids: Iterable[str]) -> None:
        """Re-read just these items from Chroma: another worker wrote them (team mode).

        What `invalidate` does for everything, for a few items: their mirror rows are replaced
        (or dropped when gone) and they are scored by the delta BM25, so hearing of another
        worker's write costs one `get` of those ids instead of reloading the whole collection
        and rebuilding BM25."""
        ids = list(dict.fromkeys(item_ids))
        with self._lock:
            if self._mirror is None or self._detached or not ids:
                return  # nothing loaded yet: the first read loads everything fresh
            found: dict[str, tuple[str, dict[str, Any]]] = {}
            step = self._batch_size()
            for start in range(0, len(ids), step):
                got = self._collection.get(ids=ids[start:start + step],
                                           include=["documents", "metadatas"])
                for item_id, doc, meta in zip(got["ids"], got["documents"], got["metadatas"]):
                    if owns(self.owner, self._adopt, meta):
                        found[item_id] = (doc or "", dict(meta or {}))
            for item_id in ids:
                old = self._mirror.pop(item_id, None)
                if old is not None:
                    self._chunks -= int(old[1].get("chunks", 1))
                new = found.get(item_id)
                if new is not None:
                    self._mirror[item_id] = new
                    self._chunks += int(new[1].get("chunks", 1))
            self._live.clear_masks()
            self._live.note_changed(ids)

    def invalidate(self) -> None:
        """Forget what this process holds in memory (mirror, BM25): another process wrote.

        The next read loads it again from Chroma (server mode's change feed calls this)."""
        with self._lock:
            self._mirror = None
            self._live.invalidate()

    def save_snapshot(self) -> None:
        """Save the mirror and BM25 for the next process, if this one has anything new.

        Called by ``Skillbank.close``; cheap when nothing changed (no file is written)."""
        with self._lock:
            skipped = self._snapshot_skipped()
            if skipped:
                if self._snapshot is not None and self._live.unsaved:  # DIRTY stays: say why
                    log.info("skillbank: keyword snapshot of %s not saved (%s); the next "
                             "start rebuilds it", self.name, skipped)
                return
            self._live.save(str(self._collection.id), self._mirror, self._chunks)

    def _snapshot_skipped(self) -> str | None:
        """Why `save_snapshot` saves nothing now, or None when it saves. Logged: a server
        stopped by SIGTERM left DIRTY, and a slow next start was the only sign (soak #4)."""
        if self._snapshot is None or not self._live.unsaved:
            return "nothing new"
        if self._mirror is None:
            return "nothing loaded"
        if self._in_write:
            return "a write is in progress"
        if self._write_failed:  # Chroma and the mirror may differ: the next process rebuilds
            return "a write failed part-way"
        if not self._snapshot.saves:
            return "snapshots are off"
        if self._pending:  # not in Chroma: the next process finds them missing, stages again
            return f"{len(self._pending)} item(s) not embedded yet"
        return None

    # Search ------------------------------------------------------------------------------------
    def dense(
        self, query_vector: np.ndarray, n: int, where: dict[str, Any] | None = None
    ) -> dict[str, float]:
        """Best cosine similarity per item among its `n` nearest texts."""
        texts = self.dense_texts(query_vector, n, where)
        if "#" not in "".join(texts):  # one text per item (no `<id>#<k>`): nothing to merge
            return texts
        best: dict[str, float] = {}
        for text_id, similarity in texts.items():
            parent = text_id.split("#", 1)[0]
            if similarity > best.get(parent, -2.0):
                best[parent] = similarity
        return best

    @reopen_when_gone("it was searched by keyword only")  # hunt-chroma #1, session 29
    def dense_texts(
        self, query_vector: np.ndarray, n: int, where: dict[str, Any] | None = None
    ) -> dict[str, float]:
        """Cosine similarity of each of the `n` nearest texts, by text id: an item's first
        text is `<id>`, its k-th `<id>#<k>`. For a memory whose items embed texts of different
        kinds (an experience's task and its lessons) that need different evidence.

        Only distances are fetched: asking Chroma for metadata too made a 1,000-result query
        20x slower.
        """
        if self._detached:  # not "nothing near": recall took {} for hybrid (hunt-chroma #3)
            raise index_mirror.unreached(self)
        self._load_mirror()
        total = self._chunks
        if total <= 0 or n <= 0:
            return {}
        narrowed = owned_where(self.owner, self._foreign, where)
        found = self._prefetched.get(index_batch.dense_key(query_vector, n, narrowed)) \
            if self._prefetched else self._dense.nearest(query_vector, min(n, total), where)
        if found is None:
            result = self._collection.query(query_embeddings=[query_vector],
                                            n_results=min(n, total), where=narrowed,
                                            include=["distances"])
            found = (result["ids"][0], result["distances"][0])
        stale = self._pending  # Chroma still holds their old text's vector, or none
        if not stale:  # whole arrays: a loop over 1,000 texts was ~1 ms of a skill search
            return dict(zip(found[0], (1.0 - np.asarray(found[1], dtype=np.float64)).tolist()))
        return {text_id: 1.0 - float(distance) for text_id, distance in zip(*found)
                if text_id.split("#", 1)[0] not in stale}

    def _dense_or_none(self, vector: np.ndarray, n: int,
                       where: dict[str, Any] | None) -> dict[str, float] | None:
        """Dense scores, or None while a Chroma server does not answer: search by keyword."""
        if self._detached:  # its server not reached (index_mirror): keyword, saying why
            self.dense_error = index_mirror.down_note(self)
            return None
        if self._quiet():
            return None  # it timed out a moment ago: answer by keyword now, not after a wait
        found, self.dense_error = dense_unless_down(lambda: self.dense(vector, n, where),
                                                    self.shared, self.dense_error,
                                                    on_outage=self._timed_out)
        if found is not None:
            self._dense_quiet_until = 0.0
        return found

    def _quiet(self) -> bool:
        """Within DENSE_QUIET_SECONDS of a timed-out dense request: the server is not asked,
        and `dense_error` keeps saying why (a write meanwhile may have cleared it)."""
        if not self._dense_quiet_until:
            return False
        if time.monotonic() < self._dense_quiet_until:
            self.dense_error = self._quiet_reason
            return True
        self._dense_quiet_until = 0.0
        return False

    def _timed_out(self, exc: BaseException) -> None:
        """A dense request failed; if it timed out, the next searches do not wait for it."""
        from skillbank.index_outage import is_timeout

        if is_timeout(exc):
            first = (str(exc).strip().splitlines() or [type(exc).__name__])[0]
            self._quiet_reason = f"{CHROMA_DOWN} ({first}); searching by keyword only"
            self._dense_quiet_until = time.monotonic() + DENSE_QUIET_SECONDS

    def keyword(self, query: str, n: int, where: dict[str, Any] | None = None) -> dict[str, float]:
        """Top `n` items by BM25, normalised to 0..1, filtered like the dense side."""
        return self._live.search(query, n, where)

    def held_terms(self, item_id: str, terms: Iterable[str]) -> set[str]:
        """Which of `terms` an item's keyword text holds, as BM25 indexed it: recall of a task
        the model does not read weighs its evidence by the tokens it shares with a record,
        whatever the record's length (hunt-upgrade #2, session 23)."""
        return self._live.held(item_id, terms)

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
        body_weight: float | None = None,
    ) -> Hits:
        """Fuse dense and keyword evidence and return the best `k` items (all when k=0).

        `fusion="rrf"` (reciprocal rank) needs no calibration and suits large collections where
        only the top candidates are seen. `fusion="z"` standardises each side's scores over
        every item and averages them, which keeps *how much* better an item is, not just its
        place; it needs (nearly) every item's score, so it is for small collections such as
        skill libraries. On the routing set it lifted R@1 from 0.80 to 0.90 (docs/benchmarks.md).
        The result also carries the best raw dense and keyword evidence, for "nothing fits".

        `body_weight` (z fusion only): None, an item's dense score is the best of its texts.
        A number: the dense side scores each item's first text (its summary) alone, so the dense
        evidence the result carries is the summary's, and a third side, each item's best cosine
        over all its texts (summary and body sections), is fused at this weight (0: not asked).
        """
        hits = Hits()
        if not query or not query.strip():
            return hits
        index_mirror.attach_if_due(self)
        with self._combiner.coming():  # a search answered meanwhile may wait for this one
            # Without the lock once loaded: concurrent searches then meet at the lock together.
            if not (self._mirror if self._mirror is not None else self._load_mirror()):
                hits.dense_complete = self.dense_complete  # empty, its server down: keyword
                return hits
            vector = query_vector
            if vector is None:
                try:  # outside the lock: a model still loading must not hold up keyword search
                    vector = embed_query(self.embedding_function, query)
                except ModelUnavailableError as exc:
                    self._model_unavailable(exc)
        request = index_batch.Request((query, k, where, candidates, fusion, dense_weight,
                                       keyword_weight, vector, body_weight))
        return self._combiner.run(self._lock, request, self._answer)

    def _answer(self, requests: list[index_batch.Request]) -> None:
        """Answer concurrent searches in one hold of the lock (held by the caller)."""
        if len(requests) > 1 and self._dense.declines() and not self._quiet() \
                and not self._detached:
            self._load_mirror()
            self._prefetched = index_batch.prefetch(self._collection, [
                (r.args[7], Z_CANDIDATES if r.args[4] == "z" else r.args[3] * 2,
                 owned_where(self.owner, self._foreign, r.args[2]))
                for r in requests if r.args[7] is not None], self._chunks,
                on_error=self._timed_out if self.shared else None)
        try:
            for request in requests:
                try:
                    request.result = self._search_locked(*request.args)
                except Exception as exc:  # noqa: BLE001 - raised in the thread that asked
                    request.error = exc
                request.done = True
        finally:
            self._prefetched = {}

    def _search_locked(self, query: str, k: int, where: dict[str, Any] | None, candidates: int,
                       fusion: str, dense_weight: float, keyword_weight: float,
                       vector: np.ndarray | None, body_weight: float | None = None) -> Hits:
        hits = Hits()
        mirror = self._load_mirror()
        if not mirror:
            return hits
        dense: dict[str, float] = {}
        if fusion == "z":
            body: dict[str, float] = {}
            if vector is not None:
                sections = body_weight is not None and self.has_sections()
                summary_where = ({"chunk": 0} if not where else {"$and": [where, {"chunk": 0}]}) \
                    if sections else where
                dense = self._dense_or_none(vector, Z_CANDIDATES, summary_where)
                if sections and body_weight and dense is not None:
                    # The same vector again: dense_live reuses the cosines it just computed.
                    # Every text, not the nearest Z_CANDIDATES: with ~8 texts a skill, the
                    # 1,000 nearest texts covered only part of a 1,748-skill library, and
                    # every other skill got the floor (corpus top-1 0.685 against 0.769 when
                    # every skill is scored; docs/benchmarks.md, routing, session 12).
                    body = self._dense_or_none(vector, max(Z_CANDIDATES, self._chunks),
                                               where) or {}
                vector = None if dense is None else vector
                dense = dense or {}
            keyword = self.keyword(query, len(mirror), where)
            ids, scores = _z_fuse(dense, keyword, dense_weight, keyword_weight, mirror,
                                  where, set(self._pending) if vector is not None else set(mirror),
                                  body=body, body_weight=body_weight or 0.0)
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


#: How many nearest chunks z-fusion asks Chroma for; items beyond it get the lowest seen score.
Z_CANDIDATES = 1000
