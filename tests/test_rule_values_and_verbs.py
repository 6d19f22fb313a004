"""A new value in a slot of several words, and instructions that open with a common verb.

Before session 16:
- "Format Python code with ruff format." after "Format Python code with black." was merged
  into the older rule as "the same action on the same code": the newer tool was lost and the
  old one kept being served. The template check only knew slots of one word each.
- "Install dependencies with uv.", "Approve only after CI passes.", "Require two reviewers ..."
  were ignored as "no reusable advice": the distiller's verb list lacked common verbs (install,
  approve, require, restart, redact, ...). Words as often nouns at the start of a sentence
  (save, design, search, display, plan, target ...) stay out: with them, "Save button doesn't
  work." and "Get well soon!" became rules, "Search should be case-insensitive." lost its
  rewrite, and "Display name should be limited to 40 characters." merged into "... optional.".
Run in process and through a client of another process that owns the root.
"""

from __future__ import annotations

import pytest

from owner_client import bank_for
from skillbank.distill import RuleDistiller
from skillbank.memories.guidelines.decisions import other_values

SLOT_PAIRS = [
    ("Format Python code with black.", "Format Python code with ruff format."),
    ("Use npm to install packages.", "Use pnpm to install packages."),
]
VERB_RULES = ["Install dependencies with uv.", "Approve only after CI passes.",
              "Require two reviewers for every merge.", "Redact customer emails in the logs.",
              "Restart the worker after a config change."]
#: Descriptions and small talk that open with a word that is also a verb: never a rule.
NOT_ADVICE = ["Design feels cluttered.", "Save button doesn't work on mobile.",
              "Preview renders correctly.", "Map legend overlaps the title.",
              "Trust me, the export is fine.", "Get well soon!", "Take care.",
              "Find attached my notes.", "Fetch failed twice.", "Lint passes now.",
              "Throttle settings look off.", "Stage two failed."]
#: Modal advice keeps its rewrite; a noun phrase joined by "and" is not two rules.
SHAPES = {"Search should be case-insensitive.": ["Make search case-insensitive."],
          "Display name should be optional.": ["Make display name optional."],
          "Document the backup and restore procedure.":
              ["Document the backup and restore procedure."],
          "Update the README with the install and search instructions.":
              ["Update the README with the install and search instructions."]}


def test_a_slot_may_hold_several_words():
    assert other_values("Format Python code with ruff format.",
                        "Format Python code with black.") == [("ruff format", "black")]
    # a word added or dropped, or a shared stem, is another form of one rule
    assert other_values("Write unit tests for new code.", "Write tests for new code.") == []
    assert other_values("Add a test for each bug fix.", "Add tests for each bug fix.") == []
    # more than half of the words changed: not one template
    assert other_values("Run the linter before a commit.", "Ask a reviewer for approval.") == []


@pytest.mark.parametrize("sentence", NOT_ADVICE)
def test_a_description_is_no_rule(sentence):
    assert not [r for r in RuleDistiller().rules_from_critique(sentence) if r.actionable]


@pytest.mark.parametrize("sentence, rules", SHAPES.items())
def test_shapes_keep_their_rewrites(sentence, rules):
    assert [r.text for r in RuleDistiller().rules_from_critique(sentence) if r.actionable] == rules


def _learn_all(bank) -> None:
    for older, newer in SLOT_PAIRS:
        bank.guidelines.learn(older)
        entry = bank.guidelines.learn(newer).entries[0]
        assert entry.action == "added", entry
        assert "replaces=<that id>" in entry.detail  # how to make it a replacement
    for rule in VERB_RULES:
        entry = bank.guidelines.learn(rule).entries[0]
        assert entry.action == "added" and entry.text == rule, entry
    learnt = bank.guidelines.learn(" ".join(NOT_ADVICE))
    assert not learnt.ids("added", "merged", "superseded"), learnt
    bank.guidelines.learn("Display name should be optional.")
    assert bank.guidelines.learn("Display name should be limited to 40 characters."
                                 ).entries[0].action == "added"
    active = {g.text for g in bank.guidelines.list() if g.status == "active"}
    assert {text for pair in SLOT_PAIRS for text in pair} | set(VERB_RULES) <= active, active
    # the agent may say the new value replaces the old one
    old = next(g for g in bank.guidelines.list() if g.text == "Use npm to install packages.")
    report = bank.guidelines.learn("Use pnpm to install packages.", replaces=old.id)
    assert report.entries[0].superseded_id == old.id
    assert old.id not in {g.id for g in bank.guidelines.list() if g.status == "active"}


@pytest.mark.parametrize("remote", [False, True], ids=["in-process", "client-of-owner"])
def test_in_process_and_through_a_client(tmp_path, minilm, remote):
    with bank_for(tmp_path, remote, minilm) as bank:
        _learn_all(bank)
