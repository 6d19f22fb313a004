"""A skill folder's file digests, kept while a cheap stamp of the folder says nothing changed.

Every search hit is judged (`TrustBook.annotate`): its folder's per-file digests name its
version, which the scan results and the accepted pin are keyed on. `pins.DigestCache` already
skips hashing unchanged files, but listing the folder the way `pins.skill_files` does (os.walk,
a resolve, an lstat and a stat per file, relative paths) was ~0.4 ms per hit, ~1.7 ms of a warm
search at 2,000 skills. Here the digests of a folder are kept with a stamp of it: one `scandir`
per directory and the `stat` each entry brings (size, mtime, ctime, inode — the same evidence
`DigestCache` trusts, ctime and inode because an mtime can be put back), with symlinks' targets.
An in-place edit of a nested file changes nothing above it, so no cheaper signal (a directory
mtime) would see every change; the stamp does, and any change recomputes the digests.

With `whole` (a skill not the bank's own, whose version covers every file: `pins.OUTSIDE`) the
stamp walks every folder the digests do, hidden and vendored ones too, up to
`pins.MAX_OUTSIDE_FILES` entries.

The stamp covers a superset of what `skill_files` lists (hidden files too), so it can only
recompute more often, never less; the digests are kept only when the stamp taken before and
after computing them agree (a folder changing meanwhile is not kept).
"""

from __future__ import annotations

import os
import threading
from pathlib import Path
from typing import Any

from skillbank.memories.skills.pins import (MAX_FILES, MAX_OUTSIDE_FILES, UNWATCHED_DIRS,
                                            DigestCache)
from skillbank.memories.skills.resources import SKIP_DIRS

#: A folder with more entries than this is not stamped (its digests are computed each time).
MAX_ENTRIES = 4 * MAX_FILES


def _entered(name: str, whole: bool) -> bool:
    """Whether the stamp walks into a folder: the digests' files, or with `whole` every file
    a non-own skill's version covers (`pins.OUTSIDE`)."""
    if whole:
        return name not in UNWATCHED_DIRS
    return not name.startswith(".") and name not in SKIP_DIRS


def stamp(folder: Path, whole: bool = False) -> tuple[Any, ...] | None:
    """What changes whenever any file the digests cover changes, or None (not stampable)."""
    limit = MAX_OUTSIDE_FILES if whole else MAX_ENTRIES
    entries: list[tuple[Any, ...]] = []
    pending = [("", str(folder))]
    try:
        while pending:
            prefix, path = pending.pop()
            with os.scandir(path) as listing:
                for entry in listing:
                    name = prefix + entry.name
                    if entry.is_dir(follow_symlinks=False):
                        if _entered(entry.name, whole):
                            pending.append((name + "/", entry.path))
                        continue
                    info = entry.stat(follow_symlinks=False)
                    row: tuple[Any, ...] = (name, info.st_size, info.st_mtime_ns,
                                            info.st_ctime_ns, info.st_ino)
                    if entry.is_symlink():  # where it points, and what is there now
                        try:
                            target = os.stat(entry.path)
                            row += (os.path.realpath(entry.path), target.st_size,
                                    target.st_mtime_ns, target.st_ctime_ns, target.st_ino)
                        except OSError:
                            row += (None,)
                    entries.append(row)
                    if len(entries) > limit:
                        return None
    except OSError:
        return None
    entries.sort(key=lambda row: row[0])
    return tuple(entries)


class StampedDigests:
    """`DigestCache.digests` for whole folders, recomputed only when the folder's stamp changed."""

    def __init__(self, files: DigestCache) -> None:
        self.files = files
        self._kept: dict[str, tuple[tuple[Any, ...], dict[str, str]]] = {}
        self._lock = threading.Lock()

    def digests(self, folder: Path, whole: bool = False) -> dict[str, str]:
        key = f"{folder}\0{whole}"
        before = stamp(folder, whole)
        kept = self._kept.get(key)
        if before is not None and kept is not None and kept[0] == before:
            return dict(kept[1])
        digests = self.files.digests(folder, whole)
        if before is not None and stamp(folder, whole) == before:
            with self._lock:
                self._kept[key] = (before, dict(digests))
        return digests

    def file_digest(self, path: Path, stat: os.stat_result) -> str:
        return self.files.file_digest(path, stat)
