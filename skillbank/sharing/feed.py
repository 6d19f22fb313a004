"""The owner's skill change events, for clients that watch the skill folders.

A client's `skills.watch()` must not tie up a thread of the owner for as long as it watches (a
fresh client once hung after 41 watchers). So the owner keeps the last few skill sync reports
that changed something, numbered, and a client asks for what came after the number it has seen
(a long poll answered by the owner's event loop, which holds no thread while it waits).
"""

from __future__ import annotations

import threading
from collections import deque
from typing import Any

#: How many change events the owner keeps for watchers that fell behind.
KEEP = 256


class ChangeEvents:
    """Numbered skill sync reports (thread-safe: the watcher thread publishes, the loop reads)."""

    def __init__(self, keep: int = KEEP) -> None:
        self.seq = 0
        self._events: deque[tuple[int, Any]] = deque(maxlen=keep)
        self._lock = threading.Lock()

    def publish(self, report: Any) -> None:
        with self._lock:
            self.seq += 1
            self._events.append((self.seq, report))

    def since(self, seq: int) -> tuple[int, list[Any], bool]:
        """(latest number, reports after `seq`, whether some were dropped before they were read).

        A negative `seq` (a watcher just starting) gets no reports, only the latest number."""
        with self._lock:
            latest = self.seq
            if seq < 0 or seq >= latest:
                return latest, [], False
            reports = [report for number, report in self._events if number > seq]
            oldest = self._events[0][0] if self._events else latest + 1
            return latest, reports, oldest > seq + 1


def follow_syncs(library: Any, events: ChangeEvents) -> None:
    """Publish every sync of `library` that changed something or whose findings changed (the
    owner's watcher, a client's `skills sync`, a save), by wrapping this one library object's
    `sync`.

    Why a wrapper and not a callback of the watcher: the owner's own face may have started the
    watcher before any client came, and every way the index follows the files goes through
    `sync`. Idempotent."""
    from skillbank.memories.skills.watching import FindingsSeen, worth_telling

    if getattr(library, "_skillbank_follows_syncs", None) is events:
        return
    original = library.sync
    findings = FindingsSeen()

    def sync(*args: Any, **kwargs: Any) -> Any:
        report = original(*args, **kwargs)
        if worth_telling(report, findings):
            events.publish(report)
        return report

    library.sync = sync
    library._skillbank_follows_syncs = events
