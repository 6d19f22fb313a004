"""A critique that says what was done and what it lacked gives a rule (#25, no-model arm).

On the critique stream (learning loop, dev) the first critiques of two rules gave the
deterministic distiller nothing at all: "the ZipFile and the temp file are opened without
`with`" and "the difference is reported with no interval and no sample sizes" describe the
defect without an imperative, so the next critique of the same rule found nothing to recall.
"""

from __future__ import annotations

import pytest

from skillbank.distill import RuleDistiller


def rules(critique: str) -> list[str]:
    return [r.text for r in RuleDistiller().rules_from_critique(critique) if r.actionable]


@pytest.mark.parametrize("critique, rule", [
    ("The one real issue: the ZipFile and the temp file are opened without `with`, so on "
     "Windows the cleanup step fails.", "Open the ZipFile and the temp file with `with`."),
    ("And the difference is reported with no interval and no sample sizes.",
     "Report the difference with interval and sample sizes."),
    ("The function was written without tests.", "Write the function with tests."),
])
def test_a_thing_done_without_something_asks_for_it(critique, rule):
    assert rule in rules(critique)


@pytest.mark.parametrize("critique", [
    "It was done without care.",  # a pronoun: no thing to act on
    "This is done without fuss.",
])
def test_no_rule_without_a_subject(critique):
    assert rules(critique) == []
