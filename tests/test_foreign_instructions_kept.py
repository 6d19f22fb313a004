"""Plain German and French instructions are rules; text the distiller cannot read says so.

Users met "Ab sofort verwenden wir pytest statt unittest.", "Schreibe Funktionen mit höchstens
40 Zeilen." and "Désormais, utilise pytest." ignored as "no reusable advice (praise, ...)": each
has one of the distiller's German/French function words, and a sentence needed two. A Chinese
or Russian critique was reported as "praise" too, which told the user nothing (hunt-i18n #5).
In process and through a client of another process that owns the root.
"""

from __future__ import annotations

import pytest

from owner_client import bank_for
from skillbank.distill import RuleDistiller
from skillbank.distill.language import not_english

INSTRUCTIONS = [
    "Ab sofort verwenden wir pytest statt unittest.",
    "Verwende ab sofort nicht mehr pytest, sondern unittest.",
    "Nicht mehr unittest verwenden.",
    "Schreibe Funktionen mit höchstens 40 Zeilen.",
    "Désormais, utilise pytest.",
    "Dorénavant, écris les commits en anglais.",
]
NOT_READ = ["请始终用中文写提交信息。", "Никогда не используйте f-строки для SQL."]


@pytest.mark.parametrize("sentence", INSTRUCTIONS)
def test_an_instruction_with_one_function_word_is_kept(sentence):
    rules = RuleDistiller().rules_from_critique(sentence)
    assert [(r.text, r.actionable) for r in rules] == [(sentence, True)]


@pytest.mark.parametrize("sentence", [
    "Use non-blocking sockets for the proxy.", "Prefer non-blocking IO everywhere.",
    "Run an AB test before the launch.", "Keep the die cut lines in the print file.",
])
def test_english_with_a_foreign_looking_word_stays_english(sentence):
    assert not not_english(sentence)


@pytest.mark.parametrize("remote", [False, True], ids=["in-process", "client-of-owner"])
def test_learnt_and_not_read_said_plainly(tmp_path, remote):
    with bank_for(tmp_path, remote) as bank:
        for sentence in INSTRUCTIONS[:2]:
            entries = bank.guidelines.learn(sentence, namespace="de").entries
            assert [e.action for e in entries] in (["added"], ["superseded"]), entries
        for critique in NOT_READ:
            [entry] = bank.guidelines.learn(critique).entries
            assert entry.action == "ignored"
            assert entry.detail.startswith("not read: written in a language"), entry.detail
            assert "praise" not in entry.detail
        [praise] = bank.guidelines.learn("Merci beaucoup, c'est parfait.").entries
        assert "praise" in praise.detail
