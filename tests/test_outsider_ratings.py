"""An outsider's ratings of an experience, a lesson or a skill count once: his net judgement.

Users met (hunt s18, defect 5, after guideline votes were fixed): a trusted contributor who
only *reads* the team's namespace marked a team experience "not helpful" fifty times and every
mark counted, so it sank in everyone's recall and became a prune candidate; rated a team,
bundled or hand-written skill "failed" fifty times and it sank in every ranking, and six such
ratings after a change flagged the skill "worse since a change". Now such a caller (one who may
not change the item: `skillbank.outside_votes`) counts once per item, as the sign of his net;
the item's own people (the namespace's contributors, the skill's author, a reviewer) and the
single local user count every rating, as before. In process, through a client of an owner
process and in team mode (PostgreSQL).
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


def _counts(usage) -> tuple[int, int]:
    return usage.successes, usage.failures


def _experience_marks(writer, reader) -> None:
    """Marks by `writer`'s scopes, counts read on `reader` (the same bank, or another worker)."""
    eid = writer.scoped(TINA).experiences.record(task="Rotate the team's signing keys",
                                                 outcome="success")
    carl = writer.scoped(CARL)
    for _ in range(10):
        assert carl.rate(eid, helpful=False)["counted"] is True
    assert _counts(reader.experiences.get(eid).usage) == (0, 1)  # one vote, not ten
    for _ in range(10):
        carl.rate(eid, helpful=True)  # his net back to zero: no vote of his
    assert _counts(reader.experiences.get(eid).usage) == (0, 0)
    carl.rate(eid, helpful=True)
    assert _counts(reader.experiences.get(eid).usage) == (1, 0)
    # The namespace's own contributor and the local user count every mark, as before.
    for _ in range(3):
        writer.scoped(TINA).rate(eid, helpful=False)
    for _ in range(2):
        writer.rate(eid, helpful=False)
    assert _counts(reader.experiences.get(eid).usage) == (1, 5)


def _skill_ratings(bank) -> None:
    write_skill(bank.root / "skills", "deploy-web", "Deploy the web service.",
                "# Steps\n\nRun the deploy script.\n")
    bank.skills.sync()
    carl = bank.scoped(CARL)
    for _ in range(10):
        carl.rate("skill:deploy-web", helpful=False)

    def usage(name: str):
        return {s.name: s for s in bank.skills.list()}[name].usage

    assert _counts(usage("deploy-web")) == (0, 1)
    # His uses count once too, as his votes (hunt-trust #1, session 30: ten uses, one vote).
    assert usage("deploy-web").uses == 1
    carl.skills.record_use("deploy-web")  # a bare use is a use, never a vote
    assert (usage("deploy-web").uses, _counts(usage("deploy-web"))) == (1, (0, 1))
    # A reviewer and the local user count each rating; so does a skill's own author.
    for who in (bank.scoped(RITA), bank):
        who.rate("skill:deploy-web", helpful=True)
        who.rate("skill:deploy-web", helpful=True)
    assert _counts(usage("deploy-web")) == (4, 1)
    carl.skills.create("carl-notes", "Write Carl's release notes.", "# Steps\n\nWrite.\n")
    for _ in range(3):
        carl.rate("skill:carl-notes", helpful=False)
    assert _counts(usage("carl-notes")) == (0, 3)


def _outcome_flag(bank) -> None:
    """Six "failed" of one outsider after a change do not flag the skill worse since it."""
    def version(body: str) -> None:
        write_skill(bank.root / "skills", "fix-flaky-tests", "Find and fix flaky tests.", body)
        bank.skills.sync()
        bank.skills.load("fix-flaky-tests")  # this version seen: the split of its ratings

    carl = bank.scoped(CARL)
    version("# Steps\n\nRerun the test.\n")
    for _ in range(6):
        carl.rate("skill:fix-flaky-tests", helpful=True)
    version("# Steps\n\nRetry every test three times.\n")
    for _ in range(6):
        carl.rate("skill:fix-flaky-tests", helpful=False)
    assert bank.skills.outcome_flags() == []


@pytest.mark.parametrize("remote", [False, True], ids=["in-process", "client-of-owner"])
def test_an_outsider_counts_once_on_experiences_and_skills(tmp_path, remote):
    with bank_for(tmp_path, remote) as bank:
        _experience_marks(bank, bank)
        _skill_ratings(bank)
        _outcome_flag(bank)


def test_an_outsider_counts_once_in_team_mode(workers):
    a, b = workers
    _experience_marks(a, b)
    eid = a.scoped(TINA).experiences.record(task="Restore the team's backups",
                                            outcome="success")
    for worker in (a, b, a, b):  # his votes through either worker make one net
        worker.scoped(CARL).rate(eid, helpful=False)
    assert _counts(b.experiences.get(eid).usage) == (0, 1)
    assert a.experiences.usage.outside(eid) == {"carl": -4}
    _skill_ratings(a)
