"""The files beside a SKILL.md, listed cheaply and safely.

A skill folder comes from a git clone or a model, so it may hold anything: a named pipe (opening
it blocks for ever), a device, a multi-gigabyte data file. Listing resources happens on every
`load()`, so it must never block and never read more than a bounded amount: only regular files
are listed, a file is hashed only up to `MAX_HASH_BYTES` (bigger ones are listed with an empty
sha256), and a hash is remembered by (path, inode, size, mtime) so an unchanged file is never
read twice.
"""

from __future__ import annotations

import hashlib
import os
import stat
import threading
from collections import OrderedDict
from pathlib import Path
from typing import BinaryIO

from skillbank.memories.skills.folder_files import served_files
from skillbank.records import Resource

MAX_RESOURCES = 500
#: Files larger than this are listed (path and size) but not hashed: hashing a 4 GiB file on
#: every load took 18.7 s. 32 MiB hashes in ~50 ms and covers every real script or reference.
MAX_HASH_BYTES = 32 << 20
_CACHE_SIZE = 4096

_cache: "OrderedDict[tuple[str, int, int, int], str]" = OrderedDict()
_cache_lock = threading.Lock()


def open_for_hash(path: Path) -> BinaryIO:
    """Open a regular file for hashing without ever blocking (O_NONBLOCK, no controlling tty).

    The caller has checked it is a regular file; O_NONBLOCK also covers a file swapped for a
    FIFO between that check and this open.
    """
    flags = os.O_RDONLY | getattr(os, "O_NONBLOCK", 0) | getattr(os, "O_NOCTTY", 0)
    fd = os.open(path, flags)
    try:
        if not stat.S_ISREG(os.fstat(fd).st_mode):
            raise OSError(f"{path} is not a regular file")
        return os.fdopen(fd, "rb")
    except BaseException:
        os.close(fd)
        raise


def file_sha256(path: Path, st: os.stat_result) -> str:
    """sha256 of a regular file, '' when it is over `MAX_HASH_BYTES`; cached by stat."""
    if st.st_size > MAX_HASH_BYTES:
        return ""
    key = (str(path), st.st_ino, st.st_size, st.st_mtime_ns)
    with _cache_lock:
        cached = _cache.get(key)
        if cached is not None:
            _cache.move_to_end(key)
            return cached
    digest = hashlib.sha256()
    remaining = MAX_HASH_BYTES + 1
    with open_for_hash(path) as handle:
        while remaining > 0:
            block = handle.read(min(1 << 16, remaining))
            if not block:
                break
            digest.update(block)
            remaining -= len(block)
    if remaining <= 0:  # grew past the cap while being read
        return ""
    value = digest.hexdigest()
    with _cache_lock:
        _cache[key] = value
        while len(_cache) > _CACHE_SIZE:
            _cache.popitem(last=False)
    return value


def list_resources(folder: Path, own: bool = True) -> list[Resource]:
    """The files beside a SKILL.md a read serves (`folder_files.served_files`), with sizes and
    sha256, at most `MAX_RESOURCES`."""
    resources: list[Resource] = []
    for relative, st in served_files(folder, own)[:MAX_RESOURCES]:
        try:
            real = (folder / relative).resolve()
            resources.append(Resource(path=relative, size=st.st_size, sha256=file_sha256(real, st)))
        except OSError:
            continue
    return resources
