"""A Chroma server that lost an open index's collection: looked up again, rebuilt from the files.

Why (hunt-chroma #1, session 29): an index keeps its `Collection` (its id) for the life of
the bank. A server restarted on an empty path, or a collection deleted (or dropped and made
again by another process), left every later call of a long-lived bank (an MCP server, an agent
process) failing with chromadb's raw "Collection [...] does not exist" for good: `sync()` saw
its own cached mirror and found nothing to do, `reindex()` emptied the stale collection and
failed the same way, and the MCP tools answered a bare "Error executing tool".

The files are the truth and Chroma an index derived from them, so "collection not found" means
"index gone": the index looks its collection up by name again (created empty when it is gone,
as a fresh open does), forgets what it held in memory, and marks itself `gone`; the call that
met it fails with `IndexGoneError` (a clear `ChromaUnavailableError`: a write is kept in the
journal as during an outage, a search answers by keyword), and the bank's next call of that
memory re-syncs it from the files (`Skillbank._before_use`), as `sync()` and `reindex()` do.
"""

from __future__ import annotations

import functools
import logging
import threading
from typing import Any, Callable, TypeVar

from skillbank.index_outage import ChromaUnavailableError

F = TypeVar("F", bound=Callable[..., Any])
log = logging.getLogger("skillbank.index")


class IndexGoneError(ChromaUnavailableError):
    """The Chroma server no longer holds an index's collection; it is made again and rebuilt
    from the files by the memory's next sync."""


def is_gone(exc: BaseException) -> bool:
    """Whether `exc` is Chroma saying a collection, or the database holding it, does not exist
    (a server restarted on an empty path lost the deployment's database too), not an outage."""
    try:
        from chromadb.errors import ChromaError
    except ImportError:  # pragma: no cover - chromadb is a dependency
        return False
    text = str(exc).lower()
    return isinstance(exc, ChromaError) and "does not exist" in text and (
        "collection" in text or "database" in text or "tenant" in text)


def _open_again(index: Any) -> Any:
    """`index`'s collection by name, created with its database when the server lost both."""
    try:
        return index._open_collection()
    except Exception as exc:  # noqa: BLE001 - only a missing database is made here
        if not is_gone(exc):
            raise
    from skillbank.index_ownership import ensure_database

    client = index.client
    ensure_database(client, client.tenant, client.database)
    return index._open_collection()


def reopen(index: Any, what: str, *, forget: bool = True) -> IndexGoneError:
    """Look `index`'s collection up by name again (created empty when gone), mark it `gone`
    for its memory's re-sync, and (`forget`) forget what it held in memory; the error for the
    call that met it.

    The call that met the loss (`reopen_when_gone`) does not forget: it answers by keyword
    from what this process holds (the mirror and BM25 of the files as they were), and its
    memory's re-sync (`resync_if_gone`) forgets before it rebuilds. Forgetting here made that
    keyword side read the new, empty collection: the call answered [] (hunt-chromahttp #2,
    session 34)."""
    with index._lock:
        index._coll = _open_again(index)
        if forget:
            _forget(index)
        index.gone = True
    log.warning("skillbank: the Chroma collection %s was gone from the server; it is made "
                "again and rebuilt from the files", index.name)
    server = getattr(index, "_server", "") or "the Chroma server"
    return IndexGoneError(
        f"the Chroma collection {index.name} was gone from {server} (a server restarted on an "
        f"empty path, or the collection deleted), so {what}; it was made again and is rebuilt "
        "from the files at this memory's next call (or `skillbank reindex`): try again")


def _forget(index: Any) -> None:
    """What `index` held in memory of its collection, dropped (under its lock): read again
    from the collection as it is now."""
    index._mirror = None
    index._live.invalidate()
    index._chunks = 0
    index._pending.clear()
    index._rest.clear()


def reopen_when_gone(what: str) -> Callable[[F], F]:
    """Decorate an index method: on a server, a collection that is gone is looked up again
    (`reopen`) and the call fails with `IndexGoneError`, never chromadb's NotFoundError."""

    def decorate(method: F) -> F:
        @functools.wraps(method)
        def wrapper(self: Any, *args: Any, **kwargs: Any) -> Any:
            try:
                return method(self, *args, **kwargs)
            except Exception as exc:
                if not (getattr(self, "shared", False) and is_gone(exc)):
                    raise
                raise reopen(self, what, forget=False) from None
        return wrapper  # type: ignore[return-value]

    return decorate


def recheck(index: Any) -> bool:
    """Before a sync: reopen `index` if its server no longer holds the collection it has open
    (one lookup by name), so the sync compares the files with the index as it is. A server
    that does not answer is left to the sync (it words the outage): False, and a timeout
    starts the index's quiet window."""
    if not getattr(index, "shared", False) or index._coll is None:
        return True
    try:
        found = index.client.get_collection(index.name,
                                            embedding_function=index.embedding_function)
    except Exception as exc:  # noqa: BLE001 - only "gone" is ours to handle here
        if not is_gone(exc):
            index._timed_out(exc)
            return False
        found = None
    if found is None or found.id != index._coll.id:
        reopen(index, "nothing was lost")
    return True


def recheck_all(bank: Any) -> list[str]:
    """`recheck` every index `bank` has open (before its `sync` and `reindex`, which rebuild
    what was lost themselves: no re-sync of their own first, whose work their report hid);
    the kinds of memory whose lost collection could not be rebuilt now (its server does not
    answer), for their reports to say so.

    One server answers for them all: once it has not answered (a timed-out request moments
    ago, or this lookup), the others are not asked. A frozen server cost each of the three
    lookups the whole `chroma_timeout` before the sync met the same wait again (review,
    session 29: a sync of 10 s at a 2 s timeout, 6 of them lookups). A lost collection is
    asked about even then, once: a sync is the explicit repair (review 4, session 34)."""
    with bank._guard:
        indexes = list(bank._indexes.items())
    answering = not any(getattr(index, "shared", False) and index._quiet()
                        for _, index in indexes)
    left: list[str] = []
    for kind, index in indexes:
        asked = answering
        reached = answering = answering and recheck(index)
        if not index.gone:
            continue
        if not reached and (asked or not recheck(index)):  # no answer (asked once, not twice:
            # a frozen server's timeout each): what keyword search answers
            left.append(kind)  # from is kept (dropped, it answered nothing; review 3, s. 34)
            continue  # and the first call once it answers rebuilds it
        # What the call that met the loss answered from (`reopen`), dropped first: the sync
        # compared the files with that old mirror, found nothing to do and left the collection
        # empty, every search keyword-only (review 2 #1, session 34).
        with index._lock:
            _forget(index)
        index.gone = False
    return left


def resync_if_gone(bank: Any, kind: str) -> None:
    """Before `bank` hands out the memory `kind`: when its index found the collection gone,
    that memory is synced from the files first, so the next call after the clear error finds
    everything again instead of an empty index. A server that does not answer now leaves it
    marked, for the call after."""
    with bank._guard:
        index, memory = bank._indexes.get(kind), bank._memories.get(kind)
    if index is None or memory is None or not index.gone:
        return
    # One rebuild per loss; the other callers wait for it, then answer from it (six threads
    # each forgot and rebuilt it, some in the middle of another's rebuild: review 4, s. 34).
    with index.__dict__.setdefault("_rebuilding", threading.Lock()):
        if not index.gone:
            return  # rebuilt while this caller waited
        if getattr(index, "shared", False) and (index._quiet() or not recheck(index)):
            return  # no answer: what the call that met the loss answered from is all keyword
            # search has now (dropped, searches answered nothing; review 3, session 34)
        with index._lock:
            _forget(index)  # what the call that met the loss answered from (`reopen`)
        index.gone = False
        try:
            memory.sync(**({"asked": False} if kind == "skills" else {}))  # no report read
        except ChromaUnavailableError:
            index.gone = True
        except Exception:  # noqa: BLE001 - the call goes on; the memory's own error shows there
            log.warning("skillbank: rebuilding %s from the files failed", index.name,
                        exc_info=True)


def not_rebuilt(index: Any) -> Any:
    """The finding of a sync that could not rebuild `index`'s lost collection."""
    from skillbank.records import Finding

    return Finding(severity="warning", code="index-unavailable", path=index.name, message=(
        f"the Chroma collection {index.name} was gone and the server does not answer now, so "
        "it was not rebuilt; searches answer by keyword from what this process holds, and the "
        "first call once the server answers rebuilds it from the files"))
