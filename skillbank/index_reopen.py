"""An embedded index deleted under the process that has it open: reopened, then rebuilt.

Users met it (hunt-ops #3): with `skillbank serve` owning a root, deleting its `chroma/` folder
(docs/operating.md names `skillbank reindex` as what to run after it) made `reindex`,
`reindex --fresh` and every `memory_context` fail with SQLite's "attempt to write a readonly
database" (code 1032) until the server was restarted. chromadb keeps one system per folder for
the life of the process, and that system still held the deleted database file open. `reindex`
now lets go of that system and opens the folder afresh (an empty index), pointing every open
index of the bank at the new client, before it rebuilds from the files.

A reindex on a disk with almost no room left is refused before it drops anything
(`refuse_without_room`): with 96 KiB free, the embedded Chroma's `delete_collection` never
returned, and `skillbank reindex` hung without a word for good (hunt-disk #8, session 29; with
128 KiB it failed cleanly). Rebuilding needs room for the index it writes anyway.
"""

from __future__ import annotations

import contextlib
import errno
import logging
import re
import shutil
from pathlib import Path
from typing import Any, Callable, TypeVar

log = logging.getLogger("skillbank.index")
T = TypeVar("T")

#: What SQLite says when the database file a connection has open was deleted or replaced.
_STALE = re.compile(r"readonly database|code: 1032|SQLITE_READONLY_DBMOVED", re.I)
#: The file an embedded Chroma keeps its records in.
DATABASE_FILE = "chroma.sqlite3"
#: Free bytes an embedded reindex needs before it drops a collection (ten times what hung).
REINDEX_ROOM = 1 << 20


def stale_handle(exc: BaseException) -> bool:
    """Whether `exc` says the open index's database file was deleted or replaced."""
    return bool(_STALE.search(f"{type(exc).__name__}: {exc}"))


def folder_gone(bank: Any) -> bool:
    """Whether the bank's own embedded index has lost its database file while open."""
    return _reopenable(bank) and bank._placement is not None and \
        not (Path(bank.settings.chroma_path) / DATABASE_FILE).exists()


def rebuilding(bank: Any, rebuild: Callable[[], T]) -> T:
    """`rebuild()` (the bank's reindex), on a freshly opened embedded index when the open one
    lost its files: before it when the folder is gone, and again once when it fails because
    the database file under it was deleted or replaced. Searches of the bank wait for it
    (`index_rebuild`)."""
    from skillbank.index_rebuild import gate_closed

    refuse_without_room(bank)
    # Skill writes wait for the whole rebuild (they take the library's sync lock first): one
    # that came in once the gate closed held the locks the rebuild needs and waited on the
    # gate, both stuck for REBUILD_WAIT, then failed on the emptied index (session 31's review).
    with _skill_writes_held(bank), gate_closed(bank):  # reads wait, never see emptied indexes
        if folder_gone(bank):
            reopen(bank)
        try:
            return rebuild()
        except Exception as exc:
            if not (_reopenable(bank) and stale_handle(exc)):
                raise
            log.warning("skillbank: the index under %s changed while it was open (%s); opening "
                        "it again and rebuilding it from the files", bank.settings.chroma_path,
                        exc)
        reopen(bank)
        return rebuild()


def _skill_writes_held(bank: Any) -> Any:
    """The open skill library's sync lock (every skill write takes it first), or nothing. Not
    `bank.skills`: opening the library before the rebuild opened its index with the new
    embedding, and a reindex that switches embeddings failed on the old collection. A library
    opened during the rebuild is not held: its writes do not wait on the gate (`freshness`)."""
    skills = getattr(bank, "_memories", {}).get("skills")
    lock = getattr(skills, "_sync_lock", None)
    return lock if lock is not None else contextlib.nullcontext()


def refuse_without_room(bank: Any) -> None:
    """Raise ENOSPC, nothing dropped, when the disk under the bank's own embedded index has
    less than `REINDEX_ROOM` free (a server's disk is the server's to mind)."""
    if not _reopenable(bank):
        return
    folder = Path(bank.settings.chroma_path)
    try:
        free = shutil.disk_usage(folder if folder.exists() else folder.parent).free
    except OSError:  # cannot tell: the rebuild says what it meets
        return
    if free < REINDEX_ROOM:
        raise OSError(errno.ENOSPC, f"only {free // 1024} KiB free under {folder}; a reindex "
                      f"needs at least {REINDEX_ROOM >> 20} MiB, and nothing was dropped")


def _reopenable(bank: Any) -> bool:
    """Only the bank's own embedded client: a caller's client or a server is not ours."""
    return not bank.settings.chroma_url and bool(getattr(bank, "_own_client", False))


def reopen(bank: Any) -> None:
    """Drop chromadb's system for the bank's folder and open the folder again; every index the
    bank opened gets the new client and its collection (created empty when it is gone)."""
    with bank._guard:
        old = bank._client
        bank._client = bank._placement = None
        _forget_system(old, str(bank.settings.chroma_path))
        client = bank.client  # a new PersistentClient (and its placement) on the folder
        for index in list(bank._indexes.values()):
            with index._lock:
                index.client = client
                index._coll = index._open_collection()
                index.invalidate()


def _forget_system(client: Any, path: str) -> None:
    """Stop and forget chromadb's per-path system, so the next client opens the folder anew."""
    from chromadb.api.shared_system_client import SharedSystemClient

    identifier = getattr(client, "_identifier", None) or path
    with SharedSystemClient._refcount_lock:
        SharedSystemClient._identifier_to_refcount.pop(identifier, None)
    system = SharedSystemClient._identifier_to_system.pop(identifier, None)
    if system is not None:
        try:
            system.stop()
        except Exception:  # noqa: BLE001 - a system on deleted files may not stop cleanly
            log.debug("stopping the old Chroma system failed", exc_info=True)
