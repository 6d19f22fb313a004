"""An instruction whose verb the vocabulary lacks is still an instruction.

Users met "Never log request bodies; they may hold card numbers. Mask the card number to its
last four digits." learnt as "Never log request bodies." alone: the masking rule, the one that
says what to do, was reported as "praise" (learning-loop hunt, session 20, defect 6). Backfill,
Lint, Vendor, Cc, Bullet ... were lost the same way: a closed verb list never holds every verb
of every trade, so a capitalised first word with its object after it reads as a verb.
"""

from __future__ import annotations

import pytest

from skillbank import Skillbank
from skillbank.distill import RuleDistiller
from skillbank.embeddings import HashEmbedding


def _read(critique: str) -> list[tuple[str, bool]]:
    return [(r.text, r.actionable) for r in RuleDistiller().rules_from_critique(critique)]


@pytest.mark.parametrize("sentence", [
    "Anonymise the customer's address in every export.",
    "Backfill the missing hours before you chart the week.",
    "Lint every YAML file before the merge.",
    "Vendor the third-party SDK into the repository.",
    "Bcc the account manager on renewal notices.",
    "Timestamp each entry of the audit log.",
    "Zero-pad the invoice numbers to six digits.",
])
def test_an_unlisted_verb_with_its_object_is_a_rule(sentence):
    assert _read(sentence) == [(sentence, True)]


@pytest.mark.parametrize("sentence", [
    "Love the new colour scheme!",
    "Adore the tone of this one.",
    "Shame the appendix got cut.",
    "Pity the legend is so small.",
    "Loved the opening paragraph.",
    "Great job on the tests, thanks!",
    "Nice, the numbers add up now.",
    "Maybe the intro could be shorter?",
    "Wow, the charts look great.",
])
def test_praise_and_remarks_stay_non_actionable(sentence):
    assert all(not actionable for _, actionable in _read(sentence))


def test_the_second_instruction_of_a_critique_is_learnt(tmp_path):
    with Skillbank.open(tmp_path / "root", embedding_function=HashEmbedding(),
                        include_bundled=False) as bank:
        report = bank.guidelines.learn(
            "Never print access tokens; a log is readable by the whole team. Truncate each "
            "token to its first six characters.")
        assert [e.action for e in report.entries] == ["added", "added"], report
        active = {g.text for g in bank.guidelines.list()}
        assert "Truncate each token to its first six characters." in active


@pytest.mark.parametrize("sentence, actionable", [
    ("Back up the database before every migration.", True),
    ("Back up your notes before the upgrade.", True),
    ("Back in March we used tabs.", False),
    ("Back up plans matter.", False),
])
def test_back_up_is_a_verb_only_before_its_object(sentence, actionable):
    """Session 37: "Back up the database before every migration." was reported as no
    instruction ("back" is no listed verb, and listing it read "Back in March ..." as one)."""
    assert _read(sentence) == [(sentence, actionable)]
