"""A damaged embedded index is rebuilt from the files, which are the truth.

Users met it (crash hunt, session 18): a damaged `<root>/chroma/chroma.sqlite3` (a crash of
the disk, a bad copy, a half-restored backup) made every command fail with Chroma's own error,
including the `skillbank reindex` that docs/operating.md names as the repair; only deleting
`chroma/` by hand recovered. The index holds nothing the files do not (skills, guideline
files, the experience journal), so the repair deletes it and builds it again: `skillbank
reindex --fresh`, which errors that look like a damaged index now name.

Deleted, not set aside: a copy would keep the text of forgotten items in its free pages, and
`forget` promises that text leaves every file under the root (skillbank.forgetting).
"""

from __future__ import annotations

import re
import shutil
from pathlib import Path

from skillbank.errors import BusyError, InvalidInputError

INDEX_FOLDER = "chroma"
#: What Chroma and SQLite say of a damaged store (chromadb wraps SQLite's and its own). "Failed
#: to pull logs": Chroma could not read its own write-ahead log back, what every read of a
#: damaged root said once its process restarted (hunt-mcpmany #1c, session 24).
_DAMAGED = re.compile(r"malformed|file is not a database|error in compaction|failed to apply "
                      r"logs|failed to pull logs|database disk image|database corruption|"
                      r"no such table", re.I)


def looks_damaged(exc: BaseException) -> bool:
    """Whether an error, or one it was raised from (`raise ... from`), reads like a damaged
    embedded index (and not, say, a full disk: Chroma's "Error in compaction" on a disk with
    no room is raised as ENOSPC, `chroma_gate`, hunt-disk #2, session 32)."""
    import errno

    from skillbank.storage_errors import error_number

    seen: BaseException | None = exc
    for _ in range(8):  # a short chain; never loop on a cycle
        if seen is None:
            return False
        if isinstance(seen, OSError) and error_number(seen) == errno.ENOSPC:
            return False
        if _DAMAGED.search(f"{type(seen).__name__}: {seen}"):
            return True
        seen = seen.__cause__
    return False


HINT = ("the memory root's index (its chroma/ folder) looks damaged; the files are the truth: "
        "rebuild the index from them with `skillbank reindex --fresh`")
#: What a served root's error adds (the MCP server, a client of the owner process): `reindex
#: --fresh` is refused while a process has the index open.
SERVED = ("; stop the process that serves the root first (the MCP server, or the owner process "
          "the error came from): the repair is refused while it has the index open")


def damaged_message(exc: BaseException, served: bool = False) -> str | None:
    """The error with the repair named when it reads like a damaged index, else None. The MCP
    tools answered "Error executing tool memory_context" or Chroma's own words, and the CLI's
    lists and `stats` Chroma's "Failed to pull logs from the log store" (hunt-mcpmany #1c,
    session 24), where docs/operating.md promises every command names the repair."""
    if not looks_damaged(exc):
        return None
    said = " ".join(str(exc).split()) or type(exc).__name__
    return f"{said} ({type(exc).__name__}): {HINT}{SERVED if served else ''}"


def with_repair(text: str) -> str:
    """`text` (an owner process's error, as its client re-raises it) with the repair named when
    it reads like a damaged index: the client saw "the owner process raised InternalError:
    ... malformed" and nothing more (hunt-mcpmany #1c, session 24)."""
    return f"{text}: {HINT}{SERVED}" if _DAMAGED.search(text) and HINT not in text else text


def drop_index(root: Path) -> bool:
    """Delete the embedded index of `root` so the next open builds it from the files; False
    when there was none. Refused (BusyError) while another process serves the root: it has
    the index open."""
    from skillbank.locks import try_owner_lock

    folder = Path(root) / INDEX_FOLDER
    if not folder.exists():
        return False
    if folder.is_symlink() or not folder.is_dir():
        raise InvalidInputError(f"{folder} is not the index folder skillbank made; move it "
                                "away by hand")
    lock = try_owner_lock(Path(root))
    if lock is None:
        raise BusyError(f"another process serves the memory at {root} and has its index open; "
                        "stop it (skillbank serve, an agent, the memory browser), then run "
                        "`skillbank reindex --fresh` again")
    try:
        shutil.rmtree(folder)
    finally:
        lock.release()
    return True
