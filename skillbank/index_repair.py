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
#: What Chroma and SQLite say of a damaged store (chromadb wraps SQLite's and its own).
_DAMAGED = re.compile(r"malformed|file is not a database|error in compaction|failed to apply "
                      r"logs|database disk image|database corruption|no such table", re.I)


def looks_damaged(exc: BaseException) -> bool:
    """Whether an error reads like a damaged embedded index (and not, say, a full disk)."""
    return bool(_DAMAGED.search(f"{type(exc).__name__}: {exc}"))


HINT = ("the memory root's index (its chroma/ folder) looks damaged; the files are the truth: "
        "rebuild the index from them with `skillbank reindex --fresh`")


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
