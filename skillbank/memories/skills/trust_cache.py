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
import time
from pathlib import Path
from typing import Any, Callable

from skillbank.memories.skills.pins import (MAX_FILES, MAX_OUTSIDE_FILES, OUTSIDE,
                                            TOO_MANY, UNWATCHED_DIRS, DigestCache)
from skillbank.memories.skills.folder_files import SKIP_DIRS

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


#: Seconds a non-own skill's outside-the-pin digest (`pins.OUTSIDE`) is trusted on the ranking
#: path (search, list, catalog) before its folder is walked again. Walking every file of every
#: candidate on every query made a warm search with ten 5,000-file node_modules 137 ms instead of
#: 1 ms (review #4); serving a skill (`load`, `read_resource`), reviewing and scanning it always
#: walk (`fresh`), so a swapped vendored file still sends it back to review before it is served.
OUTSIDE_TTL = 5.0


class StampedDigests:
    """`DigestCache.digests` for whole folders, recomputed only when the folder's stamp changed.

    For a skill not the bank's own, the pinned files are stamped on every look as before, and
    the files outside the pin (`pins.OUTSIDE`) are stamped at most every `OUTSIDE_TTL` seconds
    unless the caller asks for a `fresh` look."""

    def __init__(self, files: DigestCache, clock: Callable[[], float] = time.monotonic) -> None:
        self.files = files
        self.clock = clock
        self._kept: dict[str, tuple[tuple[Any, ...], dict[str, str]]] = {}
        #: folder -> (pinned paths, whole stamp, outside digest, when last stamped)
        self._outside: dict[str, tuple[frozenset[str], tuple[Any, ...], str, float]] = {}
        self._lock = threading.Lock()

    def digests(self, folder: Path, whole: bool = False, fresh: bool = True) -> dict[str, str]:
        pinned = self._pinned(folder)
        if not whole:
            return pinned
        out = dict(pinned)
        other = self._outside_digest(folder, frozenset(pinned), fresh)
        if other:
            out[OUTSIDE] = other
        return out

    def _pinned(self, folder: Path) -> dict[str, str]:
        """The per-file digests, kept while the cheap stamp of the pinned walk is unchanged."""
        key = str(folder)
        before = stamp(folder, False)
        kept = self._kept.get(key)
        if before is not None and kept is not None and kept[0] == before:
            return dict(kept[1])
        digests = self.files.digests(folder, False)
        if before is not None and stamp(folder, False) == before:
            with self._lock:
                self._kept[key] = (before, dict(digests))
        return digests

    def _outside_digest(self, folder: Path, pinned: frozenset[str], fresh: bool) -> str:
        """`pins.OUTSIDE` of a folder: kept for `OUTSIDE_TTL` seconds on the ranking path, and
        while a stamp of the whole folder is unchanged."""
        key, now = str(folder), self.clock()
        kept = self._outside.get(key)
        if kept is not None and kept[0] == pinned and not fresh and now - kept[3] < OUTSIDE_TTL:
            return kept[2]
        before = stamp(folder, True)
        if kept is not None and kept[0] == pinned and kept[1] == before \
                and (before is not None or kept[2] == TOO_MANY):
            with self._lock:
                self._outside[key] = (pinned, before, kept[2], now)
            return kept[2]
        other = self.files.outside_digest(folder, set(pinned))
        # A folder past `MAX_OUTSIDE_FILES` has no stamp: kept too (it stays held), so each
        # look does not walk its 20,000 files again.
        if (before is not None or other == TOO_MANY) and stamp(folder, True) == before:
            with self._lock:
                self._outside[key] = (pinned, before, other, now)
        return other

    def file_digest(self, path: Path, stat: os.stat_result) -> str:
        return self.files.file_digest(path, stat)
