"""An untrusted client's uses count once per principal and item, as its accepted votes do
(review1 #1, session 30).

An untrusted client (one token) recalled a team experience six times and marked it helpful
after each. Once a reviewer accepted its votes, the six marks were one success (one principal,
one vote) but the six recalls, plain untrusted uses that named nobody, stayed six uses: a help
rate of 1/6, and `prune` named an experience that had helped every time (6 uses and 6
successes before accepted votes were folded per principal). A skill's bare uses did the same
to `skills.review()`. Now an untrusted use names its principal and counts once per item, as an
outsider's does. In process, through a client of an owner process, and in team mode.
"""

from __future__ import annotations

import pytest

from conftest import write_skill
from owner_client import bank_for
from skillbank.scope import Scope
from test_team_guidelines import workers  # noqa: F401 - a fixture

TINA = Scope(principal="tina", namespace="team", role="contributor")
RITA = Scope(principal="rita", namespace="team", role="reviewer")
BOB = Scope(principal="bob", namespace="bob", reads=("team",), role="contributor",
            trusted=False)
TASK = "Rotate the database replica certificates"


def _check(bank, reader) -> None:
    eid = bank.scoped(TINA).experiences.record(task=TASK, outcome="success")
    bob = bank.scoped(BOB)
    for _ in range(6):
        assert [h.id for h in bob.experiences.recall(TASK, k=1)] == [eid]
        bob.experiences.mark(eid, True)
    pending = reader.experiences.usage.untrusted(eid) if not getattr(
        reader, "is_remote", False) else None
    if pending is not None:
        assert (pending.uses, pending.successes) == (1, 6)  # (6, 6) before
    accepted = reader.scoped(RITA).accept_votes(eid)["usage"]
    assert (accepted["uses"], accepted["successes"]) == (1, 1)  # (6, 1) before: a 1/6 rate
    assert eid not in [e.id for e in reader.scoped(RITA).experiences.prune(dry_run=True)]
    for _ in range(3):  # his uses after the acceptance are counted already
        bob.experiences.recall(TASK, k=1)
    assert reader.scoped(RITA).accept_votes(eid)["usage"]["uses"] == 1
    # A skill: six bare uses and one "helpful" of his are one use and one success once accepted.
    for each in {id(bank): bank, id(reader): reader}.values():  # (team mode: two roots)
        write_skill(each.root / "skills", "replica-certs", "Rotate replica certificates.",
                    "# Steps\n\nIssue the new certificate.\n")
        each.skills.sync()
    for _ in range(6):
        bob.skills.record_use("replica-certs")
    bob.rate("skill:replica-certs", helpful=True)
    accepted = reader.scoped(RITA).accept_votes("skill:replica-certs")["usage"]
    assert (accepted["uses"], accepted["successes"]) == (1, 1)  # (7, 1) before
    assert "replica-certs" not in [s.name for s in reader.skills.review()]


@pytest.mark.parametrize("remote", [False, True], ids=["in-process", "client-of-owner"])
def test_an_untrusted_clients_accepted_uses_count_once(tmp_path, remote):
    with bank_for(tmp_path, remote) as bank:
        _check(bank, bank)


def test_an_untrusted_clients_accepted_uses_count_once_in_team_mode(workers):
    a, b = workers
    _check(a, b)
