"""Usage counters kept as an append-only event log per memory.

Counting a use must be cheap (it happens on every retrieval) and must never rewrite a user's
files, so events are appended to `<root>/<memory>/usage.jsonl` and summed when the bank opens.
A torn last line from a crash is skipped.
"""

from __future__ import annotations

import json
import threading
from datetime import datetime
from pathlib import Path

from skillbank.fsutil import append_line
from skillbank.records import Usage, utcnow


class UsageLog:
    """Per-item uses / successes / failures, durable and cheap to update."""

    def __init__(self, path: Path) -> None:
        self.path = path
        self._lock = threading.Lock()
        self._counts: dict[str, Usage] = {}
        self._load()

    def _load(self) -> None:
        if not self.path.is_file():
            return
        with self.path.open("rb") as handle:
            for raw in handle:
                try:
                    event = json.loads(raw)
                    self._apply(event["id"], event.get("use", 0), event.get("ok"), event.get("at"))
                except (ValueError, KeyError, TypeError):
                    continue  # a torn or foreign line: skip, never fail the open

    def _apply(self, item_id: str, uses: int, ok: bool | None, at: str | None) -> None:
        usage = self._counts.setdefault(item_id, Usage())
        usage.uses += int(uses)
        if ok is True:
            usage.successes += 1
        elif ok is False:
            usage.failures += 1
        if at:
            try:
                usage.last_used = datetime.fromisoformat(at)
            except ValueError:
                pass

    def record(self, item_id: str, *, use: int = 1, ok: bool | None = None) -> Usage:
        """Count `use` uses of an item, and optionally whether it helped (`ok`)."""
        at = utcnow().isoformat()
        event = {"id": item_id, "use": use, "at": at}
        if ok is not None:
            event["ok"] = ok
        with self._lock:
            append_line(self.path, json.dumps(event))
            self._apply(item_id, use, ok, at)
            return self._counts[item_id].model_copy()

    def get(self, item_id: str) -> Usage:
        usage = self._counts.get(item_id)
        return usage.model_copy() if usage else Usage()

    def all(self) -> dict[str, Usage]:
        return {k: v.model_copy() for k, v in self._counts.items()}

    def prior(self, item_id: str, scale: float = 0.004) -> float:
        """A small rank bonus or penalty from the success rate, weighted by how much we know.

        Sized against reciprocal-rank scores (~1/61 for a first place), so it reorders near
        ties but never lets a poorly matching item jump over a clearly better one.
        """
        usage = self._counts.get(item_id)
        if not usage:
            return 0.0
        judged = usage.successes + usage.failures
        if judged == 0:
            return 0.0
        confidence = judged / (judged + 3)
        return scale * (usage.successes / judged - 0.5) * 2 * confidence
