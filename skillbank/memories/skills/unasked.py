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

import threading
from typing import Any

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
            for name in report.added:
                self._state[name] = "changed" if self._state.get(name) == "removed" else "added"
            for name in report.changed:
                self._state[name] = self._state.get(name) if self._state.get(name) == "added" \
                    else "changed"
            for name in report.removed:
                if self._state.get(name) == "added":
                    del self._state[name]  # came and went before anyone looked
                else:
                    self._state[name] = "removed"

    def take(self) -> dict[str, list[str]]:
        """What was kept, by kind (only kinds with names), and start afresh."""
        with self._lock:
            state, self._state = self._state, {}
        return {kind: names for kind in KINDS
                if (names := sorted(n for n, k in state.items() if k == kind))}


    def give_back(self, report: Any) -> None:
        """A sync someone asked for failed after it took what was kept (its embedding step
        lost the Chroma server): what it took, then its own changes, come before whatever was
        kept since, for the next sync someone asks for (review 2, session 30: both were lost)."""
        with self._lock:
            since, self._state = self._state, {}
        self.keep(SyncReport(**(report.already or {})))
        self.keep(report)
        self.keep(SyncReport(**{kind: [n for n, k in since.items() if k == kind]
                                for kind in KINDS}))


def record(library: Any, report: Any, asked: bool) -> Any:
    """A sync's `report` as its caller gets it: one asked for carries what came before it
    (`already`); one no one asked for is kept for the next that is."""
    if asked:
        report.already = library.unasked.take()
    else:
        library.unasked.keep(report)
    return report
