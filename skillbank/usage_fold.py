"""A usage log folded: each item's plain use counts summed into one line, every other event kept.

A memory counts a use of every item it shows (each recall, each block of an agent's turn), one
~79-byte line each in `<root>/usage/<memory>.jsonl`, which nothing ever rewrote and every open
read whole: ~600k recall hits of a long-lived agent made a 47 MB log and an 8-10 s open
(hunt-exp #4, session 27). `UsageLog` rewrites it through `fold` once it passes a size.

Replaying the folded lines gives exactly the counts of replaying the original ones. A run of an
item's plain uses (`{"id", "use", "at"}`, `"u": 1` when untrusted: no vote, no imported counts)
becomes one line of the same shape, at the place of the run's last dated use and with its time,
so `last_used` comes out the same. A run ends at an event that moves or drops the item's counts
(`accept`, a move `to` another id, in either direction, a `reset`): uses on either side of it
are not added up. Ratings, outsiders' votes and imported counts are kept line for line: the
skills' outcome flags read each dated rating (`skill_trust_api._counted_ratings`). Lines that
are not events (a torn last line, a foreign one) are dropped; replaying skipped them already.
The folded lines are the log's own format, so an older skillbank reads them as before.

The uses of one principal that count once per item (an outsider's, `"ou"`; an untrusted
principal's, `"u"` with `"p"`) are a run of their own, and which of them counts depends on
the order of first uses (who else's use or rating came first, the `MAX_OUTSIDE_VOTERS` places),
so their sum goes at the run's first use, where the count is decided, and a line of no use
keeps the time of its last dated one where that was. A run's line at its latest use counted an
outsider's second use after his untrusted rating, and gave the 501st outsider's place to the
first (review1 #7, session 30). An outsider's vote or use ends the run of that principal's
untrusted uses of the item (it can make his later ones count nothing).
"""

from __future__ import annotations

import json
from datetime import datetime
from typing import Any

#: The keys of a plain use event (`UsageLog.record` without `ok`): the only lines folded.
PLAIN = frozenset({"id", "use", "at", "u", "ou", "p"})


class _Run:
    """An item's plain uses of one kind since the last event that ends them: their sum, the
    first line's position, the first use's (`count`, once-per-principal kinds) and the last
    dated line's (`touch`), with their times."""

    __slots__ = ("item", "kind", "uses", "first", "count", "count_at", "touch", "touch_at")

    def __init__(self, item: str, kind: bool | tuple[str, str], position: int) -> None:
        self.item, self.kind, self.uses, self.first = item, kind, 0, position
        self.count: int | None = None
        self.touch: int | None = None
        self.count_at: str | None = None
        self.touch_at: str | None = None

    def add(self, uses: int, at: Any, position: int) -> None:
        self.uses += uses
        dated = _when(at)
        if isinstance(self.kind, tuple) and self.count is None and uses > 0:
            self.count, self.count_at = position, at if dated else None
        if dated:
            self.touch, self.touch_at = position, at

    def placed(self) -> dict[int, bytes]:
        """Its folded lines by position."""
        if self.count is None:  # summed (or no use to count): one line, at the last dated
            return {self.first if self.touch is None else self.touch:
                    self._line(self.uses, self.touch_at)}
        placed = {self.count: self._line(self.uses, self.count_at)}
        if self.touch is not None and self.touch != self.count:
            placed[self.touch] = self._line(0, self.touch_at)  # (its time, no use)
        return placed

    def _line(self, uses: int, at: str | None) -> bytes:
        event: dict[str, Any] = {"id": self.item, "use": uses}
        if at is not None:
            event["at"] = at
        if isinstance(self.kind, tuple):
            if self.kind[0] == "ou":
                event["ou"] = self.kind[1]
            else:
                event["u"], event["p"] = 1, self.kind[1]
        elif self.kind:
            event["u"] = 1
        return json.dumps(event).encode("utf-8") + b"\n"


class UsageFold:
    """Feed a usage log's lines in order (`add`); `lines()` is the folded log."""

    def __init__(self) -> None:
        self._out: list[bytes | None] = []  # lines kept; None where a run's use was
        #: (item, untrusted, or ("ou"/"p", principal)) -> its open run
        self._runs: dict[tuple[str, bool | tuple[str, str]], _Run] = {}
        self._all: list[_Run] = []  # every run, open or ended
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
                    for ended in [k for k in self._runs if k[0] == item]:
                        del self._runs[ended]
            if isinstance(event.get("o"), str) and isinstance(event["id"], str):
                self._runs.pop((event["id"], ("p", event["o"])), None)
            self._out.append(raw if raw.endswith(b"\n") else raw + b"\n")
            return
        item, kind = key
        if isinstance(kind, tuple) and kind[0] == "ou":
            self._runs.pop((item, ("p", kind[1])), None)
        position = len(self._out)
        self._out.append(None)
        run = self._runs.get(key)
        if run is None:
            run = self._runs[key] = _Run(item, kind, position)
            self._all.append(run)
        run.add(int(event.get("use", 0)), event.get("at"), position)

    def lines(self) -> list[bytes]:
        placed: dict[int, bytes] = {}
        for run in self._all:
            placed.update(run.placed())
        return [raw if raw is not None else placed[position]
                for position, raw in enumerate(self._out)
                if raw is not None or position in placed]


def _plain(event: dict[str, Any]) -> tuple[str, bool | tuple[str, str]] | None:
    """(item, its kind: untrusted, or ("ou"/"p", the principal whose uses count once)) of a
    plain use event that replays as one (else None)."""
    if not PLAIN.issuperset(event) or not isinstance(event["id"], str):
        return None
    try:
        uses = int(event.get("use", 0))
    except (TypeError, ValueError):
        return None
    if "ou" in event:
        if "u" in event or "p" in event or not isinstance(event["ou"], str) or uses < 0:
            return None
        return event["id"], ("ou", event["ou"])
    if "p" in event:  # an untrusted principal's (a trusted line never names one)
        if not event.get("u") or not isinstance(event["p"], str) or not event["p"] or uses < 0:
            return None
        return event["id"], ("p", event["p"])
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
