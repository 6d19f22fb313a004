"""Two instructions in one sentence are two rules, so a later correction of one keeps the other.

"Please stop using emojis in commit messages and always reference the ticket number." was one
rule (the split after "and" needed a bare verb, not "always reference"), so a later "Use emojis
in commit messages." retired both and the ticket rule left memory; "Don't apologise so much,
answer the question first, and keep it under 200 words." was one rule too (a bare comma was no
joint). In process and through a client.
"""

from __future__ import annotations

import pytest

from owner_client import client_of_owner
from skillbank import Skillbank
from skillbank.distill import RuleDistiller
from skillbank.embeddings import HashEmbedding

EMOJIS = "Please stop using emojis in commit messages and always reference the ticket number."


@pytest.mark.parametrize("critique, rules", [
    (EMOJIS, ["Stop using emojis in commit messages.", "Always reference the ticket number."]),
    ("Don't apologise so much, answer the question first, and keep it under 200 words.",
     ["Do not apologise so much.", "Answer the question first.", "Keep it under 200 words."]),
    ("Add a test for the parser, and also run the linter.",
     ["Add a test for the parser.", "Run the linter."]),
    # One instruction stays one: a list of things, a sequence.
    ("Use short sentences, bullets and headings.", ["Use short sentences, bullets and headings."]),
    ("Apologise first and then explain the refund timeline.",
     ["Apologise first and then explain the refund timeline."]),
])
def test_one_rule_per_instruction(critique, rules):
    assert [r.text for r in RuleDistiller().rules_from_critique(critique) if r.actionable] == rules


def _correct_one(bank) -> None:
    bank.guidelines.learn(EMOJIS)
    entry = bank.guidelines.learn("Use emojis in commit messages.").entries[0]
    assert entry.action == "superseded", entry
    active = {g.text for g in bank.guidelines.list() if g.status == "active"}
    assert active == {"Use emojis in commit messages.", "Always reference the ticket number."}


def test_a_correction_keeps_the_other_instruction(tmp_path):
    with Skillbank.open(tmp_path / "root", embedding_function=HashEmbedding(),
                        include_bundled=False) as bank:
        _correct_one(bank)


def test_a_correction_keeps_the_other_instruction_through_a_client(tmp_path):
    with client_of_owner(tmp_path / "root") as bank:
        _correct_one(bank)
