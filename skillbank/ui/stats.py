"""The Stats page: counts, memory growth, help rate per kind and most-used skills as SVG.

Growth and the experience help rate need every experience record, which the facade gives only
by listing them all (10,000 records: seconds on a busy 2-core machine). So the result is cached
until memory changes, and on a large memory it is drawn in a background thread: the page shows
"drawing…" (and reloads itself) the first time, and the last pictures while it redraws.
"""

from __future__ import annotations

import threading
import time
from datetime import date, datetime, timezone
from typing import Any, Callable

from skillbank.ui.charts import PALETTE, Series, bar_chart, line_chart
from skillbank.ui.render import help_rate, percent

#: Up to this many experience records the pictures are drawn while the page waits.
SYNC_LIMIT = 3000


def stats_page(bank: Any, counts: dict[str, Any] | None = None) -> dict[str, Any]:
    """Counts, growth over time, help rate per kind and most-used skills, as SVG pictures."""
    counts = counts if counts is not None else bank.stats()
    skills = bank.skills.list()
    guidelines = bank.guidelines.list(namespace="*")
    n_exp = bank.experiences.count(namespace="*")
    records = bank.experiences.list(namespace="*", limit=n_exp)
    growth = line_chart([
        _running("experiences", [r.created for r in records if r.kind == "experience"]),
        _running("lessons", [r.created for r in records if r.kind == "lesson"]),
        _running("guidelines", [g.created for g in guidelines]),
    ], title="Memory growth over time")

    def rate_row(label: str, good: int, bad: int) -> tuple[str, float, str]:
        rate = help_rate(good, bad)
        shown = f"{percent(rate)} of {good + bad} judged" if rate is not None else "not judged yet"
        return label, (rate or 0.0) * 100, shown

    s_good = sum(s.usage.successes for s in skills)
    s_bad = sum(s.usage.failures for s in skills)
    e_good = sum(r.usage.successes for r in records)
    e_bad = sum(r.usage.failures for r in records)
    g_good = sum(g.helpful for g in guidelines)
    g_bad = sum(g.harmful for g in guidelines)
    rates = bar_chart([rate_row("skills", s_good, s_bad), rate_row("guidelines", g_good, g_bad),
                       rate_row("experiences and lessons", e_good, e_bad)],
                      max_value=100, title="Help rate per kind", colour=PALETTE[1])
    used = sorted((s for s in skills if s.usage.uses), key=lambda s: (-s.usage.uses, s.name))[:10]
    most = bar_chart([(s.name, s.usage.uses, f"{s.usage.uses} use{'s' * (s.usage.uses != 1)} "
                       f"· helped {percent(s.usage.success_rate)}") for s in used],
                     title="Most-used skills", colour=PALETTE[2])
    # The headline counts are `bank.stats()`'s, as `skillbank stats` prints them, with what the
    # pictures leave out named beside them: the page said "skills 8, experiences 3" where the
    # CLI said 9 and 5 (held skills, pending records), without a word (hunt-ui #7, session 37).
    held = len(bank.skills.list(include_held=True)) - len(skills)
    parts = {s: bank.experiences.count(namespace="*", status=s) for s in ("pending", "retired")}
    return {"counts": counts, "growth": growth, "rates": rates, "most": most,
            "n_skills": len(skills), "n_experiences": n_exp, "n_held_skills": held,
            "n_pending_experiences": parts["pending"], "n_retired_experiences": parts["retired"],
            "as_of": datetime.now(timezone.utc)}


def _running(name: str, stamps: list[datetime]) -> Series:
    per_day: dict[date, int] = {}
    for stamp in stamps:
        try:
            day = stamp.astimezone(timezone.utc).date()
        except (OverflowError, ValueError):  # year 1 east of UTC, year 9999 west of it
            day = stamp.date()  # (hunt-time #2, session 29: a 500 on the Stats page)
        per_day[day] = per_day.get(day, 0) + 1
    total, points = 0, []
    for day in sorted(per_day):
        total += per_day[day]
        points.append((day, total))
    return Series(name, points)


class StatsCache:
    """The last pictures, kept until memory changes or `ttl` seconds pass.

    "Changes" is judged cheaply, by the counts in `bank.stats()` (index sizes: a write adds or
    removes an entry). Votes and ratings by other processes, or an add and a forget between two
    visits, change no count; they show after at most `ttl` seconds
    (writes made through this page clear the cache at once). Above `sync_limit` records the
    pictures are drawn by a background thread holding `bank_lock` (the lock every page's facade
    calls take), so the facade is never called from two threads at once.
    """

    def __init__(self, bank_lock: Any, ttl: float = 30.0, sync_limit: int = SYNC_LIMIT) -> None:
        self.bank_lock = bank_lock
        self.ttl = ttl
        self.sync_limit = sync_limit
        self._guard = threading.Lock()
        self._entry: tuple[Any, float, dict[str, Any]] | None = None
        self._worker: threading.Thread | None = None
        self._done = threading.Event()
        self._done.set()  # nothing is being drawn
        self._error: str | None = None

    def get(self, bank: Any) -> dict[str, Any] | None:
        """Call with `bank_lock` held. The pictures, or None while a first drawing runs; a
        stale result comes back with `updating=True` while the new one is drawn."""
        with self._guard:
            error, self._error = self._error, None
        if error:
            from skillbank.errors import SkillbankError

            raise SkillbankError(f"drawing the stats failed: {error}")
        counts = bank.stats()
        key = repr(sorted(counts.items()))
        with self._guard:
            entry = self._entry
        if entry is not None and entry[0] == key and time.monotonic() - entry[1] < self.ttl:
            return {**entry[2], "updating": False}
        if int(counts.get("experiences") or 0) <= self.sync_limit:
            data = stats_page(bank, counts)
            self._store(key, data)
            return {**data, "updating": False}
        self._start(lambda: stats_page(bank, counts), key)
        return None if entry is None else {**entry[2], "updating": True}

    def _start(self, draw: Callable[[], dict[str, Any]], key: Any) -> None:
        with self._guard:
            if self._worker is not None and self._worker.is_alive():
                return
            self._done.clear()

            def run() -> None:
                try:
                    with self.bank_lock:
                        self._store(key, draw())
                except Exception as exc:  # shown by the next page load, then tried again
                    with self._guard:
                        self._error = " ".join(str(exc).split()) or type(exc).__name__
                finally:
                    self._done.set()

            self._worker = threading.Thread(target=run, name="skillbank-ui-stats", daemon=True)
            self._worker.start()

    def _store(self, key: Any, data: dict[str, Any]) -> None:
        with self._guard:
            self._entry = (key, time.monotonic(), data)

    def wait(self, timeout: float) -> bool:
        """Block until a background drawing finished (tests and benchmarks)."""
        return self._done.wait(timeout)

    def clear(self) -> None:
        with self._guard:
            self._entry = None
