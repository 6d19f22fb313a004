"""An outsider's uses of an item count once, as his votes do (hunt-trust #1, session 30).

A trusted contributor who only reads the team's namespace (an outsider there) recalled a team
experience six times and marked it helpful after each: six uses, one success (his marks count
once, his net), a help rate of 1/6 under prune's 0.2, so the team reviewer's `prune` would have
retired a memory that helped every time. Rating a team skill "helpful" six times made six uses
and one success, and `skills.review()` flagged it as "helped in at most 20% of its uses". Now
an outsider's uses (his recalls, a skill's bare uses, the use a rating carries) count once per
item, like his votes: one voice, one use, one vote; an untrusted client's ratings, once a
reviewer accepts them, count the same way. The item's own people and the local user count each
use, as before. In process, through a client of an owner process, and in team mode.
"""

from __future__ import annotations

import pytest

from conftest import write_skill
from owner_client import bank_for
from skillbank.scope import Scope
from test_team_guidelines import workers  # noqa: F401 - a fixture

CARL = Scope(principal="carl", namespace="carl", reads=("team",), role="contributor")
TINA = Scope(principal="tina", namespace="team", role="contributor")
RITA = Scope(principal="rita", namespace="team", role="reviewer")
BOB = Scope(principal="bob", namespace="bob", reads=("team",), role="contributor",
            trusted=False)
TASK = "Vacuum the analytics warehouse tables"
OTHER = "Reindex the product catalogue search"


def _check(bank, reader) -> None:
    eid = bank.scoped(TINA).experiences.record(task=TASK, outcome="success")
    carl = bank.scoped(CARL)
    for _ in range(6):
        assert [h.id for h in carl.experiences.recall(TASK, k=1)] == [eid]
        assert carl.rate(eid, helpful=True)["counted"] is True
    usage = reader.experiences.get(eid).usage
    assert (usage.uses, usage.successes, usage.failures) == (1, 1, 0)  # (6, 1, 0) before
    assert eid not in [e.id for e in reader.scoped(RITA).experiences.prune(dry_run=True)]
    # The team's own people count every use, as before: six recalls, one "helped".
    own = bank.scoped(TINA).experiences.record(task=OTHER, outcome="success")
    for _ in range(6):
        assert [h.id for h in bank.scoped(TINA).experiences.recall(OTHER, k=1)] == [own]
    bank.scoped(TINA).rate(own, helpful=True)
    assert reader.experiences.get(own).usage.uses == 6
    assert own in [e.id for e in reader.scoped(RITA).experiences.prune(dry_run=True)]
    # A skill he may not change: six "helpful" are one use and one success, never flagged.
    for each in {id(bank): bank, id(reader): reader}.values():  # (team mode: two roots)
        write_skill(each.root / "skills", "xlsx-to-json", "Convert a spreadsheet to JSON.",
                    "# Steps\n\nOpen the sheet.\n")
        each.skills.sync()
    for _ in range(6):
        assert carl.rate("skill:xlsx-to-json", helpful=True)["counted"] is True
    carl.skills.record_use("xlsx-to-json")
    skill = {s.name: s for s in reader.skills.list()}["xlsx-to-json"]
    assert (skill.usage.uses, skill.usage.successes) == (1, 1)  # (7, 1) before
    assert "xlsx-to-json" not in [s.name for s in reader.skills.review()]
    # An untrusted client's six "helpful", once accepted, count as an outsider's: one use, one
    # vote (seven uses and two successes before, a 2/7 help rate).
    for _ in range(6):
        assert bank.scoped(BOB).rate("skill:xlsx-to-json", helpful=True)["counted"] is False
    accepted = reader.scoped(RITA).accept_votes("skill:xlsx-to-json")["usage"]
    assert (accepted["uses"], accepted["successes"]) == (2, 2)
    bank.scoped(BOB).rate("skill:xlsx-to-json", helpful=True)  # his use is counted already
    accepted = reader.scoped(RITA).accept_votes("skill:xlsx-to-json")["usage"]
    assert (accepted["uses"], accepted["successes"]) == (2, 2)


@pytest.mark.parametrize("remote", [False, True], ids=["in-process", "client-of-owner"])
def test_an_outsiders_uses_count_once(tmp_path, remote):
    with bank_for(tmp_path, remote) as bank:
        _check(bank, bank)


def test_an_outsiders_uses_count_once_in_team_mode(workers):
    a, b = workers
    _check(a, b)
