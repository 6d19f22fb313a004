"""An instruction that opens with "roll" ("Roll out ...", "Roll back ...") is a rule: it was
read as no instruction and lost (found beside hunt-lcteam #2, session 36)."""

from __future__ import annotations

import pytest

from skillbank.distill.rule_distiller import RuleDistiller


@pytest.mark.parametrize("critique, rule", [
    ("Roll out schema changes to one region first.", "Roll out schema changes to one region first."),
])
def test_the_instruction_is_kept_as_a_rule(critique, rule):
    rules = [r for r in RuleDistiller().rules_from_critique(critique) if r.actionable]
    assert [r.text for r in rules] == [rule]
