"""A control character after a full stop does not join two instructions into one rule
(hunt-untrusted #6, session 27).

`learn_from_critique("Never force-push to main.\\x00 Always open a pull request.")` (or \\x07,
any C0 control) was read as one sentence: the splitter wants whitespace right after ".", and
control characters were turned into spaces only later, by the store. The joined rule then
merged into the stored "Never force-push to main.", and "Always open a pull request." was lost.
Control characters now read as spaces before splitting; invisible format characters (zero-width
space, BOM, bidi marks) are passed over where the space is looked for. The splitter directly,
and a learn in process and through a client of another process that owns the root (the real
model: the merge is its judgement).
"""

from __future__ import annotations

import pytest

from owner_client import bank_for
from skillbank.distill.sentences import split_sentences

FIRST = "Never force-push to main."
SECOND = "Always open a pull request."
#: C0 controls but tab and the line breaks, DEL, C1 controls but NEL.
CONTROLS = [chr(c) for c in [*range(0x00, 0x09), *range(0x0e, 0x1c), 0x7f, 0x80, 0x9b, 0x9f]]
INVISIBLE = ["\u200b", "\ufeff", "\u00ad", "\u2060", "\u200e", "\u202e"]


@pytest.mark.parametrize("char", CONTROLS + INVISIBLE, ids=lambda c: f"U+{ord(c):04X}")
def test_a_control_or_invisible_character_after_a_full_stop_ends_the_sentence(char):
    assert len(split_sentences(f"{FIRST}{char} {SECOND}")) == 2
    assert len(split_sentences(f"{FIRST} {char}{SECOND}")) == 2


@pytest.mark.parametrize("char", CONTROLS, ids=lambda c: f"U+{ord(c):04X}")
def test_a_control_character_reads_as_a_space(char):
    assert split_sentences(f"{FIRST}{char}{SECOND}") == [FIRST, SECOND]
    assert split_sentences(f"{FIRST}{char * 500} {SECOND}") == [FIRST, SECOND]


def test_text_without_such_characters_splits_as_before():  # a guard: unchanged
    assert split_sentences(f"{FIRST} {SECOND}") == [FIRST, SECOND]
    assert split_sentences(f"{FIRST}{SECOND}") == [f"{FIRST}{SECOND}"]  # no space: one
    assert split_sentences("Use SQL. 👍 Never log passwords.") == ["Use SQL.",
                                                                   "Never log passwords."]


def test_invisible_characters_inside_a_sentence_stay():
    """They belong to words and scripts; only where a space is looked for are they passed."""
    assert split_sentences(f"Never force\u00adpush to main.\u200b {SECOND}") == [
        "Never force\u00adpush to main.", SECOND]


@pytest.mark.parametrize("remote", [False, True], ids=["in-process", "client-of-owner"])
def test_the_second_instruction_is_learnt_not_merged_away(tmp_path, remote, minilm):
    with bank_for(tmp_path, remote, minilm) as bank:
        bank.guidelines.learn(FIRST)
        for char in ("\x00", "\x07"):
            report = bank.guidelines.learn(f"{FIRST}{char} {SECOND}")
            texts = {e.text for e in report.entries}
            assert SECOND in texts and not any(FIRST in t and SECOND in t for t in texts), \
                report.entries
        active = [g.text for g in bank.guidelines.list(status="active", namespace="*")]
        assert sorted(active) == sorted([FIRST, SECOND])
