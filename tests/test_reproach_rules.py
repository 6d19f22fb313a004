"""A reproach is not a rule of its own (soak hunt #7).

"You forgot to add tests again. Every bug fix needs a regression test." stored and served the
active rule "Add tests again." beside "Give every bug fix a regression test.". The reproach's
"again" is no part of any rule, and a reproach that only complains about what another rule of
the critique asks for is no rule at all; one that is the critique's only word on its thing, or
asks for something else, stays a rule. In process and through a client of another process that
owns the root.
"""

from __future__ import annotations

import pytest

from owner_client import bank_for
from skillbank.distill import RuleDistiller

SOAK = "You forgot to add tests again. Every bug fix needs a regression test."


def _rules(critique: str) -> list[str]:
    return [r.text for r in RuleDistiller().rules_from_critique(critique) if r.actionable]


@pytest.mark.parametrize("critique, rules", [
    (SOAK, ["Give every bug fix a regression test."]),
    ("You didn't add type hints again. Add type hints to every public function.",
     ["Add type hints to every public function."]),
    ("You forgot the changelog entry again.", ["Include the changelog entry."]),
    ("You forgot to cite sources for the third time.", ["Cite sources."]),
    ("You missed the summary yet again!", ["Include the summary."]),
    # The only word on its thing, or another ask on the same thing: still a rule.
    ("You forgot the changelog entry again. Also use British spelling.",
     ["Include the changelog entry.", "Use British spelling."]),
    ("You forgot to update the README. Write the README in British English.",
     ["Update the README.", "Write the README in British English."]),
    ("You didn't run the linter again. Always run ruff before committing.",
     ["Run the linter.", "Always run ruff before committing."]),
])
def test_the_reproach_is_dropped_not_the_rule(critique, rules):
    assert _rules(critique) == rules


def test_again_inside_a_rule_stays():
    assert _rules("You forgot to run the tests again after rebasing.") == [
        "Run the tests again after rebasing."]


def _check(bank) -> None:
    report = bank.guidelines.learn(SOAK)
    assert [e.action for e in report.entries] == ["ignored", "added"]
    active = [g.text for g in bank.guidelines.list() if g.status == "active"]
    assert active == ["Give every bug fix a regression test."]
    ignored = [e for e in report.entries if e.action == "ignored"]
    assert ignored and ignored[0].text == "You forgot to add tests again."


@pytest.mark.parametrize("remote", [False, True], ids=["in-process", "client-of-owner"])
def test_learn_stores_the_rule_alone(tmp_path, remote):
    with bank_for(tmp_path, remote) as bank:
        _check(bank)
