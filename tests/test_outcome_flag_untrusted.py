"""Untrusted ratings do not decide the "worse since a change" flag until a reviewer accepts them.

Users met this (hunt s18, defect 3): an untrusted client rated a skill helpful six times, the
skill changed, and it rated it unhelpful six times. Every answer said `counted: false`, yet
`stats()["skill_trust"]["flagged_by_outcome"]` named the skill (the review queue, with a
`skills restore` hint): `outcome_flags` read every rating line, the untrusted ones too. The
reverse hid a real regression. Now only the ratings `UsageLog` counts decide: trusted ones, and
untrusted ones once `accept_votes` folded them in, each principal once per version, as an
outsider (hunt-trust #2, session 30). In process and through a client of an owner.
"""

from __future__ import annotations

import pytest

from conftest import write_skill
from owner_client import bank_for
from skillbank.scope import Scope

AGENTS = [Scope(principal=f"agent-{n}", namespace="default", role="contributor", trusted=False)
          for n in range(6)]
AGENT = AGENTS[0]


def _version(bank, name: str, body: str) -> None:
    write_skill(bank.root / "skills", name, "Find and fix flaky tests.", body)
    bank.skills.sync()
    bank.skills.load(name)  # this version seen: the split point of its ratings


def _check(bank) -> None:
    agent = bank.scoped(AGENT)
    # Only untrusted ratings: no flag however they fall, until a reviewer accepts them.
    _version(bank, "fix-flaky-tests", "# Steps\n\nRerun the test.\n")
    for who in AGENTS:
        assert bank.scoped(who).rate("skill:fix-flaky-tests", helpful=True)["counted"] is False
    _version(bank, "fix-flaky-tests", "# Steps\n\nRetry every test three times.\n")
    for who in AGENTS:
        bank.scoped(who).rate("skill:fix-flaky-tests", helpful=False)
    assert bank.skills.outcome_flags() == []
    bank.accept_votes("skill:fix-flaky-tests")  # now they count, each at the time it was given
    assert [f["name"] for f in bank.skills.outcome_flags()] == ["fix-flaky-tests"]
    # Once accepted, one principal counts once per version, as an outsider (hunt-trust #2,
    # session 30): six "helpful" and then six "failed" of one agent flag nothing.
    _version(bank, "lint-yaml", "# Steps\n\nRun yamllint.\n")
    for _ in range(6):
        agent.rate("skill:lint-yaml", helpful=True)
    _version(bank, "lint-yaml", "# Steps\n\nDelete the YAML.\n")
    for _ in range(6):
        agent.rate("skill:lint-yaml", helpful=False)
    bank.accept_votes("skill:lint-yaml")
    assert "lint-yaml" not in [f["name"] for f in bank.skills.outcome_flags()]
    # A real regression (trusted ratings) is not hidden by untrusted praise after the change.
    _version(bank, "tidy-imports", "# Steps\n\nSort the imports.\n")
    for _ in range(6):
        bank.rate("skill:tidy-imports", helpful=True)
    _version(bank, "tidy-imports", "# Steps\n\nDelete the imports.\n")
    for _ in range(6):
        bank.rate("skill:tidy-imports", helpful=False)
    for _ in range(30):
        agent.rate("skill:tidy-imports", helpful=True)
    flags = {f["name"]: f for f in bank.skills.outcome_flags()}
    assert (flags["tidy-imports"]["success_rate"], flags["tidy-imports"]["judged"]) == (0.0, 6)


@pytest.mark.parametrize("remote", [False, True], ids=["in-process", "client-of-owner"])
def test_untrusted_ratings_decide_no_outcome_flag_until_accepted(tmp_path, remote):
    with bank_for(tmp_path, remote) as bank:
        _check(bank)
