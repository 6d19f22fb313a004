"""A critique's second instruction is a rule of its own: after "but do ...", and after a
description joined by "and".

hunt-loop-shared #3 (session 31): "Don't retry on 4xx errors but do retry on 5xx errors." gave
only "Do not retry on 4xx errors.": an emphatic "do" on an imperative was no instruction, and
the clause was dropped with no `ignored` entry. "The README is missing an install section and
the examples are too long." gave the one garbled rule "Add an install section and the examples
are too long to the README.": the "is missing" shape took everything after "missing". Two
instructions in a sentence are two rules (docs/api.md). In process and through a client of an
owner process.
"""

from __future__ import annotations

import pytest

from owner_client import bank_for
from skillbank.distill import RuleDistiller

RETRY = "Don't retry on 4xx errors but do retry on 5xx errors."
README = "The README is missing an install section and the examples are too long."


@pytest.mark.parametrize("critique, rules", [
    (RETRY, ["Do not retry on 4xx errors.", "Retry on 5xx errors."]),
    ("Do use type hints.", ["Use type hints."]),
    (README, ["Add an install section to the README.", "Keep the examples concise."]),
    ("The intro is too long and the tests are missing.",
     ["Keep the intro concise.", "Include the tests."]),
    # Unchanged: "do not" is a negation, and an imperative with two descriptions is one rule.
    ("Do not retry on 4xx errors.", ["Do not retry on 4xx errors."]),
    ("Make sure the header is bold and the footer is small.",
     ["Make sure the header is bold and the footer is small."]),
])
def test_each_instruction_is_a_rule(critique, rules):
    assert [r.text for r in RuleDistiller().rules_from_critique(critique) if r.actionable] == rules


@pytest.mark.parametrize("remote", [False, True], ids=["in-process", "client-of-owner"])
def test_learning_the_critiques_stores_both_rules(tmp_path, remote, minilm):
    with bank_for(tmp_path, remote, minilm) as bank:
        retry = bank.guidelines.learn(RETRY, namespace="retry")
        assert [(e.action, e.text) for e in retry.entries] == [
            ("added", "Do not retry on 4xx errors."), ("added", "Retry on 5xx errors.")]
        readme = bank.guidelines.learn(README, namespace="readme")
        assert [(e.action, e.text) for e in readme.entries] == [
            ("added", "Add an install section to the README."),
            ("added", "Keep the examples concise.")]
