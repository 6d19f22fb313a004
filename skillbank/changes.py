"""Server mode's change feed: each process learns that another one wrote before it reads.

With a Chroma server (`--chroma-url`) several processes hold their own bank on one root, each
with in-memory state over the shared collections (the keyword mirror and BM25, loaded
guidelines, the skill catalogue). Every write appends one short line, this process's token, to
`<root>/.changes/<kind>.log`; before a read, a process compares the log's size with what it has
read so far (one `stat`), and if another token appeared it drops its in-memory state for that
memory and re-reads it. Appends of a few bytes with O_APPEND are atomic, so concurrent writers
never interleave; the cost of a read that finds nothing new is a single `stat`.
"""

from __future__ import annotations

import os
import secrets
import threading
from pathlib import Path

FOLDER = ".changes"


class ChangeFeed:
    """Per-memory change logs shared by every process on a root (server mode only)."""

    def __init__(self, root: Path) -> None:
        self.folder = Path(root) / FOLDER
        self.folder.mkdir(parents=True, exist_ok=True)
        self.token = secrets.token_hex(8)
        self._offsets: dict[str, int] = {}
        self._lock = threading.Lock()

    def _path(self, kind: str) -> Path:
        return self.folder / f"{kind}.log"

    def start(self, kind: str) -> None:
        """Everything logged so far is already in what this process is about to load."""
        with self._lock:
            self._offsets.setdefault(kind, self._size(kind))

    def _size(self, kind: str) -> int:
        try:
            return self._path(kind).stat().st_size
        except FileNotFoundError:
            return 0

    def wrote(self, kind: str) -> None:
        """Tell the other processes this one changed `kind`."""
        fd = os.open(self._path(kind), os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o600)
        try:
            os.write(fd, f"{self.token}\n".encode())
        finally:
            os.close(fd)

    def others_wrote(self, kind: str) -> bool:
        """Whether another process logged a write to `kind` since this one last looked."""
        size = self._size(kind)
        with self._lock:
            offset = self._offsets.get(kind, 0)
            if size <= offset:
                return False
            self._offsets[kind] = size
        with self._path(kind).open("rb") as handle:
            handle.seek(offset)
            fresh = handle.read(size - offset).decode("ascii", "replace").split()
        return any(token != self.token for token in fresh)
