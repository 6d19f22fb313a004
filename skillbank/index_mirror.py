"""An index whose Chroma server did not answer when the index was first needed: keyword search
from what its memory staged (the files), and the server reached again later.

A team worker (or any bank on a `chroma run` server) that started while the server was down
answered `find_skills` and `memory_context` with the Chroma error instead of keyword hits: the
index opened its collection when it was made, and its keyword side (the mirror and BM25) was
only ever read from Chroma. A worker that had read its index before the outage answered by
keyword. The files are the truth, so here such an index starts *detached*: an empty mirror,
which the memory's sync fills by staging what it reads (`index_fill.stage`), searchable by
keyword with the outage note in `dense_error`. It asks the server again when it is searched,
read (`current`) or written, at most every INDEX_RETRY_SECONDS (DENSE_QUIET_SECONDS after a
request that timed out). Once the server answers, the mirror is read from Chroma, whatever was
staged and is not there at that version is staged again, and `on_attach` runs (the skill
library embeds it in the background). Writes while detached fail with ChromaUnavailableError,
as writes during an outage always did (the guideline and experience memories keep theirs in
their records and stage them); a delete leaves the mirror at once and reaches Chroma once it
answers.
"""

from __future__ import annotations

import logging
import threading
import time
from typing import TYPE_CHECKING, Any, Callable, Iterable, Iterator

from skillbank.errors import EmbeddingMismatchError
from skillbank.filters import matches
from skillbank.index_ownership import OWNER_KEY, owned_where, owns, tag_entry
from skillbank.index_outage import (
    CHROMA_DOWN, INDEX_RETRY_SECONDS, ChromaUnavailableError, IndexUnreached, is_outage,
    is_timeout, outage_reason,
)

if TYPE_CHECKING:
    from skillbank.index import HybridIndex, IndexItem

log = logging.getLogger("skillbank.index")
#: (client, owner, whether the collection is this owner's alone): the bank's Chroma placement.
Connect = Callable[[], "tuple[Any, str | None, bool]"]


def open_index(connect: Connect, name: str, embedding_function: Any, *, shared: bool,
               snapshot: Any = None, url: str | None = None,
               detached_ok: bool = False) -> "HybridIndex":
    """A HybridIndex on what `connect` reaches; on a server (`shared`) that does not answer,
    a detached one that reaches it later when `detached_ok` (`start_without_chroma`: a
    server's open), else the clear error as before (a one-shot open, embedded Chroma)."""
    from skillbank.index import HybridIndex

    why = None
    try:
        client, owner, private = connect()
    except ChromaUnavailableError as exc:
        if not (shared and detached_ok):
            raise
        client, owner, private, why = None, None, True, _first_line(exc)
    try:
        index = HybridIndex(client, name, embedding_function, shared=shared, snapshot=snapshot,
                            owner=owner, adopt_untagged=private)
    except EmbeddingMismatchError as exc:
        if private:
            raise
        raise shared_mismatch(exc) from None
    if shared:
        from skillbank.index_outage import without_credentials

        index._connect = connect
        index._server = without_credentials(url or "")  # named in its errors while detached
    if why is not None:
        detach(index, why)
    return index


def shared_mismatch(exc: EmbeddingMismatchError) -> EmbeddingMismatchError:
    """The error for another embedding's collection in a database shared with others
    (`chroma_database` set by hand): `skillbank reindex` never drops a collection there, so
    advising it made a loop, reindex failing with the same advice (hunt-chroma #5, session 29).
    """
    said = str(exc).split("; open it with", 1)[0]
    return EmbeddingMismatchError(
        f"{said}, in a Chroma database shared with other deployments (chroma_database), which "
        "`skillbank reindex` never drops: give this deployment its own collection_prefix "
        "(SKILLBANK_COLLECTION_PREFIX) or chroma_database, or open it with the same embedding")


def detach(index: "HybridIndex", why: str, timed_out: bool = False) -> dict[str, Any]:
    """Serve `index` by keyword from what was staged, until the server answers (held lock or
    a new index). Returns the mirror searches use meanwhile."""
    if not index._detached:
        log.warning("skillbank: %s is searched by keyword from its files until the Chroma "
                    "server answers (%s)", index.name, why)
    index._coll, index._detached = None, True
    index._unreached = why
    index.dense_error = down_note(index)
    wait = _quiet_seconds() if timed_out else INDEX_RETRY_SECONDS
    index._attach_after = time.monotonic() + wait
    if index._mirror is None:  # keep a mirror already read: it is the best keyword side
        staged = list(index._pending.values())
        index._mirror, index._chunks = {}, 0
        index._live.invalidate()
        index._pending.clear()
        index._rest.clear()
        index.stage(staged)
    return index._mirror


def detach_on_outage(index: "HybridIndex", exc: BaseException) -> bool:
    """Detach `index` now when `exc` says its server does not answer; whether it is detached.

    A write that met the outage first, on an index that had reached its server, left the
    memory nothing to stage into: the next search detached the index with a mirror lacking
    that write, and an experience recorded during the outage was recalled by no one until
    the server came back (session 29's note, reproduced in session 31). Detached here, the
    memory stages it (searchable by keyword at once), as one started while the server was
    down always did."""
    if index._connect is None or not (isinstance(exc, ChromaUnavailableError)
                                       or is_outage(exc)):
        return detached(index)
    with index._lock:
        if not index._detached:  # `clear_outage` raises from None: the timeout is the context
            detach(index, _first_line(exc),
                   timed_out=is_timeout(exc) or is_timeout(exc.__context__))
    return True


def ids_where(index: "HybridIndex", where: dict[str, Any], page: int = 200) -> Iterator[str]:
    """`HybridIndex.ids_where`: Chroma's exact filter, a page at a time; while the server does
    not answer (the index detached, or a request meeting the outage detaches it), the entries
    of the keyword side's mirror that match `where` (what was read before the outage and what
    the memory staged since).

    Why: a conversation's turn finds its thread's open record this way, and asked Chroma
    unguarded: while the server was down every turn recorded with a thread raised, and the
    adapters always pass one (a LangChain thread id, a LlamaIndex session), so every agent run
    was lost, where a record without a thread was kept and staged (hunt-agents-team #1,
    session 31)."""
    attach_if_due(index)
    index._load_mirror()
    given: set[str] = set()
    offset = 0
    try:
        while not detached(index):
            mine = owned_where(index.owner, index._foreign, {"$and": [where, {"chunk": 0}]})
            got = index._collection.get(where=mine, limit=page, offset=offset, include=[])
            for found in got["ids"]:
                given.add(found)
                yield found
            if len(got["ids"]) < page:
                return
            offset += page
    except Exception as exc:
        if not detach_on_outage(index, exc):
            raise
    with index._lock:
        held = [item_id for item_id, (_, meta) in index._load_mirror().items()
                if item_id not in given and matches(where, meta)]
    yield from held


def attach_if_due(index: "HybridIndex") -> None:
    """Reach the server again if `index` is detached and the retry time has come; called where
    a search or write begins, before it reads the mirror (never with the index lock held by
    a caller that already read it: the mirror is replaced)."""
    if not index._detached or time.monotonic() < index._attach_after:
        return
    try:
        client, owner, private = index._connect()  # outside the lock: the bank opens it
    except ChromaUnavailableError as exc:
        index._attach_after = time.monotonic() + INDEX_RETRY_SECONDS
        index._unreached = _first_line(exc)
        return
    with index._lock:
        if not index._detached:
            return
        staged = list(index._pending.values())
        kept = index._mirror
        try:
            index.client, index.owner, index._adopt = client, owner, private
            index._foreign = owner is not None and not private
            index._coll = index._open_collection()
            index._mirror = None
            mirror = read_mirror(index)
        except Exception as exc:
            if not (is_outage(exc) or isinstance(exc, ChromaUnavailableError)):
                raise
            index._mirror = kept
            detach(index, _first_line(exc), timed_out=is_timeout(exc))
            return
        index._detached = False
        if (index.dense_error or "").startswith(CHROMA_DOWN):
            index.dense_error = None
        index._live.invalidate()
        index._pending.clear()
        index._rest.clear()
        index.stage([item for item in staged if not _held(mirror, item)])
        if not _delete_doomed(index, mirror):
            return
        log.warning("skillbank: the Chroma server answers again; %s is indexed there "
                    "(%d items to embed)", index.name, index.pending)
    if index.on_attach is not None:
        index.on_attach()


def detached(index: "HybridIndex") -> bool:
    """Whether `index` has not reached its server (yet, or again): its keyword side is what its
    memory staged, and a write it refuses is staged by a memory that keeps its writes."""
    return bool(getattr(index, "_detached", False))


def current(index: "HybridIndex") -> dict[str, tuple[str, dict[str, Any]]]:
    """The mirror a read of `index` answers from (`ids`, `metadata`, `count`, `hashes`), after
    `attach_if_due` has asked the server again.

    Why: only searches and writes asked again, and a memory whose work begins with `ids` or
    `metadata` never re-attached. A bank started while its Chroma server was down recalled no
    experience until it was restarted, however long the server had been back (the journal's
    sync reads `metadata` first, and failed on the detached index every time), and
    `save_skill` failed with the old "Connection refused" until a search ran (hunt-chroma #3
    and #4, session 24)."""
    attach_if_due(index)
    return index._load_mirror()


def delete_detached(index: "HybridIndex", item_ids: Iterable[str]) -> int:
    """`delete` while the server is not reached (the caller holds the lock): the items leave
    the mirror (keyword search stops finding them at once) and are deleted from Chroma when it
    answers again, unless this process stages them anew by then.

    Why: a skill folder removed while a worker served by keyword made its next sync raise the
    Chroma error (session 20 left item), where a changed skill was staged and served. A
    guideline forgotten meanwhile was already dropped from the index later (its memory retries)."""
    removed = 0
    mirror = index._load_mirror()
    for item_id in item_ids:
        entry = mirror.pop(item_id, None)
        index._pending.pop(item_id, None)
        index._rest.pop(item_id, None)
        index._doomed.add(item_id)  # Chroma may hold it, staged here or not
        if entry is not None:
            removed += 1
            index._chunks -= int(entry[1].get("chunks", 1))
    index._live.note_changed(list(index._doomed))
    return removed


def _delete_doomed(index: "HybridIndex",
                   mirror: dict[str, tuple[str, dict[str, Any]]]) -> bool:
    """On attach (the lock held, what was staged re-staged): delete from Chroma what was deleted
    while detached. False when the server failed again: the ids wait for the next attach.

    Every id deleted and not staged since goes, whatever version Chroma holds: a hash cannot
    tell a newer version this process staged and never wrote from one another worker wrote
    (a skill edited and then removed during the outage came back after attach, review). A
    skill another worker wrote anew is staged again by this worker's next sync, as its files
    say; a removed one served to every worker would not be."""
    doomed = sorted(i for i in index._doomed if i in mirror and i not in index._pending)
    index._doomed.clear()
    if not doomed:
        return True
    try:
        index.delete(doomed)
    except ChromaUnavailableError as exc:  # the server went again: keyword, and wait
        index._doomed.update(doomed)
        detach(index, _first_line(exc))
        return False
    return True


def read_mirror(self: "HybridIndex") -> dict[str, tuple[str, dict[str, Any]]]:
    """Read every item's keyword text and metadata from Chroma (the caller holds the lock)."""
    if self._snapshot is not None:
        restored = self._live.restore(str(self._collection.id), self._collection.count())
        if restored is not None:
            self._mirror, self._chunks = restored
            return self._mirror
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
            if not owns(self.owner, self._adopt, meta):
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
            self._collection.update(
                ids=batch, metadatas=[tag_entry(self.owner, untagged[i]) for i in batch])
        for item_id in mirror:
            if item_id in untagged:
                tag_entry(self.owner, mirror[item_id][1])
    self._mirror = mirror
    self._chunks = chunks
    return mirror


def read_or_detach(index: "HybridIndex") -> dict[str, tuple[str, dict[str, Any]]]:
    """`read_mirror`, or, on a server that does not answer (a worker's index invalidated by
    another's write mid-outage), the keyword side from what is staged (`detach`)."""
    try:
        return read_mirror(index)
    except Exception as exc:
        if index._connect is None or not is_outage(exc):
            raise
        return detach(index, _first_line(exc), timed_out=is_timeout(exc))


def down_note(index: "HybridIndex") -> str:
    """What `dense_error` says while `index` is detached (how every face words an outage)."""
    return f"{CHROMA_DOWN} ({index._unreached}); searching by keyword only"


def unreached(index: "HybridIndex") -> ChromaUnavailableError:
    """The error for a Chroma request made while `index` is detached (`clear_outage` names
    what was not done)."""
    server = getattr(index, "_server", "")
    shown = index._unreached if not server or server in index._unreached \
        else f"at {server}: {index._unreached}"
    return IndexUnreached(shown)


def fill_behind(index: "HybridIndex", **options: Any) -> None:
    """Embed, on a thread of its own, what was staged while the server did not answer."""

    def fill() -> None:
        try:
            index.fill(wait=False, **options)
        except Exception as exc:  # noqa: BLE001 - keyword search keeps answering
            log.warning("skillbank: embedding %s after the Chroma server came back failed: %s",
                        index.name, exc)

    threading.Thread(target=fill, daemon=True, name="skillbank-embed-back").start()


def _held(mirror: dict[str, tuple[str, dict[str, Any]]], item: "IndexItem") -> bool:
    """Chroma already holds `item` at this version, whole (another worker embedded it)."""
    from skillbank.index_fill import PARTIAL

    entry = mirror.get(item.id)
    if entry is None or entry[0] != item.keyword_text or entry[1].get(PARTIAL):
        return False
    digest = item.metadata.get("hash")
    return digest is not None and entry[1].get("hash") == digest and \
        int(entry[1].get("chunks", 1)) == len(item.embed_texts[:32] or [" "])


def _quiet_seconds() -> float:
    from skillbank.index import DENSE_QUIET_SECONDS

    return DENSE_QUIET_SECONDS


def _first_line(exc: BaseException) -> str:
    """Why the server was not reached, once (`index_outage.outage_reason`)."""
    return outage_reason(exc)


def count_where(index: "HybridIndex", where: dict[str, Any] | None) -> int:
    """How many items of `index` match `where`, from the mirror (no request): what a search
    filtered by `where` could see. `count()` is every item, of every namespace: a scoped caller
    told it learnt the size of other tenants' memory (review 1 #8, session 32)."""
    return sum(1 for _, meta in current(index).values() if matches(where, meta))


def pending_where(index: "HybridIndex", where: dict[str, Any] | None) -> int:
    """`index.pending` (items not embedded yet), of those matching `where` only."""
    if not getattr(index, "_pending", None):
        return 0
    with index._lock:
        return sum(1 for item in index._pending.values() if matches(where, item.metadata))
