"""A usage log written before untrusted votes were kept per principal replays as it counted then
(review1 #3, session 30).

An `accept` journaled by the release before had added every untrusted vote: twelve "helpful"
were twelve successes, as team mode's rows still say. Read again under the new rule (each
principal once, votes naming nobody one principal) they became one success at the next open,
and an outsider's six vote lines that each carried a use became one use instead of six: the
same history then gave other counts in files than in team mode. Now an acceptance is journaled
as per principal (`"accept": 2`) and an outsider's vote whose use counts once says so
(`"ou"`); lines without those marks replay by the rule they were written under. In process and
through a client of an owner process.
"""

from __future__ import annotations

import json

import pytest

from owner_client import bank_for
from skillbank.usage import UsageLog

AT = "2026-01-01T00:00:00+00:00"


def _old_lines(eid: str, other: str) -> str:
    """What the release before wrote: twelve untrusted "helpful" (no principal) and their
    acceptance; an outsider's six "not helpful", each carrying a use."""
    lines = [{"id": eid, "use": 1, "at": AT, "ok": True, "u": 1} for _ in range(12)]
    lines.append({"id": eid, "accept": 1, "at": AT})
    lines += [{"id": other, "use": 1, "at": AT, "ok": False, "o": "bob"} for _ in range(6)]
    return "".join(json.dumps(line) + "\n" for line in lines)


@pytest.mark.parametrize("remote", [False, True], ids=["in-process", "client-of-owner"])
def test_lines_of_the_release_before_replay_as_they_counted(tmp_path, remote):
    with bank_for(tmp_path, False) as bank:
        eid = bank.experiences.record(task="Renew the staging certificate", outcome="success")
        other = bank.experiences.record(task="Rotate the backup keys", outcome="success")
        bank.flush()
    log = tmp_path / "root" / "usage" / "experiences.jsonl"
    log.parent.mkdir(exist_ok=True)
    with log.open("a") as handle:
        handle.write(_old_lines(eid, other))
    with bank_for(tmp_path, remote) as bank:
        usage = bank.experiences.get(eid).usage
        assert (usage.uses, usage.successes) == (12, 12)  # (12, 1) before
        usage = bank.experiences.get(other).usage
        assert (usage.uses, usage.failures) == (6, 1)  # (1, 1) before


def test_what_this_release_writes_replays_by_its_own_rule(tmp_path):
    """After the old lines: two principals' votes accepted now are two votes, and an outsider's
    new vote lines carry his use once, on reopening as when they were counted."""
    log_path = tmp_path / "usage.jsonl"
    log_path.write_text(_old_lines("e", "o"))
    log = UsageLog(log_path)
    for principal in ("ann", "cy", "ann"):
        log.record("e", use=0, ok=False, trusted=False, principal=principal)
    log.record("e", use=0, ok=False, trusted=False)  # (no principal: the unnamed one)
    accepted = log.accept("e")
    for _ in range(3):
        log.vote("o", "bob", False, use=1)
    log.vote("o", "dan", True, use=1)
    log.flush()
    assert (accepted.successes, accepted.failures) == (12, 3)  # (12, 3): ann, cy, unnamed
    assert log.get("o").uses == 8  # six of the release before, bob's new once, dan's once
    reread = UsageLog(log_path)
    for item in ("e", "o"):
        assert reread.get(item) == log.get(item)
    lines = [json.loads(line) for line in log_path.read_text().splitlines()]
    assert [line["accept"] for line in lines if "accept" in line] == [1, 2]
