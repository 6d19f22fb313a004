"""One wording for storage that refused a write: a full disk, a read-only file system, the file
size limit (`ulimit -f`), a permission denied — and SQLite's (Chroma's) "database or disk is
full".

The CLI worded these (`skillbank.cli.reporting`), while the MCP tools answered only "Error
executing tool save_skill" on a full disk, so an agent could not tell it from a bug nor know that
nothing was saved (hunt-disk #3, session 29); EFBIG was a bare "[Errno 27] File too large" that
named neither the file nor the limit (hunt-disk #4). Every face words them here: the CLI, the
MCP server and the agent adapters' tools.

Through a client of another process the error comes back as a plain OSError carrying its text
alone (`skillbank.sharing.wire`), so the errno is read from "[Errno N]" when it has none.

An embedded Chroma's failure that reads like a damaged index ("Error in compaction") while the
disk under it has almost no room is the full disk (`full_disk`): `chroma_gate` raises it as
ENOSPC, so the repair named for a damaged index (delete and rebuild it) is not advised where
there is no room to rebuild (hunt-disk #2, session 32).
"""

from __future__ import annotations

import errno
import os
import re
from typing import Any

_ERRNO = re.compile(r"\[Errno (\d+)\]")
_SQLITE_FULL = "database or disk is full"

#: The words after the error for a full disk (the CLI's since session 18).
DISK_FULL = "the disk under the memory root is full; free space and retry"


def error_number(exc: BaseException) -> int | None:
    """The errno of an OSError, or the one its text names (an error through a client)."""
    number = getattr(exc, "errno", None)
    if isinstance(number, int):
        return number
    found = _ERRNO.search(str(exc))
    return int(found.group(1)) if found else None


#: Free bytes below which an embedded Chroma's failure to write counts as the disk being full.
FULL_ROOM = 16 << 20


def free_bytes(folder: Any) -> int | None:
    """Bytes this user may still write on the disk under `folder` (its nearest existing
    parent when it is not made yet), or None when that cannot be told."""
    import shutil
    from pathlib import Path

    path = Path(folder)
    while not path.exists() and path != path.parent:
        path = path.parent
    try:
        return shutil.disk_usage(path).free  # statvfs: what a user other than root may write
    except OSError:
        return None


def full_disk(exc: BaseException, folder: Any) -> bool:
    """Whether `exc`, an embedded Chroma's failure in `folder`, is its disk being full: SQLite's
    "database or disk is full", or what reads like a damaged index ("Error in compaction:
    Failed to apply logs to the metadata segment") while the disk has less than `FULL_ROOM`
    free. A skill save on a full disk was answered "the index looks damaged ... reindex
    --fresh", which deletes the index where there is no room to build it (hunt-disk #2,
    session 32)."""
    from skillbank.index_repair import looks_damaged

    if _SQLITE_FULL in str(exc).lower():
        return True
    if not looks_damaged(exc):
        return False
    free = free_bytes(folder)
    return free is not None and free < FULL_ROOM


def no_room(exc: BaseException) -> bool:
    """Whether `exc` (or what caused it) says the disk has no room: ENOSPC / EDQUOT, or
    SQLite's "database or disk is full". What a read may answer past (the journal keeps what
    the index refused), unlike a damaged index or a wrong embedding, which it must not hide."""
    seen: BaseException | None = exc
    for _ in range(5):
        if seen is None:
            return False
        if isinstance(seen, OSError) and seen.errno in (errno.ENOSPC, errno.EDQUOT):
            return True
        if _SQLITE_FULL in str(seen).lower():
            return True
        seen = seen.__cause__ or seen.__context__
    return False


def read_only_message(exc: BaseException, root: Any = None) -> str:
    """EROFS: the whole memory root read-only, or (`root` given, writable, and the path the
    error names in a folder under it) that folder alone, named: a skill delete on a read-only
    `skills/` mount said the root was read-only and that skillbank writes there even to read,
    while the same root's reads all worked (hunt-disk #3, session 32)."""
    path = denied_path(exc)
    if path is not None and os.path.isabs(path) and root is not None and under_root(exc, root):
        base = os.path.realpath(os.path.expanduser(os.fspath(root)))
        folder = os.path.dirname(os.path.realpath(path))
        if folder != base and os.access(base, os.W_OK):
            return (f"{exc}: {folder} is on a read-only file system (the rest of the memory "
                    "root is writable): skillbank reads what is in it but cannot change it; "
                    "make it writable (remount it read-write) and retry")
    return (f"{exc}: the memory root is on a read-only file system, and skillbank writes its "
            "lock and index files there even to read; copy the root somewhere writable (cp -a) "
            "and pass that as --root")


def denied_path(exc: BaseException) -> str | None:
    """The path a PermissionError names (through a client only its text carries it)."""
    filename = getattr(exc, "filename", None)
    if filename is not None:
        return os.fspath(filename)
    quoted = re.search(r"'([^']+)'", str(exc))
    return quoted.group(1) if quoted else None


def permission_message(exc: BaseException) -> str:
    """What a PermissionError under the root means and how to fix it (hunt-ops #5)."""
    path = denied_path(exc)
    folder = os.path.dirname(path) if path else "a folder of the memory root"
    return (f"{exc}: the user running skillbank may not write in {folder}; give it write "
            "access there (chown/chmod), or copy the root somewhere writable (cp -a) and pass "
            "that as --root")


def file_size_message(exc: BaseException) -> str:
    """EFBIG: the process's file size limit, with the file when the error names it."""
    path = denied_path(exc)
    what = f"cannot write {path}" if path else "cannot write a file of the memory root"
    return (f"{what}: it would pass the file size limit of the process (ulimit -f); the file "
            "is left as it was. Raise the limit (ulimit -f unlimited) and retry "
            f"([Errno {errno.EFBIG}] File too large)")


def under_root(exc: BaseException, root: Any) -> bool:
    """Whether the path `exc` names is in the memory root `root`, or it names none: only then
    is a refusal the root's trouble."""
    path = denied_path(exc)
    if path is None or root is None:
        return True
    base = os.path.realpath(os.path.expanduser(os.fspath(root)))
    target = os.path.realpath(path)
    return target == base or target.startswith(base + os.sep)


def outside_root_message(exc: BaseException) -> str:
    """A file outside the memory root this user may not read or write (a third-party skill
    folder's resource, an export target): its own permissions, not the root's."""
    path = denied_path(exc) or "a file"
    return f"{exc}: the user running skillbank may not read or write {path}; give it access there"


def storage_message(exc: BaseException, root: Any = None) -> str | None:
    """One line naming the cause and the fix when `exc` is storage refusing a write (or a read
    that needs one), else None. `root`: the memory root, so a refusal outside it is not told
    to "copy the root" (the tools said so of a third-party skill's file, review, session 29)."""
    if _SQLITE_FULL in str(exc).lower() and error_number(exc) != errno.ENOSPC:
        said = " ".join(str(exc).split())  # (as ENOSPC from `chroma_gate`: worded below)
        return f"{said} ({type(exc).__name__}): {DISK_FULL}"
    if not isinstance(exc, OSError):
        return None
    number = error_number(exc)
    if number == errno.ENOSPC:
        return f"{exc}: {DISK_FULL}"
    if number == errno.EROFS:
        return read_only_message(exc, root)
    if number == errno.EFBIG:
        return file_size_message(exc)
    if isinstance(exc, PermissionError) or number in (errno.EACCES, errno.EPERM):
        return permission_message(exc) if under_root(exc, root) else outside_root_message(exc)
    return None


def tool_message(exc: BaseException, root: Any = None) -> str | None:
    """For a model calling a tool (MCP, the LangChain and LlamaIndex tools): the cause, the fix
    and that the call saved nothing (a failed write is all or nothing), else None."""
    said = storage_message(exc, root)
    return f"{said}; nothing of this call was saved" if said is not None else None
