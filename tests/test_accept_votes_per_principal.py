"""Accepted untrusted votes count once per principal, as a trusted outsider's do
(hunt-trust #2, session 30).

An untrusted client (bob) rated a team skill "not helpful" twelve times, each answered
`counted: false`; a trusted outsider (carol) did the same and counted once. A reviewer's
`accept_votes` then added all twelve of bob's: `failures` went 1 -> 13 on the skill (1 -> 11 on
a team experience), and `usage.untrusted(id)` could not show that they all came from one
token. Now each untrusted vote names its principal, `untrusted(id).outside` shows each one's
net, and acceptance folds each principal's net in as his outside vote (one vote, its sign; a
second acceptance of more votes of his moves the same vote). Votes kept before principals were
(log lines without one) are one unnamed principal. In process, through a client of an owner
process, and in team mode (PostgreSQL).
"""

from __future__ import annotations

import json

import pytest

from conftest import write_skill
from owner_client import bank_for
from skillbank.outside_votes import UNNAMED
from skillbank.scope import Scope
from test_team_guidelines import workers  # noqa: F401 - a fixture

BOB = Scope(principal="bob", namespace="bob", reads=("team",), role="contributor",
            trusted=False)
CAROL = Scope(principal="carol", namespace="carol", reads=("team",), role="contributor")
TINA = Scope(principal="tina", namespace="team", role="contributor")
REVIEWER = Scope(principal="rita", namespace="team", role="reviewer")


def _usage(bank, memory: str):
    """`bank.<memory>.usage`; a client's, which is not served, read from the owner's log."""
    if getattr(bank, "is_remote", False):
        from skillbank.usage import UsageLog

        return UsageLog(bank.root / "usage" / f"{memory}.jsonl")
    return getattr(bank, memory).usage


def _votes(writer, reader) -> None:
    for bank in {id(writer): writer, id(reader): reader}.values():  # (team mode: two roots)
        write_skill(bank.root / "skills", "csv-summary", "Summarise a CSV file's columns.",
                    "# Steps\n\nRead the CSV.\n")
        bank.skills.sync()
    eid = writer.scoped(TINA).experiences.record(task="Renew the staging wildcard certificate",
                                                 outcome="success")
    for item in ("skill:csv-summary", eid):
        for _ in range(12):
            assert writer.scoped(BOB).rate(item, helpful=False)["counted"] is False
            assert writer.scoped(CAROL).rate(item, helpful=False)["counted"] is True
    assert _usage(reader, "skills").untrusted("csv-summary").outside == {"bob": -12}
    assert _usage(reader, "experiences").untrusted(eid).outside == {"bob": -12}  # who
    assert reader.experiences.get(eid).usage.failures == 1
    reviewer = reader.scoped(REVIEWER)
    assert reviewer.accept_votes("skill:csv-summary")["usage"]["failures"] == 2  # 13 before
    assert reviewer.accept_votes(eid)["usage"]["failures"] == 2  # 11 before
    assert _usage(reader, "skills").outside("csv-summary") == {"bob": -12, "carol": -12}
    # More of bob's votes, accepted again, move his one vote, never add a second.
    for _ in range(5):
        writer.scoped(BOB).rate(eid, helpful=False)
    assert reviewer.accept_votes(eid)["usage"]["failures"] == 2
    for _ in range(20):
        writer.scoped(BOB).rate(eid, helpful=True)  # his net -17 + 20: helpful
    accepted = reviewer.accept_votes(eid)["usage"]
    assert (accepted["successes"], accepted["failures"]) == (1, 1)
    assert _usage(reader, "experiences").untrusted(eid).outside == {}


@pytest.mark.parametrize("remote", [False, True], ids=["in-process", "client-of-owner"])
def test_accepted_untrusted_votes_count_once_per_principal(tmp_path, remote):
    with bank_for(tmp_path, remote) as bank:
        _votes(bank, bank)


def test_accepted_untrusted_votes_count_once_per_principal_in_team_mode(workers):
    a, b = workers
    _votes(a, b)


def test_untrusted_votes_logged_without_a_principal_are_one_unnamed_voter(tmp_path):
    """Lines of the previous release (no `"p"`) still count, as one principal together."""
    with bank_for(tmp_path, False) as bank:
        eid = bank.experiences.record(task="Rotate the signing keys", outcome="success")
        log = bank.root / "usage" / "experiences.jsonl"
    log.parent.mkdir(exist_ok=True)
    with log.open("a") as handle:
        for ok in (False, False, False, True):
            handle.write(json.dumps({"id": eid, "use": 0, "ok": ok, "u": 1,
                                     "at": "2026-12-01T00:00:00+00:00"}) + "\n")
    with bank_for(tmp_path, False) as bank:
        assert bank.experiences.usage.untrusted(eid).outside == {UNNAMED: -2}
        assert bank.experiences.usage.untrusted(eid).failures == 3  # as counted before
        assert bank.accept_votes(eid)["usage"]["failures"] == 1  # 3 before
