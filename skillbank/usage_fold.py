"""A usage log folded: each item's plain use counts summed into one line, every other event kept.

A memory counts a use of every item it shows (each recall, each block of an agent's turn), one
~79-byte line each in `<root>/usage/<memory>.jsonl`, which nothing ever rewrote and every open
read whole: ~600k recall hits of a long-lived agent made a 47 MB log and an 8-10 s open
(hunt-exp #4, session 27). `UsageLog` rewrites it through `fold` once it passes a size.

Replaying the folded lines gives exactly the counts of replaying the original ones. A run of an
item's plain uses (`{"id", "use", "at"}`, `"u": 1` when untrusted: no vote, no imported counts)
becomes one line of the same shape, at the place of the run's last use and with its time, so
`last_used` comes out the same. A run ends at an event that moves or drops the item's counts
(`accept`, a move `to` another id, in either direction, a `reset`): uses on either side of it
are not added up. Ratings, outsiders' votes and imported counts are kept line for line: the
skills' outcome flags read each dated rating (`skill_trust_api._counted_ratings`). Lines that
are not events (a torn last line, a foreign one) are dropped; replaying skipped them already.
The folded lines are the log's own format, so an older skillbank reads them as before.
"""

from __future__ import annotations

import json
from datetime import datetime
from typing import Any

#: The keys of a plain use event (`UsageLog.record` without `ok`): the only lines folded. An
#: outsider's uses (`"ou": <principal>`, counted once per item) fold into one line per outsider.
PLAIN = frozenset({"id", "use", "at", "u", "ou"})


class UsageFold:
    """Feed a usage log's lines in order (`add`); `lines()` is the folded log."""

    def __init__(self) -> None:
        self._out: list[bytes | None] = []  # lines kept, None where a run's line goes, b"" gone
        #: (item, untrusted, or the outsider's name) -> [uses, time of its last use, position]
        #: of its open run
        self._runs: dict[tuple[str, bool | str], list[Any]] = {}
        self._folded: dict[int, tuple[str, bool | str]] = {}  # position -> its run
        self._done: dict[int, list[Any]] = {}  # runs an event closed, by position
        self.read = 0  # bytes fed

    def add(self, raw: bytes, event: Any) -> None:
        """One line of the log and its parsed JSON (None: the line is not JSON)."""
        self.read += len(raw)
        if not isinstance(event, dict) or "id" not in event:
            return
        key = _plain(event)
        if key is None:
            for item in (event.get("id"), event.get("to")):
                if isinstance(item, str) and ("accept" in event or "to" in event
                                              or event.get("reset")):
                    self._close(item)
            self._out.append(raw if raw.endswith(b"\n") else raw + b"\n")
            return
        run = self._runs.get(key)
        if run is None:
            run = self._runs[key] = [0, None, -1]
        else:
            self._out[run[2]] = b""  # the run's line moves to its latest use
            del self._folded[run[2]]
        run[0] += int(event.get("use", 0))
        if _when(event.get("at")):
            run[1] = event["at"]
        run[2] = len(self._out)
        self._out.append(None)
        self._folded[run[2]] = key

    def _close(self, item: str) -> None:
        for key in [key for key in self._runs if key[0] == item]:
            run = self._runs.pop(key)
            self._done[run[2]] = [*run, key[1], item]

    def lines(self) -> list[bytes]:
        out = []
        for position, raw in enumerate(self._out):
            if raw is not None:
                if raw:
                    out.append(raw)
                continue
            if position in self._done:
                uses, at, _, untrusted, item = self._done[position]
            else:
                item, untrusted = self._folded[position]
                uses, at = self._runs[(item, untrusted)][:2]
            event: dict[str, Any] = {"id": item, "use": uses}
            if at is not None:
                event["at"] = at
            if isinstance(untrusted, str):
                event["ou"] = untrusted
            elif untrusted:
                event["u"] = 1
            out.append(json.dumps(event).encode("utf-8") + b"\n")
        return out


def _plain(event: dict[str, Any]) -> tuple[str, bool | str] | None:
    """(item, untrusted or the outsider's name) of a plain use event that replays as one (else
    None)."""
    if not PLAIN.issuperset(event) or not isinstance(event["id"], str):
        return None
    try:
        int(event.get("use", 0))
    except (TypeError, ValueError):
        return None
    if "ou" in event:
        if "u" in event or not isinstance(event["ou"], str):
            return None
        return event["id"], event["ou"]
    return event["id"], bool(event.get("u"))


def _when(value: Any) -> bool:
    """Whether a replay sets `last_used` from this time (`usage_votes._touch`)."""
    if not isinstance(value, str) or not value:
        return False
    try:
        datetime.fromisoformat(value)
    except ValueError:
        return False
    return True
