"""A root whose `skills/` folder alone is a read-only mount, without root or a mount
(hunt-disk #3, session 32).

While the file `skills-read-only` is in a test's folder `where`, what the kernel does to a
read-only bind mount of `<where>/root/skills` is done here: a folder made in it, a rename
within it, and a tree removed from it fail with EROFS, and a rename out of it fails with EXDEV
(another mount), so a move falls back to a copy. In this process (`monkeypatch.setattr`) and
in an owner process (`preamble`) alike.
"""

from __future__ import annotations

import errno
import os
import shutil
from pathlib import Path
from typing import Any, Callable


def patches(where: Path) -> list[tuple[Any, str, Callable[..., Any]]]:
    """(object, attribute, replacement) for `monkeypatch.setattr`, or to set in an owner."""
    where = Path(where)
    skills = os.path.realpath(where / "root" / "skills")
    rename, mkdir, rmtree = os.rename, os.mkdir, shutil.rmtree

    def inside(path: Any) -> bool:
        if not (where / "skills-read-only").exists() or isinstance(path, int):
            return False
        full = os.path.realpath(os.fspath(path))
        return full == skills or full.startswith(skills + os.sep)

    def refuse(path: Any) -> OSError:
        return OSError(errno.EROFS, os.strerror(errno.EROFS), os.fspath(path))

    def ro_rename(src: Any, dst: Any, *args: Any, **kwargs: Any) -> Any:
        if inside(src) and inside(dst):
            raise refuse(src)
        if inside(src) or inside(dst):
            raise OSError(errno.EXDEV, os.strerror(errno.EXDEV), os.fspath(src))
        return rename(src, dst, *args, **kwargs)

    def ro_mkdir(path: Any, *args: Any, **kwargs: Any) -> Any:
        if inside(path):
            raise refuse(path)
        return mkdir(path, *args, **kwargs)

    def ro_rmtree(path: Any, *args: Any, **kwargs: Any) -> Any:
        if inside(path):
            if kwargs.get("ignore_errors") or (args and args[0]):
                return None
            raise refuse(os.path.join(os.fspath(path), "SKILL.md"))
        return rmtree(path, *args, **kwargs)

    return [(os, "rename", ro_rename), (os, "mkdir", ro_mkdir), (shutil, "rmtree", ro_rmtree)]


def preamble(where: Path) -> str:
    """Python for `owner_process(preamble=...)`: the same patches in the owner."""
    return (f"import read_only_skills\nfor _o, _n, _v in read_only_skills.patches({str(where)!r}):"
            " setattr(_o, _n, _v)\n")
