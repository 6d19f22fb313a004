"""The root's write lock, which reports a timeout as skillbank's own `BusyError`.

`<root>/.write.lock` serialises file writes between the processes that share a memory root
(server mode lets several do so at once). A process that waits too long for it gets `BusyError`,
which every face turns into a clear message (CLI exit code 6, an MCP tool error), instead of
`filelock.Timeout`. Imported lazily by `skillbank.bank`: `import skillbank` stays light.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from filelock import FileLock, Timeout

from skillbank.errors import BusyError

WRITE_LOCK_FILE = ".write.lock"
#: Held by the process that owns an embedded root (skillbank.sharing serves it to the others).
OWNER_LOCK_FILE = ".owner.lock"

#: Seconds a write waits for another process to finish writing before `BusyError`.
DEFAULT_WRITE_LOCK_TIMEOUT = 60.0


class WriteLock(FileLock):
    """A `FileLock` whose every acquisition (`with lock:`, `lock.acquire(...)`) raises
    `BusyError` rather than `filelock.Timeout` when another process holds it too long."""

    #: The root of the bank that closed with this lock (`refuse`); None while it is open.
    closed_root: Path | None = None

    def refuse(self, root: Path) -> None:
        """Every later acquisition raises `ClosedError`: its bank was closed, and a memory
        taken from it before (`memory = bank.experiences`) must write nothing into a root
        another process may own by now (hunt-rag #6, session 24)."""
        self.closed_root = Path(root)

    def acquire(self, timeout: float | None = None, *args: Any, **kwargs: Any) -> Any:
        if self.closed_root is not None:
            from skillbank.errors import ClosedError

            raise ClosedError.for_root(self.closed_root)
        try:
            return super().acquire(timeout, *args, **kwargs)
        except Timeout:
            waited = self.timeout if timeout is None else timeout
            blocking = kwargs.get("blocking", True)
            how_long = f"within {waited:g} s" if blocking is not False and waited else "at once"
            root = Path(self.lock_file).parent
            raise BusyError(
                f"another process is writing to the memory at {root} and did not release its "
                f"write lock ({self.lock_file}) {how_long}; try again when it has finished"
            ) from None


def write_lock(root: Path, timeout: float = DEFAULT_WRITE_LOCK_TIMEOUT) -> WriteLock:
    """The write lock of the memory root `root` (a negative timeout waits for ever)."""
    return WriteLock(str(Path(root) / WRITE_LOCK_FILE), timeout=timeout)


def owner_lock(root: Path) -> FileLock:
    """The owner lock of the memory root `root` (not yet acquired): an OS lock, released when
    the owning process ends however it ends.

    Held by the process, not by the thread that took it (filelock's default is per thread):
    `skillbank serve` opens its bank on a loader thread and closes it on the main one, which
    then saw the lock as not held, so close saved no keyword snapshot (DIRTY was left and the
    next start rebuilt the keyword side, soak #4) and never released the lock itself."""
    return FileLock(str(Path(root) / OWNER_LOCK_FILE), thread_local=False)


def try_owner_lock(root: Path) -> FileLock | None:
    """`root`'s owner lock, acquired, or None when another process holds it: the one probe
    that opening a root, retiring a background owner, dropping the index and using the skill
    snapshot all ask (four hand-written copies had drifted apart in what they caught)."""
    lock = owner_lock(root)
    try:
        lock.acquire(timeout=0)
    except Timeout:
        return None
    return lock


def owner_lock_held(root: Path) -> bool:
    """Whether some process holds `root`'s owner lock now. False when the lock file cannot
    be opened at all (a read-only root): then nothing can hold it either."""
    try:
        lock = try_owner_lock(root)
    except OSError:
        return False
    if lock is None:
        return True
    lock.release()
    return False
