"""Staged embedding for `HybridIndex`: items searchable by keyword at once, vectors behind.

A first sync of a large library parses in seconds and embeds for minutes, and a skill is now
several texts (its summary, then its body sections). These are the index's methods that queue
items (`stage`, `keep_first`) and embed the queue in batches (`fill`: every first text before
any other when asked, the rest in `fill_rest`), so hybrid search takes over item by item. They
are bound to `HybridIndex` as methods (its lock, mirror and Chroma collection are theirs); they
live here because they are the one part of the index with a job of its own: scheduling the
model's work.
"""

from __future__ import annotations

import dataclasses
import logging
import threading
from typing import TYPE_CHECKING, Any, Callable, Sequence

import numpy as np

from skillbank.embeddings import ModelUnavailableError, embed_texts
from skillbank.index_outage import ChromaUnavailableError
from skillbank.index_ownership import tag_entry

if TYPE_CHECKING:
    from skillbank.index import IndexItem

log = logging.getLogger("skillbank.index")
#: Texts embedded per step while dense vectors fill in behind keyword search.
FILL_BATCH = 64
#: Metadata of an item written with its first text alone, the rest to come (`fill`).
PARTIAL = "partial"
_warned_keyword_only = False


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
            meta = tag_entry(self.owner, {k: v for k, v in item.metadata.items()
                                          if v is not None})
            meta.update(parent=item.id, chunk=0, chunks=in_chroma)
            mirror[item.id] = (item.keyword_text, meta)
            self._pending[item.id] = item
            self._rest.pop(item.id, None)
            self._doomed.discard(item.id)  # deleted while detached, now written anew
        self._live.note_changed(item.id for item in items)

def keep_first(self, items: Sequence[IndexItem]) -> list[IndexItem]:
    """Queue items whose first text's vector Chroma already holds for their other texts
    alone; returns the items that must be embedded whole (stage them).

    An item qualifies when Chroma holds it as one entry (an index written with one text per
    item, or a fill stopped after the first texts: `PARTIAL`) under the same keyword text,
    so the same first text: a skill's summary is built from the name and description its
    keyword text repeats. Its stored vector is kept and `fill` embeds the rest only.
    """
    kept: list[IndexItem] = []
    whole: list[IndexItem] = []
    with self._lock:
        mirror = self._load_mirror()
        for item in items:
            old = mirror.get(item.id)
            if (old is None or item.id in self._pending or old[0] != item.keyword_text
                    or int(old[1].get("chunks", 1)) != 1 or not item.embed_texts):
                whole.append(item)
            else:
                kept.append(item)
        if not kept:
            return whole
        try:
            got = self._collection.get(ids=[item.id for item in kept],
                                       include=["embeddings"])
        except Exception:  # noqa: BLE001 - embedding whole is always correct
            log.debug("reading stored vectors failed", exc_info=True)
            return whole + kept
        stored = dict(zip(got.get("ids") or [], got.get("embeddings")
                          if got.get("embeddings") is not None else []))
        for item in kept:
            vector = stored.get(item.id)
            if vector is None:
                whole.append(item)
                continue
            first = np.asarray(vector, dtype=np.float32).reshape(1, -1)
            self._rest[item.id] = dataclasses.replace(item, vectors=first)
    return whole

def fill(self, batch: int = FILL_BATCH,
         progress: "Callable[[int, int], None] | None" = None,
         stop: threading.Event | None = None, wait: bool = True,
         first_texts_first: bool = False,
         rest_progress: "Callable[[int, int], None] | None" = None,
         first_texts_done: "Callable[[], None] | None" = None) -> int:
    """Embed staged items, shortest texts first, a batch at a time; returns texts embedded.

    Searches run between batches (the index lock is not held while the model works), and
    each batch is in Chroma as soon as it is embedded, so hybrid search takes over item by
    item. Stops early when `stop` is set or the model is unavailable (keyword-only mode).
    With `wait=False` it returns at once if another thread is filling: that one takes
    whatever was staged meanwhile before it stops.

    `first_texts_first`: every item's first text is embedded before any item's others (a
    skill's summary before its body sections, ~9x as many tokens): an item with more texts
    is written with its first alone, marked `PARTIAL` in its metadata (so a sync after an
    interruption stages it again), and gets the rest once every first text is in.
    `progress` counts items whose first text is in; `first_texts_done` is called once every
    first text is (before the rest, also when there was nothing to embed), and
    `rest_progress` counts items whose other texts are in (`fill_rest`).
    """
    embedded = done = 0
    if self._detached:  # its server not reached yet: embedded once it is (index_mirror)
        return 0
    if not self._fill_lock.acquire(blocking=wait):
        return 0
    drained = False  # left with nothing staged (not stopped, no model, no server)
    try:
        while True:
            texts, done, emptied = embed_pending(self, batch, stop, first_texts_first, progress,
                                                 done)
            embedded += texts
            if not emptied:
                break  # stopped, no model, or the server went away: the rest waits
            if self._pending:
                continue  # staged this moment: their first texts before the rest
            if first_texts_done is not None:
                first_texts_done()
            embedded += fill_rest(self, batch, stop, rest_progress)
            with self._lock:
                drained = not self._pending
            if drained or (stop is not None and stop.is_set()):
                break  # else items were staged during the rest: their first texts now
    finally:
        self._fill_lock.release()
    if drained and self._pending and not (stop is not None and stop.is_set()):
        # Staged between this filler's last look and its release: the stager's own
        # `fill(wait=False)` found the lock held and left them to this one (last read of
        # session 23: a skill saved then waited, keyword-only, for the next sync).
        embedded += fill(self, batch, progress, stop, wait=False,
                         first_texts_first=first_texts_first, rest_progress=rest_progress)
    return embedded

def embed_pending(self, batch: int, stop: threading.Event | None, first_texts_first: bool,
                  progress: "Callable[[int, int], None] | None",
                  done: int) -> tuple[int, int, bool]:
    """`fill`'s first part: embed what is staged until nothing is, or it is stopped, or the
    model or server is away; returns (texts embedded, items done so far, whether it ended
    with nothing staged)."""
    embedded = 0
    while stop is None or not stop.is_set():
        with self._lock:
            todo = sorted(self._pending.values(),
                          key=lambda it: (sum(len(t) for t in it.embed_texts[:32]), it.id))
            chunk = todo[:batch]
        total = done + len(todo)
        if not chunk:
            return embedded, done, True
        widths = [1 if first_texts_first else len(item.embed_texts[:32] or [" "])
                  for item in chunk]
        texts = [t or " " for item, width in zip(chunk, widths)
                 for t in (item.embed_texts[:32] or [" "])[:width]]
        try:
            vectors = embed_texts(self.embedding_function, texts)
        except ModelUnavailableError as exc:
            model_unavailable(self, exc)
            break
        self.dense_error = None
        ready, row = [], 0
        for item, width in zip(chunk, widths):
            mine = vectors[row:row + width]
            row += width
            if width < len(item.embed_texts[:32]):  # the rest waits (first_texts_first)
                ready.append(dataclasses.replace(
                    item, embed_texts=item.embed_texts[:1], vectors=mine,
                    metadata={**item.metadata, PARTIAL: True}))
            else:
                ready.append(dataclasses.replace(item, vectors=mine))
        with self._lock:  # an item staged again meanwhile waits for its new text
            fresh = [new for new, old in zip(ready, chunk) if self._pending.get(old.id) is old]
            try:
                self.upsert(fresh)
            except ChromaUnavailableError:
                if not self._detached:
                    raise
                break  # the server went away again: the rest waits for it (index_mirror)
            written = {id(new) for new in fresh}
            for new, old in zip(ready, chunk):
                if id(new) in written and new.metadata.get(PARTIAL):
                    self._rest[old.id] = dataclasses.replace(old, vectors=new.vectors)
        embedded += len(texts)
        done += len(chunk)
        if progress is not None:
            progress(done, total)
    return embedded, done, False

def fill_rest(self, batch: int, stop: threading.Event | None,
               progress: "Callable[[int, int], None] | None" = None) -> int:
    """Embed the other texts of items written with their first text alone (`fill`)."""
    embedded = done = 0
    while stop is None or not stop.is_set():
        with self._lock:
            if self._pending:  # newly staged items: their first texts before these (`fill`)
                break
            todo = sorted(self._rest.values(),
                          key=lambda it: (sum(len(t) for t in it.embed_texts[:32]), it.id))
            chunk = todo[:max(1, batch // 4)]  # ~9 texts each: batches of ~FILL_BATCH
        total = done + len(todo)
        if not chunk:
            break
        texts = [t or " " for item in chunk for t in item.embed_texts[1:32]]
        try:
            vectors = embed_texts(self.embedding_function, texts) if texts else []
        except ModelUnavailableError as exc:
            model_unavailable(self, exc)
            break
        ready, row = [], 0
        for item in chunk:
            width = len(item.embed_texts[1:32])
            first = np.asarray(item.vectors, dtype=np.float32).reshape(1, -1)
            mine = first
            if width:
                rest = np.asarray(vectors[row:row + width], dtype=np.float32)
                mine = np.concatenate([first, rest.reshape(width, first.shape[1])])
            ready.append(dataclasses.replace(item, vectors=mine))
            row += width
        with self._lock:  # staged again or removed meanwhile: that wins
            fresh = [new for new, old in zip(ready, chunk)
                     if self._rest.get(old.id) is old and old.id not in self._pending]
            for old in chunk:
                if self._rest.get(old.id) is old:
                    del self._rest[old.id]
            self.upsert(fresh)
        embedded += len(texts)
        done += len(chunk)
        if progress is not None:
            progress(done, total)
    return embedded

def model_unavailable(self, exc: Exception) -> None:
    """Switch to keyword-only search; say so once per process on stderr (a log warning)."""
    global _warned_keyword_only
    self.dense_error = str(exc)
    if not _warned_keyword_only:
        _warned_keyword_only = True
        log.warning("skillbank: no embedding model, searching by keyword only until one is "
                    "available (%s)", exc)
