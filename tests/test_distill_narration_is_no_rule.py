"""A narration of what went wrong is no rule to follow.

hunt-threads #4 (session 32): a thread's failure feedback "Rotated the wrong key first." was
learnt as the active rule "Put rotated the wrong key first." (the "<X> first" shape read a verb
and its object as a thing to put first), and the agent was then told to repeat the mistake.
"Wrote the tests first." was kept as a rule as written (an irregular past read as an
imperative of a verb the list lacks). Both are now ignored as no reusable advice; noun phrases
put first and unlisted imperatives stay rules. In process and through a client of an owner.
"""

from __future__ import annotations

import pytest

from owner_client import bank_for
from skillbank.distill import RuleDistiller


@pytest.mark.parametrize("critique, rules", [
    ("Rotated the wrong key first.", []),
    ("Wrote the tests first.", []),
    ("Sent my draft first.", []),
    ("Found the bug in the parser.", []),
    # review 1 (session 32): "Use ran the tests locally rather than on CI."
    ("Ran the tests locally instead of on CI.", []),
    ("Overwrote the config file instead of merging it.", []),
    ("Deleted the branch instead of archiving it.", []),
    ("Signed commits instead of unsigned ones.", ["Use signed commits rather than unsigned ones."]),
    ("Tabs instead of spaces.", ["Use tabs rather than spaces."]),
    # Unchanged
    ("Decision and impact first.", ["Put decision and impact first."]),
    ("All the caveats first.", ["Put all the caveats first."]),
    ("Key findings up front.", ["Put key findings first."]),
    ("Read the docs first.", ["Read the docs first."]),
    ("Backfill the missing days.", ["Backfill the missing days."]),
    ("Vendor the dependencies.", ["Vendor the dependencies."]),
])
def test_a_narration_gives_no_rule(critique, rules):
    assert [r.text for r in RuleDistiller().rules_from_critique(critique) if r.actionable] == rules


@pytest.mark.parametrize("remote", [False, True], ids=["in-process", "client-of-owner"])
def test_failure_feedback_is_not_learnt_as_an_order(tmp_path, remote):
    with bank_for(tmp_path, remote) as bank:
        report = bank.guidelines.learn("Rotated the wrong key first.")
        assert [(e.action, e.detail) for e in report.entries] == [
            ("ignored", "no reusable advice (praise, a score, a one-off fix or a vague reaction)")]
        assert bank.guidelines.list() == []
