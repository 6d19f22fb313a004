"""Keep a library's index current with its skill folders while a process runs.

`watchfiles` watches the folders as they are when it starts: a folder deleted and made again
(`rm -rf team-skills && git clone …`) or replaced (`mv new skills`) was watched no more, and
the running MCP server, CLI owner or `bank.watch()` never saw that folder's new or edited
skills again (crash hunt, session 18). Each folder is known by its (device, inode); on every
tick the folders are checked, and a folder that changed, appeared or went makes the watch
start again on what is there now (after a sync).

The vectors of what a sync staged are embedded on a thread of their own (`Filler`), never on
the watcher's: the watcher embedded them itself before it looked at the files again, so a git
operation made meanwhile (`git checkout main` right after a branch change touched 300 skills)
was listed 8-21 s later instead of ~2 s, and list and search kept serving the left branch's
names (hunt-git #5, session 23). A fill for a skill changed or removed since it was staged
writes nothing for it (`index_fill.fill` keeps only what is still pending as it was).
"""

from __future__ import annotations

import logging
import os
import threading
from pathlib import Path
from typing import Any, Callable

log = logging.getLogger("skillbank.skills")
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


class Filler:
    """Embeds what the watcher's syncs staged, on one thread of its own, while the watcher
    goes on syncing names, metadata and keywords (hunt-git #5, session 23).

    Each sync asks (`ask`): the thread fills again until no sync has asked since its last
    fill began, so an item staged while a fill was ending is not left waiting for the
    next change. Neither `_sync_lock` nor `write_lock` is held while it embeds; the index's
    own lock only around each batch's bookkeeping (`index_fill.fill`)."""

    def __init__(self, library: Any, stop: threading.Event) -> None:
        self._library, self._stop = library, stop
        self._wanted = False
        self._guard = threading.Lock()
        self._thread: threading.Thread | None = None

    def ask(self) -> None:
        with self._guard:
            self._wanted = True
            if self._thread is None:
                self._thread = threading.Thread(target=self._run, daemon=True,
                                                name="skillbank-watch-embed")
                self._thread.start()

    def _run(self) -> None:
        while not self._stop.is_set():
            with self._guard:
                if not self._wanted:
                    self._thread = None
                    return
                self._wanted = False
            try:  # another thread filling already takes what was staged (wait=False)
                self._library.fill_dense(stop=self._stop, wait=False)
            except Exception as exc:  # noqa: BLE001 - keyword search keeps answering, the
                # watch goes on and the next change asks again
                log.warning("skillbank: embedding changed skills failed: %s", exc)
        with self._guard:
            self._thread = None

    def join(self, timeout: float | None = None) -> bool:
        """Wait for a fill under way to stop (between batches, once `stop` is set): a bank is
        closed after its watch ends (`stop_watching`), never under a batch being written.
        False if it still ran after `timeout` seconds."""
        with self._guard:
            thread = self._thread
        if thread is not None:
            thread.join(timeout)
            return not thread.is_alive()
        return True


def watch(library: Any, stop_event: threading.Event | None = None,
          on_sync: Callable[[Any], None] | None = None) -> None:
    """Block, re-syncing `library` whenever a file under one of its roots changes, and
    following a root that is replaced, until `stop_event` is set."""
    stop = stop_event or threading.Event()
    ended = threading.Event()  # the fill stops between batches once the watch has ended
    filler = Filler(library, ended)
    try:
        _watch(library, stop, filler, on_sync)
    finally:
        ended.set()
        filler.join()


class FindingsSeen:
    """The findings of the last sync a watcher saw, to tell when they change."""

    def __init__(self) -> None:
        self._last: set[tuple[str | None, str, str]] | None = None

    def changed(self, report: Any) -> bool:
        """Whether `report`'s findings differ from the last report's (never for the first)."""
        now = {(f.path, f.code, f.message) for f in getattr(report, "findings", [])}
        changed = self._last is not None and now != self._last
        self._last = now
        return changed


def worth_telling(report: Any, findings: FindingsSeen) -> bool:
    """Whether a watcher tells this sync: a skill added, changed or removed, or the findings
    changed. An edit that breaks a SKILL.md (or mends it) changes no skill that is served (its
    last good version stays), yet the author watching needs to see it: `skills watch` printed
    nothing, in process or as a client (hunt-author #3, session 24)."""
    changed = findings.changed(report)  # always: it keeps the last findings current
    return bool(getattr(report, "changed_anything", False)) or changed


def _watch(library: Any, stop: threading.Event, filler: Filler,
           on_sync: Callable[[Any], None] | None) -> None:
    from watchfiles import watch as watch_files

    configured = [root for root, _ in library.roots]

    findings = FindingsSeen()

    def synced() -> None:
        report = library.sync(embed=False, asked=False)  # searchable by keyword at once;
        # its changes are told by the next sync someone asks for (unasked.py)
        filler.ask()  # vectors behind, on the filler's thread (hunt-git #5)
        if on_sync and worth_telling(report, findings):
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
