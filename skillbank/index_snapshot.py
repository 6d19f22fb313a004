"""The keyword side of an index, kept on disk so a fresh process need not rebuild it.

A :class:`~skillbank.index.HybridIndex` keeps, next to Chroma's vectors, a mirror of every
item's keyword text and metadata and a BM25 index over those texts. Both are derived: read from
Chroma and tokenised on the first search of a process. At 100,000 experiences that first search
took ~12 s to page the items out of Chroma and ~7–11 s to build BM25, and every CLI call is a
fresh process. This module saves both when a bank closes and restores them when the next
process opens the same root.

A snapshot is a cache, never the truth, so it is used only when it cannot be stale:

* embedded mode only (the root's owner lock guarantees one process writes at a time; on a Chroma
  server other processes write without telling us);
* a ``DIRTY`` marker is written (and fsynced) before this process's first write to the index
  and removed only after a snapshot of the state after that write is saved: a process that dies
  in between leaves the marker, and the next one rebuilds from Chroma;
* the snapshot names the Chroma collection it was taken from and how many entries it had; a
  different collection (a reindex, a deleted folder) or count means rebuild.

BM25 is saved only when it is a full build over the current items: after writes, a process
scores new items with a small delta BM25 (see ``HybridIndex``; exact, with the statistics of
all items, but not a build the next process can load), so then only the mirror is saved and the next process builds BM25 on its first
keyword search (and saves that build when it closes).

Layout under ``<root>/.cache/index/<collection>/``: ``CURRENT`` (JSON: which snapshot folder is
valid, the collection id and counts), ``snap-<token>/`` (``mirror.json`` and, when BM25 was
built, ``bm25/arrays.npz`` (skillbank.keyword's arrays) plus ``keyword.json`` with ids and
terms), ``DIRTY``.
Everything is written to a new folder first and switched to by an atomic write of ``CURRENT``.
"""

from __future__ import annotations

import logging
import os
import secrets
import shutil
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import orjson

from skillbank.fsutil import atomic_write, fsync_dir

log = logging.getLogger(__name__)

FORMAT = 1


@dataclass
class Restored:
    """What a snapshot gives back: the mirror, its chunk count, BM25 if it was saved."""

    mirror: dict[str, tuple[str, dict[str, Any]]]
    chunks: int
    keyword: Any | None = None  # skillbank.index._Keyword


class KeywordSnapshot:
    """Save and restore one index's mirror and BM25 (see the module docstring)."""

    def __init__(self, folder: Path, *, saves: bool = True) -> None:
        self.folder = folder
        #: False for a bank that cannot know it is the only writer (one opened with its own
        #: Chroma client on a root that may also be used embedded): it only marks DIRTY, so a
        #: snapshot taken by an embedded bank is never trusted after this one wrote.
        self.saves = saves
        self._dirty_marked = False

    # Dirty marker -----------------------------------------------------------------------------
    @property
    def _dirty(self) -> Path:
        return self.folder / "DIRTY"

    def mark_dirty(self) -> None:
        """Called before a write: until the next save, no snapshot here may be trusted.

        If the marker cannot be written (a read-only or full disk), the snapshot is removed
        instead; only if neither works does the write fail, since a stale snapshot would
        otherwise be restored by the next process."""
        if self._dirty_marked:
            return
        try:
            self.folder.mkdir(parents=True, exist_ok=True)
            atomic_write(self._dirty, b"a write is in progress or was not snapshotted\n")
        except OSError:
            (self.folder / "CURRENT").unlink(missing_ok=True)
        self._dirty_marked = True

    # Restore ----------------------------------------------------------------------------------
    def load(self, collection_id: str, chunks_in_chroma: int, keyword_format: str
             ) -> Restored | None:
        """The saved state, or None when there is none or it may be stale (never raises)."""
        if not self.saves:
            return None
        try:
            if self._dirty.exists():
                return None
            current = orjson.loads((self.folder / "CURRENT").read_bytes())
            if (current.get("format") != FORMAT or current.get("collection") != collection_id
                    or current.get("chunks") != chunks_in_chroma):
                return None
            if current.get("keyword_format") != keyword_format:
                return None  # BM25 built by another tokenizer or bm25s: rebuild both
            snap = self.folder / current["snapshot"]
            raw = orjson.loads((snap / "mirror.json").read_bytes())
            mirror = {item_id: (text, meta)
                      for item_id, text, meta in zip(raw["ids"], raw["texts"], raw["metas"])}
            restored = Restored(mirror=mirror, chunks=int(current["chunks"]))
            if (snap / "keyword.json").exists():
                restored.keyword = _load_keyword(snap)
            return restored
        except FileNotFoundError:  # none yet: the first process on this root
            return None
        except Exception as exc:  # a cache: any problem means "rebuild", never a failure
            log.debug("index snapshot in %s not used: %s", self.folder, exc)
            return None

    # Save -------------------------------------------------------------------------------------
    def save(self, collection_id: str, mirror: dict[str, tuple[str, dict[str, Any]]],
             chunks: int, keyword: Any | None, keyword_format: str) -> None:
        """Write a new snapshot folder, switch ``CURRENT`` to it, clear the dirty marker.

        ``keyword`` must be a full BM25 build over exactly ``mirror`` (or None): a snapshot
        never holds the in-process delta approximation, so search results depend on the
        items, not on which process wrote them when. Its files are hard-linked from the last
        snapshot when that one holds the same build.
        """
        token = secrets.token_hex(6)
        snap = self.folder / f"snap-{token}"
        tmp = self.folder / f".tmp-{token}"
        try:
            self.folder.mkdir(parents=True, exist_ok=True)
            # Every item's text: for its owner only, as the journal it comes from (soak #5:
            # mirror.json was 0644 under umask 022).
            tmp.mkdir(mode=0o700)
            ids = list(mirror)
            _write_private(tmp / "mirror.json", orjson.dumps({
                "ids": ids, "texts": [mirror[i][0] for i in ids],
                "metas": [mirror[i][1] for i in ids]}))
            if keyword is not None and not keyword.empty:
                _save_keyword(keyword, tmp, self._previous_keyword_folder(keyword))
            _fsync_tree(tmp)
            os.replace(tmp, snap)
            atomic_write(self.folder / "CURRENT", orjson.dumps({
                "format": FORMAT, "snapshot": snap.name, "collection": collection_id,
                "chunks": chunks, "items": len(ids), "keyword_format": keyword_format}))
            self._dirty.unlink(missing_ok=True)
            self._dirty_marked = False
            for old in self.folder.iterdir():
                if old.is_dir() and old.name != snap.name:
                    shutil.rmtree(old, ignore_errors=True)
        except Exception as exc:  # a cache: a failed save costs the next process a rebuild
            log.warning("could not save the index snapshot in %s: %s", self.folder, exc)
            shutil.rmtree(tmp, ignore_errors=True)

    def _previous_keyword_folder(self, keyword: Any) -> Path | None:
        folder = getattr(keyword, "snapshot_folder", None)
        return folder if folder is not None and folder.exists() else None


def _save_keyword(keyword: Any, folder: Path, previous: Path | None) -> None:
    if previous is not None:  # the same BM25 as the last snapshot: link (or copy) its files
        _link_or_copy(previous / "keyword.json", folder / "keyword.json")
        (folder / "bm25").mkdir()
        for part in (previous / "bm25").iterdir():
            _link_or_copy(part, folder / "bm25" / part.name)
    else:
        (folder / "bm25").mkdir()
        keyword.save(folder / "bm25")
        _write_private(folder / "keyword.json", orjson.dumps({
            "ids": keyword.ids, "terms": keyword.terms}))
    keyword.snapshot_folder = folder.parent / folder.name.replace(".tmp-", "snap-")


def _write_private(path: Path, data: bytes) -> None:
    """Write a new file of the snapshot, readable by its owner only (0600)."""
    fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL | getattr(os, "O_BINARY", 0),
                 0o600)
    with os.fdopen(fd, "wb") as handle:
        handle.write(data)


def _link_or_copy(source: Path, target: Path) -> None:
    try:
        os.link(source, target)
    except OSError:  # a filesystem without hard links
        shutil.copyfile(source, target)


def _load_keyword(folder: Path) -> Any:
    from skillbank.index import _Keyword

    data = orjson.loads((folder / "keyword.json").read_bytes())
    keyword = _Keyword.load(folder / "bm25", data["ids"], data["terms"])
    keyword.snapshot_folder = folder
    return keyword


def _fsync_tree(folder: Path) -> None:
    """Files and folders of a new snapshot on disk before ``CURRENT`` names it."""
    for path in folder.rglob("*"):
        if path.is_file():
            with open(path, "rb") as handle:
                os.fsync(handle.fileno())
    for path in [folder, *[p for p in folder.rglob("*") if p.is_dir()]]:
        fsync_dir(path)
