"""What syncs no one asked for put in the skill index, told by the next sync someone asks for.

Why (hunt-corpus #4, session 30): at a terminal the CLI attaches to a background owner of the
root, whose watcher syncs the skill folders as they change (`skillbank.cli.owner`). A curator
who added a skill folder and typed `skillbank skills sync` was told "0 added, 0 changed, 0
removed": the watcher had applied the change a moment before, and its report went to no one.
The same held for the owner's opening sync (the first command after the owner ended, idle)
and for a read's re-check in a long-running process (`freshness`).

So the library keeps the net change of those syncs — the watcher's, a re-check's, the opening
one's (`sync(asked=False)`) — and the next sync a caller asks for hands it over in its report's
`already` ("added", "changed", "removed"), then starts afresh. Net: a skill added then removed
before anyone asked is not mentioned; one removed then added again counts as changed.
"""

from __future__ import annotations

import contextlib
import threading
from typing import Any, Iterator

from skillbank.records import SyncReport

KINDS = ("added", "changed", "removed")


class Unasked:
    """The net change of the syncs no one asked for, since a sync someone asked for."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._state: dict[str, str] = {}  # name -> "added" | "changed" | "removed"

    def keep(self, report: Any) -> None:
        """Fold in the changes of a sync no one asked for."""
        with self._lock:
            _fold(self._state, report)

    def take(self) -> dict[str, list[str]]:
        """What was kept, by kind (only kinds with names), and start afresh."""
        with self._lock:
            state, self._state = self._state, {}
        return {kind: names for kind in KINDS
                if (names := sorted(n for n, k in state.items() if k == kind))}

    def give_back(self, report: Any, present: set[str] | None = None) -> None:
        """A sync someone asked for failed after it took what was kept (its embedding step
        lost the Chroma server): what it took, then its own changes, come before whatever was
        kept since, for the next sync someone asks for (review 2, session 30: both were lost).
        One hold of the lock, so no sync's changes fold in between.

        `present`: the skills indexed now. Another asked sync may have run between the take
        and the failure and told its own caller of later changes; what is given back is then
        only what still holds: an "added" or "changed" skill that is gone, or a "removed" one
        that is back, is dropped (the next report said "added" for a skill a report between
        had told removed; review 1, session 31)."""
        with self._lock:
            state: dict[str, str] = {}
            _fold(state, SyncReport(**(report.already or {})))
            _fold(state, report)
            if present is not None:
                state = {name: kind for name, kind in state.items()
                         if (kind == "removed") != (name in present)}
            _fold(state, SyncReport(**{kind: [n for n, k in self._state.items() if k == kind]
                                       for kind in KINDS}))
            self._state = state


def _fold(state: dict[str, str], report: Any) -> None:
    """Fold a sync's changes into `state` (name -> kind), netting out what came and went."""
    for name in report.added:
        state[name] = "changed" if state.get(name) == "removed" else "added"
    for name in report.changed:
        state[name] = state[name] if state.get(name) == "added" else "changed"
    for name in report.removed:
        if state.get(name) == "added":
            del state[name]  # came and went before anyone looked
        else:
            state[name] = "removed"


def record(library: Any, report: Any, asked: bool) -> Any:
    """A sync's `report` as its caller gets it: one asked for carries what came before it
    (`already`); one no one asked for is kept for the next that is."""
    if asked:
        report.already = library.unasked.take()
    else:
        library.unasked.keep(report)
    return report


@contextlib.contextmanager
def given_back_if_failed(library: Any, report: Any, asked: bool) -> Iterator[None]:
    """Around what an asked-for sync does after it took what was kept (its embedding): if it
    fails, its caller never sees the report, so what it took and its own changes are given
    back for the next sync someone asks for (under the sync lock: in order with the others)."""
    try:
        yield
    except BaseException:
        if asked:
            with library._sync_lock:
                try:  # the local copy of the index's ids (index_mirror), as staged
                    present: set[str] | None = set(library.index.ids())
                except Exception:  # noqa: BLE001 - unknown: given back as it was
                    present = None
                library.unasked.give_back(report, present)
        raise
