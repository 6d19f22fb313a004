"""Answer the first skill searches of a process from the root's snapshot, before Chroma is open.

Why (#27): the MCP server's first `find_skills` waited for `import chromadb` (~0.5-1 s), the
bank's open and skill sync, the keyword index and the vectors read back from Chroma: 2.4x a
bare `import mcp.server` on a quiet machine, against a target of 1.5x. Everything a skill search
reads is already kept under `<root>/.cache/index/<collection>/` (`index_snapshot`: the mirror of
every item's keyword text and metadata, BM25) — except the vectors, which this module adds to
the same snapshot folder (`dense.npz`: the unit vectors `dense_live` ranks by exact cosine).

`open_library` builds the real `SkillLibrary` over a `HybridIndex` whose collection is that
snapshot, read-only (`SnapshotCollection`), so a search runs the very code the opened bank runs
(fusion, fit, usage prior, trust marks, tool gate) and answers the same. Chroma is never
imported for it. The bank opens meanwhile on another thread; once its skills are ready, they
answer instead (`mcp_server/loader.py`).

Never stale: the snapshot is used only when
* the bank would be embedded and nothing else owns the root (its owner lock is free);
* `index_snapshot`'s own rules hold: no ``DIRTY`` marker (a write since the snapshot), and the
  collection id and entry count it names are those in Chroma's SQLite file (read with the
  standard library's sqlite3; any doubt means no);
* the vectors were saved with that snapshot, by the same embedding, with nothing pending;
* the skill sync the bank will run finds nothing to do: the library's own `_stage_files` runs
  on the snapshot index (in memory; it stats every SKILL.md and reads the changed ones, as the
  real sync does) and must report no skill added, changed or removed.
Anything else returns None, and the caller waits for the bank as before.
"""

from __future__ import annotations

import logging
import os
import sqlite3
from pathlib import Path
from typing import Any, Callable

import numpy as np
import orjson

from skillbank.index_snapshot import KeywordSnapshot

log = logging.getLogger("skillbank.snapshot_search")

DENSE_FILE = "dense.npz"
FORMAT = 1


class _ReadOnlySnapshot(KeywordSnapshot):
    """The snapshot as the provisional index sees it: restored from, never marked or saved."""

    def mark_dirty(self) -> None:
        raise ReadOnlyError("the snapshot index is read-only")

    def save(self, *args: Any, **kwargs: Any) -> None:
        return None


class ReadOnlyError(RuntimeError):
    """Something tried to write through the provisional index (it answers searches only)."""


class SnapshotCollection:
    """The parts of a Chroma collection a skill search reads, from the saved snapshot."""

    def __init__(self, collection_id: str, chunks: int, fingerprint: str, ids: list[str],
                 matrix: np.ndarray, mirror: Callable[[], dict[str, tuple[str, dict[str, Any]]]]
                 ) -> None:
        self.id = collection_id
        self._chunks = chunks
        self.metadata = {"skillbank_embedding": fingerprint, "hnsw:space": "cosine"}
        self._ids = ids
        self._matrix = matrix
        self._mirror = mirror

    def count(self) -> int:
        return self._chunks

    def get(self, ids: list[str] | None = None, include: list[str] | None = None,
            limit: int | None = None, offset: int | None = None, **_: Any) -> dict[str, Any]:
        """Texts' vectors and metadata (each text carries its item's, with its chunk number)."""
        if include is not None and "documents" in include:
            raise ReadOnlyError("the snapshot's mirror did not restore")
        rows = range(len(self._ids))
        if ids is not None:
            wanted = set(ids)
            rows = [r for r in rows if self._ids[r] in wanted]
        rows = list(rows)[offset or 0:(offset or 0) + limit if limit else None]
        mirror = self._mirror()
        metas = []
        for row in rows:
            parent, _, chunk = self._ids[row].partition("#")
            meta = dict(mirror.get(parent, ("", {}))[1])
            meta["chunk"] = int(chunk) if chunk else 0
            metas.append(meta)
        return {"ids": [self._ids[r] for r in rows], "metadatas": metas,
                "embeddings": [self._matrix[r] for r in rows], "documents": None}

    def query(self, *args: Any, **kwargs: Any) -> Any:
        raise ReadOnlyError("the snapshot index ranks in memory (dense_live)")

    def upsert(self, *args: Any, **kwargs: Any) -> Any:
        raise ReadOnlyError("the snapshot index is read-only")

    update = delete = add = upsert


class SnapshotClient:
    """What `HybridIndex` asks of a Chroma client, answered by one `SnapshotCollection`."""

    def __init__(self, collection: SnapshotCollection) -> None:
        self.collection = collection

    def get_or_create_collection(self, **_: Any) -> SnapshotCollection:
        return self.collection

    def get_max_batch_size(self) -> int:
        return 5000


# Opening -----------------------------------------------------------------------------------------
def folder_of(settings: Any) -> Path:
    """Where the skills index's snapshot lives (as `Skillbank.index` places it)."""
    return settings.root / ".cache" / "index" / f"{settings.collection_prefix}_skills"


def open_library(settings: Any, skill_roots: list[Path], embedding_function: Any) -> Any:
    """The skill library over the root's snapshot, or None when the snapshot cannot be proven
    current (see the module docstring). Never raises."""
    try:
        return _open(settings, skill_roots, embedding_function)
    except Exception as exc:  # noqa: BLE001 - a cache: any doubt means "open the bank"
        log.info("skill snapshot not used: %s: %s", type(exc).__name__, exc)
        return None


def _open(settings: Any, skill_roots: list[Path], embedding_function: Any) -> Any:
    if settings.chroma_url or getattr(settings, "chroma_tenant", None) \
            or getattr(settings, "chroma_database", None) \
            or getattr(settings, "database_url", None) or getattr(settings, "skills_repo", None):
        return _no("not the embedded default")
    if not _owner_lock_free(settings.root):
        return _no("another process owns the root")
    folder = folder_of(settings)
    if (folder / "DIRTY").exists():
        return _no("a write since the last snapshot")
    checked = (folder / "CURRENT").read_bytes()
    current = orjson.loads(checked)
    snap = folder / current["snapshot"]
    dense = np.load(snap / DENSE_FILE, allow_pickle=False)
    meta = orjson.loads(bytes(dense["meta"]))
    from skillbank.embeddings import fingerprint

    if meta.get("format") != FORMAT or meta.get("collection") != current.get("collection") \
            or meta.get("chunks") != current.get("chunks") \
            or meta.get("fingerprint") != fingerprint(embedding_function):
        return _no("the vectors belong to another snapshot or embedding")
    name = f"{settings.collection_prefix}_skills"
    if _in_chroma(settings.chroma_path, name) != (current["collection"], current["chunks"]):
        return _no("Chroma holds another collection or count")
    from skillbank.index import HybridIndex
    from skillbank.index_ownership import deployment_of
    from skillbank.memories.skills.library import SkillLibrary
    from skillbank.usage import UsageLog

    holder: dict[str, Any] = {}
    collection = SnapshotCollection(current["collection"], int(current["chunks"]),
                                    meta["fingerprint"], [str(i) for i in dense["ids"]],
                                    dense["matrix"], lambda: holder["index"]._load_mirror())
    index = HybridIndex(SnapshotClient(collection), name, embedding_function,
                        snapshot=_ReadOnlySnapshot(folder), owner=deployment_of(settings),
                        adopt_untagged=True)
    holder["index"] = index
    if not index._load_mirror():  # restored from the snapshot (`get` refuses to read documents)
        return _no("the snapshot holds no skills")
    from skillbank import dense_live

    index._dense.enabled = True
    index._dense._asked = dense_live.CHROMA_FIRST  # the vectors are here: rank in memory at once
    _hold_vectors(index, collection)
    library = SkillLibrary(settings.root / "skills", list(skill_roots), index,
                           UsageLog(settings.root / "usage" / "skills.jsonl", shared=False),
                           min_score=settings.min_score,
                           max_depth=settings.max_skill_roots_depth,
                           max_dirs=settings.max_scan_dirs)
    report = library._stage_files()  # the bank's own sync rules, on the in-memory snapshot
    if report.added or report.changed or report.removed:
        return _no(f"the skill files changed ({len(report.added)} added, "
                   f"{len(report.changed)} changed, {len(report.removed)} removed)")
    library.snapshot_checked = (folder, checked)  # what still_current compares with
    _seed(library, index, dense, meta)
    return library


def _has_seeds(path: Path) -> bool:
    """Whether saved vectors carry `_seed`'s values (False for a file saved before them)."""
    try:
        with np.load(path, allow_pickle=False) as saved:
            return "words_per_item" in orjson.loads(bytes(saved["meta"]))
    except Exception:  # noqa: BLE001 - unreadable: saved again
        return False


def _seed(library: Any, index: Any, dense: Any, meta: dict[str, Any]) -> None:
    """Give the library what the snapshot's saver measured on these very texts with this very
    embedding (the fingerprint was checked): the background prototypes and the mean words per
    item. A snapshot saved without them (or for other background texts) leaves both to be
    computed by the first search, as before."""
    from skillbank.memories.skills import fit, search

    if meta.get("background") == fit.background_key() and "prototypes" in dense.files:
        library._background = fit.Background(index.embedding_function,
                                              prototypes=dense["prototypes"])
    words = meta.get("words_per_item")
    if isinstance(words, (int, float)) and not isinstance(words, bool):
        search.seed_words_per_item(index, words)


def _hold_vectors(index: Any, collection: SnapshotCollection) -> None:
    """Give the index's in-memory dense side (`dense_live.LiveDense`) the snapshot's matrix as
    it is, instead of letting its first search read it back text by text.

    Why (#27): that read (a metadata dict and a row per text, then stacked, copied and
    normalised again: four passes over 8,736 x 384 floats on the benchmark's root) was a
    third of the snapshot library's warm-up. The saved rows already are `LiveDense`'s unit
    vectors (`save` keeps its matrix), so they are taken as they are; only the rows
    `LiveDense._rows` would keep are kept (this deployment's texts, by their item's metadata),
    in the saved order. Same rows, same vectors as the bank ranks by."""
    from skillbank.index_ownership import owns

    mirror = index._load_mirror()
    ids = collection._ids
    keep = [row for row, text_id in enumerate(ids)
            if owns(index.owner, index._adopt,
                    mirror.get(text_id.partition("#")[0], ("", {}))[1])]
    matrix = collection._matrix
    if len(keep) != len(ids):
        matrix = matrix[keep]
    dense = index._dense
    with index._lock:
        dense.matrix = np.ascontiguousarray(matrix, dtype=np.float32)
        dense.ids = [ids[row] for row in keep]
        dense.stale = set()
        dense._names = np.array(dense.ids, dtype=object)
        dense._masks.clear()


def still_current(library: Any) -> bool:
    """Whether the root's snapshot is still the one `library` was proven current against: the
    same ``CURRENT``, no ``DIRTY``. Checked before each answer (a read and a stat): while this
    process's bank is not open yet the owner lock is free, and another process may open the
    root and write a skill — it marks DIRTY while it writes and leaves a new snapshot when it
    closes, so either way this says no. Never raises."""
    try:
        folder, checked = library.snapshot_checked
        return not (folder / "DIRTY").exists() and (folder / "CURRENT").read_bytes() == checked
    except Exception:  # noqa: BLE001 - any doubt means "wait for the bank"
        return False


def hand_over(early: Any, library: Any) -> None:
    """The bank's own skill library takes the provisional one's trust state (one trust book:
    one scanner queue, one version timeline) and its background prototypes. Called before the
    bank's library is first used.

    Both are made here if no search has made them yet (the first search may come after the
    hold, and the snapshot library answers until the bank's skills are ready): copying only
    what existed left each library to make its own, a second scanner nobody closed."""
    early.trust_book  # noqa: B018 - made now, under the library's own lock
    if early.__dict__.get("_versions_seen") is None:
        from skillbank.memories.skills.skill_trust_api import _lines

        seen = {line.get("name"): line.get("version") for line in _lines(early._timeline_path())}
        early.__dict__.setdefault("_versions_seen", seen)
        if early.__dict__["_versions_seen"] is None:
            early.__dict__["_versions_seen"] = seen
    for key in ("_trust_lock", "_trust_book", "_versions_seen"):
        if key in early.__dict__ and key not in library.__dict__:
            library.__dict__[key] = early.__dict__[key]
    if getattr(library, "_background", None) is None and early._background is not None:
        library._background = early._background


def _no(reason: str) -> None:
    log.info("skill snapshot not used: %s", reason)
    return None


def _owner_lock_free(root: Path) -> bool:
    from skillbank.locks import owner_lock_held

    return not owner_lock_held(root)


def _in_chroma(chroma_path: Path, name: str) -> tuple[str, int] | None:
    """(collection id, entries) of collection `name` in an embedded Chroma's SQLite file, read
    only; None when it cannot be read (then the snapshot is not used)."""
    path = Path(chroma_path) / "chroma.sqlite3"
    if not path.is_file():
        return None
    db = sqlite3.connect(f"file:{path}?mode=ro", uri=True, timeout=1.0)
    try:
        found = db.execute("SELECT id FROM collections WHERE name = ?", (name,)).fetchone()
        if found is None:
            return None
        count = db.execute(
            "SELECT COUNT(*) FROM embeddings e JOIN segments s ON e.segment_id = s.id "
            "WHERE s.collection = ? AND s.scope = 'METADATA'", (found[0],)).fetchone()[0]
        return str(found[0]), int(count)
    finally:
        db.close()


# Saving ------------------------------------------------------------------------------------------
def save(index: Any) -> bool:
    """Keep the skills index's vectors beside its snapshot, saving the snapshot first when this
    process holds something it lacks (a BM25 build). Called once the bank's skills are synced
    and embedded; True when the snapshot now has current vectors. Never raises."""
    try:
        return _save(index)
    except Exception as exc:  # noqa: BLE001 - a cache: the next start opens the bank instead
        log.warning("could not keep the skill vectors beside the snapshot: %s", exc)
        return False


def _save(index: Any) -> bool:
    snapshot = getattr(index, "_snapshot", None)
    if snapshot is None or not snapshot.saves:
        return False
    with index._lock:  # no write between the snapshot and its vectors (writes take this lock)
        if index._pending or index._mirror is None:
            return False
        index.save_snapshot()  # a no-op unless this process has something the snapshot lacks
        folder = snapshot.folder
        if snapshot._dirty_marked or (folder / "DIRTY").exists():
            return False  # written since: the snapshot is not this state
        current = orjson.loads((folder / "CURRENT").read_bytes())
        collection = str(index._collection.id)
        if current.get("collection") != collection or current.get("chunks") != index._chunks:
            return False
        snap = folder / current["snapshot"]
        if (snap / DENSE_FILE).exists() and _has_seeds(snap / DENSE_FILE):
            return True  # (one saved before session 11 is saved again, with the seeds)
        dense = index._dense
        if dense.matrix is None or dense.stale:
            dense._load()  # every vector, read back from Chroma
        if len(dense.ids) != index._chunks:
            return False  # a text without a vector: not something to rank from
        from skillbank.embeddings import fingerprint
        from skillbank.memories.skills import fit, search

        # What the first search would otherwise compute from these texts and this embedding
        # (`_seed`): ~40 ms of the MCP server's first answer (#27). Measured afresh here, not
        # taken from this process's caches; the vectors are kept even if the embedding fails.
        info: dict[str, Any] = {"format": FORMAT, "collection": collection,
                                "chunks": index._chunks,
                                "fingerprint": fingerprint(index.embedding_function),
                                "words_per_item": search.mean_words(index)}
        arrays = {"ids": np.array(dense.ids, dtype=str), "matrix": dense.matrix}
        try:
            arrays["prototypes"] = np.asarray(
                fit.Background(index.embedding_function).prototypes(), dtype=np.float32)
            info["background"] = fit.background_key()
        except Exception as exc:  # noqa: BLE001 - an optional seed
            log.info("background prototypes not kept with the snapshot: %s", exc)
        meta = orjson.dumps(info)
        tmp = snap / f".{DENSE_FILE}.tmp"
        with open(tmp, "wb") as handle:
            np.savez(handle, meta=np.frombuffer(meta, dtype=np.uint8), **arrays)
            handle.flush()
            os.fsync(handle.fileno())
        os.replace(tmp, snap / DENSE_FILE)
        return True
