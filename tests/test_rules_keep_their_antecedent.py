"""A rule that points back to the rule before it stays joined to it.

Users met "Make it no more than 15%." (from "Offer a discount before processing a
cancellation. It should be no more than 15%."), "Use AbortController for it.", "Avoid
citations in it.", "Use their last name." and "Apply directly." stored and served as rules of
their own, and "Make it no more than 15%." stayed served after the discount rule was retired
(learning-loop hunt, session 20, defect 7).
"""

from __future__ import annotations

import pytest

from skillbank import Skillbank
from skillbank.distill import RuleDistiller
from skillbank.embeddings import HashEmbedding


def _rules(critique: str) -> list[str]:
    return [r.text for r in RuleDistiller().rules_from_critique(critique) if r.actionable]


@pytest.mark.parametrize("critique, rule", [
    ("Offer a free month before closing an account. It must not exceed one month per year.",
     "Offer a free month before closing an account; do not let it exceed one month per year."),
    ("Debounce the search box. Use lodash for it.", "Debounce the search box; use lodash for it."),
    ("Keep the summary to one paragraph and leave jargon out of it.",
     "Keep the summary to one paragraph; leave jargon out of it."),
    ("Don't call patients by their first name; use their title.",
     "Do not call patients by their first name; use their title."),
    ("Skip the staging deploy for copy changes; merge directly.",
     "Skip the staging deploy for copy changes; merge directly."),
])
def test_a_rule_that_points_back_stays_with_its_subject(critique, rule):
    assert _rules(critique) == [rule]


@pytest.mark.parametrize("critique, rules", [
    # "it" right after the verb is the answer itself; "each X ... next to it" names its "it".
    ("Answer the question first, and keep it under 150 words.",
     ["Answer the question first.", "Keep it under 150 words."]),
    ("Label the axes. Give each chart its source next to it.",
     ["Label the axes.", "Give each chart its source next to it."]),
    ("Greet customers by their first name.", ["Greet customers by their first name."]),
])
def test_rules_that_stand_alone_stay_apart(critique, rules):
    assert _rules(critique) == rules


def test_the_part_that_pointed_back_is_retired_with_its_rule(tmp_path):
    with Skillbank.open(tmp_path / "root", embedding_function=HashEmbedding(),
                        include_bundled=False) as bank:
        bank.guidelines.learn("Offer a free month before closing an account. "
                              "It must not exceed one month per year.")
        report = bank.guidelines.learn("Stop offering a free month before closing an account.")
        assert [e.action for e in report.entries] == ["superseded"], report
        assert [g.text for g in bank.guidelines.list(status="active")] == [
            "Stop offering a free month before closing an account."]
