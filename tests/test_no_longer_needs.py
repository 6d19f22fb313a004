""""X no longer needs Y" is a rule that drops a requirement, not "Give X no longer Y".

The critique "We changed the policy: migrations of the orders table no longer need a rollback
plan." was stored as the active rule "Give migrations of the orders table no longer a rollback
plan." (hunt-agents, session 23): the "<thing> needs X" reading took "no longer" into the
thing. In process and through a client of another process that owns the root.
"""

from __future__ import annotations

import pytest

from owner_client import bank_for
from skillbank.distill import RuleDistiller

POLICY = "We changed the policy: migrations of the orders table no longer need a rollback plan."


@pytest.mark.parametrize("critique, rule", [
    (POLICY, "Do not require a rollback plan for migrations of the orders table."),
    ("Drafts no longer require sign-off.", "Do not require sign-off for drafts."),
    # A plain negation is a complaint, not a dropped requirement (review, session 23: it was
    # learnt as "Do not require authentication for the login endpoint.").
    ("The login endpoint does not require authentication.",
     "Make the login endpoint require authentication."),
    ("Every bug fix needs a regression test.", "Give every bug fix a regression test."),
])
def test_a_dropped_requirement_reads_as_one(critique, rule):
    assert [r.text for r in RuleDistiller().rules_from_critique(critique)
            if r.actionable] == [rule]


def test_one_thing_that_no_longer_needs_something_is_no_rule():
    assert [r for r in RuleDistiller().rules_from_critique("This no longer needs a test.")
            if r.actionable] == []


@pytest.mark.parametrize("remote", [False, True], ids=["in-process", "client-of-owner"])
def test_learnt_and_served_as_said(tmp_path, remote):
    with bank_for(tmp_path, remote) as bank:
        bank.guidelines.learn(POLICY)
        active = [g.text for g in bank.guidelines.list(status="active")]
    assert active == ["Do not require a rollback plan for migrations of the orders table."]
