"""A full disk under the embedded index, without root or a mount (hunt-disk, session 32).

Two files in a test's folder `where` say what the disk does now, so a test turns the trouble
on and off in this process and in an owner process alike (`OWNER_PREAMBLE`):

- `upsert-error`: its text is raised as Chroma's InternalError by the embedded bindings'
  upsert (what its Rust side raised on a full disk), under skillbank's gate (`chroma_gate`);
- `free-bytes`: `shutil.disk_usage` says that many bytes are free (what statvfs said).
"""

from __future__ import annotations

import shutil
from collections import namedtuple
from pathlib import Path
from typing import Any, Callable

#: What the embedded Chroma raised on a full disk (hunt-disk #1 and #2, session 32).
SQLITE_FULL = ("Query error: Database error: error returned from database: (code: 13) "
               "database or disk is full")
COMPACTION = "Error in compaction: Failed to apply logs to the metadata segment"

_usage = namedtuple("usage", "total used free")


class _FailingBindings:
    def __init__(self, real: Any, where: Path) -> None:
        self._real, self._where = real, where

    def __getattr__(self, name: str) -> Any:
        value = getattr(self._real, name)
        flag = self._where / "upsert-error"
        if name != "upsert" or not callable(value):
            return value

        def upsert(*args: Any, **kwargs: Any) -> Any:
            if flag.exists():
                from chromadb.errors import InternalError

                raise InternalError(flag.read_text())
            return value(*args, **kwargs)

        return upsert


def patches(where: Path) -> list[tuple[Any, str, Callable[..., Any]]]:
    """(object, attribute, replacement) for `monkeypatch.setattr`, or to set in an owner."""
    from skillbank import chroma_gate

    where = Path(where)
    install, disk_usage = chroma_gate.install, shutil.disk_usage

    def failing_install(client: Any) -> Any:
        gate = install(client)
        bindings = getattr(getattr(client, "_server", None), "bindings", None)
        if isinstance(bindings, chroma_gate._GatedBindings) and \
                not isinstance(bindings._bindings, _FailingBindings):
            bindings._bindings = _FailingBindings(bindings._bindings, where)
        return gate

    def usage(path: Any) -> Any:
        free = where / "free-bytes"
        if free.exists():
            return _usage(1 << 30, (1 << 30) - int(free.read_text()), int(free.read_text()))
        return disk_usage(path)

    return [(chroma_gate, "install", failing_install), (shutil, "disk_usage", usage)]


def preamble(where: Path) -> str:
    """Python for `owner_process(preamble=...)`: the same patches in the owner."""
    return (f"import full_disk\nfor _o, _n, _v in full_disk.patches({str(where)!r}): "
            "setattr(_o, _n, _v)\n")
