"""Keep a library's index current with its skill folders while a process runs.

`watchfiles` watches the folders as they are when it starts: a folder deleted and made again
(`rm -rf team-skills && git clone …`) or replaced (`mv new skills`) was watched no more, and
the running MCP server, CLI owner or `bank.watch()` never saw that folder's new or edited
skills again (crash hunt, session 18). Each folder is known by its (device, inode); on every
tick the folders are checked, and a folder that changed, appeared or went makes the watch
start again on what is there now (after a sync).
"""

from __future__ import annotations

import os
import threading
from pathlib import Path
from typing import Any, Callable

#: Milliseconds between the watcher's ticks (it yields on each, changes or not).
TICK_MS = 500


def _identities(roots: list[Path]) -> dict[str, tuple[int, int] | None]:
    found: dict[str, tuple[int, int] | None] = {}
    for root in roots:
        try:
            stat = os.stat(root)
            found[str(root)] = (stat.st_dev, stat.st_ino) if Path(root).is_dir() else None
        except OSError:
            found[str(root)] = None
    return found


def watch(library: Any, stop_event: threading.Event | None = None,
          on_sync: Callable[[Any], None] | None = None) -> None:
    """Block, re-syncing `library` whenever a file under one of its roots changes, and
    following a root that is replaced, until `stop_event` is set."""
    from watchfiles import watch as watch_files

    stop = stop_event or threading.Event()
    configured = [root for root, _ in library.roots]

    def synced() -> None:
        report = library.sync(embed=False)  # searchable by keyword at once
        library.fill_dense(stop=stop, wait=False)
        if on_sync and report.changed_anything:
            on_sync(report)

    first = True  # a change made before the watcher started (an owner's first client comes
    while not stop.is_set():  # after it opened) was never synced
        watched = _identities(configured)
        present = [os.path.normpath(root) for root, identity in watched.items()
                   if identity is not None]
        if not present:
            if stop.wait(TICK_MS / 1000):
                return
            if any(_identities(configured).values()):
                synced()
            continue
        roots = set(present)
        try:
            for changes in watch_files(*present, stop_event=stop, debounce=300, step=50,
                                       rust_timeout=TICK_MS, yield_on_timeout=True):
                # A root itself deleted or made again is a change of its own path (the new
                # folder often gets the old inode back, so the identities alone miss it).
                moved = _identities(configured) != watched or \
                    any(os.path.normpath(path) in roots for _, path in changes)
                if changes or first or moved:
                    first = False
                    synced()
                if moved:  # a folder replaced, made again or gone: watch what is there now
                    first = True  # and sync once more when watching it: nothing falls between
                    break
        except FileNotFoundError:  # a folder went between the look and the watch: look again
            first = True
            if stop.wait(TICK_MS / 1000):
                return
        # Stopped, a folder replaced, or the watch itself ended (its folder deleted under it):
        # the loop looks again at what is there now (after a moment: never a busy loop).
        if stop.wait(0.05):
            return
