"""What a call's arguments become before they travel to the process that owns the root.

Relative paths are made absolute in the caller's working folder (the owner's is another one);
this process's own callbacks (progress bars, a stop event) stay here, since they cannot travel
and the owner does the work. `BankClient` applies both to every call it sends.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any


#: Parameters that name a file or folder, by method: resolved in the caller's working folder
#: before the call travels (the owner's working folder is another one). `None`: any method.
PATH_PARAMETERS: dict[tuple[str, str] | None, tuple[int | None, str]] = {
    ("experiences", "export"): (0, "path"),
    ("experiences", "import_"): (0, "path"),
}


def resolve_paths(target: str, name: str, args: tuple[Any, ...], kwargs: dict[str, Any]
                  ) -> tuple[tuple[Any, ...], dict[str, Any]]:
    """`args`/`kwargs` with relative paths made absolute here, in the caller's working folder:
    every `Path` value, and the known path parameters (`PATH_PARAMETERS`) given as text."""
    def absolute(value: Any) -> Any:
        if isinstance(value, (str, os.PathLike)) and not isinstance(value, bytes):
            text = os.fspath(value)
            if text and "\0" not in text:
                resolved = os.path.abspath(os.path.expanduser(text))
                return Path(resolved) if isinstance(value, os.PathLike) else resolved
        return value

    args = tuple(absolute(a) if isinstance(a, os.PathLike) else a for a in args)
    kwargs = {k: absolute(v) if isinstance(v, os.PathLike) else v for k, v in kwargs.items()}
    position, keyword = PATH_PARAMETERS.get((target, name), (None, ""))
    if keyword and keyword in kwargs:
        kwargs[keyword] = absolute(kwargs[keyword])
    elif position is not None and position < len(args):
        args = (*args[:position], absolute(args[position]), *args[position + 1:])
    return args, kwargs


#: Parameters that are this process's own callbacks, by method, with their position: progress
#: bars and a stop event cannot travel, and the owner does the work; the call goes without
#: them (a progress bar then shows no steps, a stop event does not stop the owner's fill).
LOCAL_CALLBACKS: dict[tuple[str, str], dict[str, int | None]] = {
    ("skills", "sync"): {"progress": 0, "sections_progress": None},
    ("skills", "fill_dense"): {"progress": 0, "stop": 1, "sections_progress": None,
                               "summaries_done": None},
}


def without_local_callbacks(target: str, name: str, args: tuple[Any, ...],
                            kwargs: dict[str, Any]) -> tuple[tuple[Any, ...], dict[str, Any]]:
    """`args`/`kwargs` without the callbacks `LOCAL_CALLBACKS` names (`skillbank skills sync`
    on a served root failed: "a SyncProgress cannot be sent to the process that owns ...")."""
    known = LOCAL_CALLBACKS.get((target, name))
    if not known:
        return args, kwargs
    kwargs = {k: v for k, v in kwargs.items() if k not in known}
    positions = {p for p in known.values() if p is not None}
    args = tuple(None if i in positions else a for i, a in enumerate(args))
    while args and args[-1] is None:
        args = args[:-1]
    return args, kwargs


#: Calls whose lessons or drafts the owner's distiller writes (`BankClient._owner_distils`).
OWNER_DISTILS = frozenset({("skills", "propose"), ("experiences", "distill")})
