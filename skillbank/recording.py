"""Failed recordings are never silent: each bank counts the agent runs it could not record.

An agent face records a run in the background, where a failure cannot raise into the agent's
turn; logging each one is how runs used to be dropped unnoticed. Every bank (in-process or a
client of another process) holds one `RecordingFailures`: the faces add to it, the first
failure is warned about, `stats()["recording_failures"]` counts them and `flush()` returns
False (with an error log naming the last failure) while failures are unreported.
"""

from __future__ import annotations

import logging
import threading
from typing import Any

log = logging.getLogger("skillbank")

__all__ = ["RecordingFailures", "failures_of"]


class RecordingFailures:
    """Counts a face's failed recordings, warns once, and lets `flush()` report them.

    A run recorded in the background that fails cannot raise into the agent's turn; logging
    each one is how runs were dropped unnoticed. Each bank keeps one of these (made on first
    failure): `stats()["recording_failures"]` counts them, the first failure is warned about
    (later ones at debug level), and `bank.flush()` returns False while failures are unread.
    """

    def __init__(self) -> None:
        self.count = 0
        self.unreported = 0
        self.last: str | None = None
        self._lock = threading.Lock()

    def add(self, what: str, exc: BaseException) -> None:
        with self._lock:
            self.count += 1
            self.unreported += 1
            first = self.count == 1
            self.last = f"{what}: {type(exc).__name__}: {exc}"
        if first:
            log.warning("skillbank %s failed (%s); later failures are counted in "
                        "bank.stats()['recording_failures'] and reported by bank.flush()",
                        what, exc)
        else:
            log.debug("skillbank %s failed again: %s", what, exc)

    def take(self) -> int:
        """How many failures happened since the last call (and forget them)."""
        with self._lock:
            unreported, self.unreported = self.unreported, 0
        return unreported

    def report(self) -> bool:
        """For `flush()`: True if no failure happened since the last report, else log it."""
        missed = self.take()
        if missed:
            log.error("skillbank: %d agent run(s) could not be recorded since the last flush "
                      "(last: %s); see bank.stats()['recording_failures']", missed, self.last)
        return not missed


_GUARD = threading.Lock()


def failures_of(bank: Any) -> RecordingFailures:
    """The bank's failure counter, made on first use (any object a face treats as a bank)."""
    failures = getattr(bank, "recording_failures", None)
    if isinstance(failures, RecordingFailures):
        return failures
    with _GUARD:
        failures = getattr(bank, "recording_failures", None)
        if not isinstance(failures, RecordingFailures):
            failures = RecordingFailures()
            try:
                bank.recording_failures = failures
            except AttributeError:
                pass  # an object without attributes: counted here only
        return failures
