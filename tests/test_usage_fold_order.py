"""Folding the usage log keeps every count whatever the order of once-per-principal uses
(review1 #7, session 30).

The fold moved a run of an outsider's uses (`"ou"`) to its latest use, but which of his uses
counts is decided at his first: his use, then his untrusted rating of the item, then his use
again replayed as untrusted uses 0 from the log and 1 from the folded one; 501 outsiders whose
first used the item again last were 501 uses, 502 folded (his place went to the 501st). Now
such a run's sum goes at its first use, and a line of no use keeps its last time. Checked on the
two cases and on seeded random logs of every kind of line, with the outsider places made few.
"""

from __future__ import annotations

import json
import random

import pytest

from skillbank import outside_votes
from skillbank.usage import _TABLES, UsageLog, _parsed
from skillbank.usage_fold import UsageFold

AT = "2026-01-01T00:00:00+00:00"


def _replayed(tmp_path, lines: list[bytes], name: str) -> dict:
    path = tmp_path / name
    path.write_bytes(b"".join(lines))
    log = UsageLog(path)
    found = {}
    for table in _TABLES:
        found[table] = {item: (value.model_dump() if hasattr(value, "model_dump") else
                               sorted(value) if isinstance(value, set) else dict(value))
                        for item, value in getattr(log, table).items()}
    return found


def _folded(lines: list[bytes]) -> list[bytes]:
    fold = UsageFold()
    for raw in lines:
        fold.add(raw, _parsed(raw))
    return fold.lines()


def _line(**event) -> bytes:
    return (json.dumps(event) + "\n").encode()


def _same_when_folded(tmp_path, lines: list[bytes]) -> None:
    counts = _replayed(tmp_path, lines, "log")
    folded = _folded(lines)
    assert _replayed(tmp_path, folded, "folded") == counts
    assert _replayed(tmp_path, _folded(folded), "again") == counts  # (a log folded twice)


def test_an_outsiders_use_after_his_untrusted_rating_counts_as_before(tmp_path):
    lines = [_line(id="x", use=1, at=AT, ou="P"), _line(id="x", use=1, at=AT, ok=True, u=1, p="P"),
             _line(id="x", use=1, at=AT, ou="P")]
    assert _replayed(tmp_path, _folded(lines), "f")["_untrusted"]["x"]["uses"] == 0  # 1 before
    _same_when_folded(tmp_path, lines)


def test_the_first_outsiders_place_stays_his(tmp_path):
    lines = [_line(id="x", use=1, at=AT, ou="A")]
    lines += [_line(id="x", use=1, at=AT, ou=f"B{i}") for i in range(500)]
    lines.append(_line(id="x", use=1, at=AT, ou="A"))
    assert _replayed(tmp_path, _folded(lines), "f")["_counts"]["x"]["uses"] == 501  # 502 before
    _same_when_folded(tmp_path, lines)


def _random_log(rng: random.Random, size: int) -> list[bytes]:
    items, people = ["x", "y"], ["A", "B", "C"]
    times = [f"2026-01-0{day}T00:00:00+00:00" for day in range(1, 10)] + ["not a time", None]
    lines = []
    for _ in range(size):
        item, who, use = rng.choice(items), rng.choice(people), rng.choice([0, 1, 1, 2])
        event: dict = {"id": item, "use": use}
        at = rng.choice(times)
        if at is not None:
            event["at"] = at
        kind = rng.randrange(12)
        if kind == 0:
            event["ou"] = who
        elif kind == 1:
            event.update(u=1, p=who)
        elif kind == 2:
            event["u"] = 1
        elif kind == 3:
            event.update(ok=rng.random() < 0.5, u=1, p=who)
        elif kind == 4:
            event.update(ok=rng.random() < 0.5, u=1)
        elif kind == 5:
            event.update(ok=rng.random() < 0.5, o=who, **({"ou": who} if use else {}))
        elif kind == 6:
            event = {"id": item, "accept": rng.choice([1, 2]), "at": AT}
        elif kind == 7 and rng.random() < 0.3:
            event = {"id": item, "to": rng.choice(items), "at": AT}
        elif kind == 8 and rng.random() < 0.2:
            event = {"id": item, "reset": 1, "at": AT}
        elif kind == 9:
            event.update(ok=rng.random() < 0.5)
        lines.append(_line(**event))
    return lines


@pytest.mark.parametrize("seed", range(40))
def test_a_folded_log_replays_to_every_count_of_the_log(tmp_path, monkeypatch, seed):
    monkeypatch.setattr(outside_votes, "MAX_OUTSIDE_VOTERS", 2)  # places run out often
    _same_when_folded(tmp_path, _random_log(random.Random(seed), 120))


def test_an_untrusted_principals_uses_fold_too(tmp_path):
    """An untrusted client's recalls name it (review1 #1): a thousand are still two lines, the
    count at the first and the time of the last."""
    lines = [_line(id="x", use=1, at=f"2026-01-0{1 + i // 200}T00:00:00+00:00", u=1, p="bot")
             for i in range(1000)]
    assert len(_folded(lines)) == 2
    _same_when_folded(tmp_path, lines)
