"""Two sentences are two rules whatever letter, emoji or full stop stands between them.

Users met each of these critiques learnt as ONE rule, which cannot be voted on, superseded or
retired apart: "... an. Überprüfe immer ...", "... d'abord. Évite ...", "Use bound parameters
for SQL. 👍 Never log passwords." and "...SQL。Never log passwords。" (stored with "。." at its
end): the splitter wanted an ASCII capital after ". " (hunt-i18n #6). In process and through a
client of another process that owns the root.
"""

from __future__ import annotations

import pytest

from owner_client import bank_for
from skillbank.distill.sentences import split_sentences

SPLIT = [
    ("Bitte gib Zitate immer im APA-Format an. Überprüfe immer die Größe der Tabelle vor dem "
     "Löschen.", ["Bitte gib Zitate immer im APA-Format an.",
                  "Überprüfe immer die Größe der Tabelle vor dem Löschen."]),
    ("Écris toujours les tests d'abord. Évite les variables globales dans le code.",
     ["Écris toujours les tests d'abord.", "Évite les variables globales dans le code."]),
    ("Use bound parameters for SQL. 👍 Never log passwords.",
     ["Use bound parameters for SQL.", "Never log passwords."]),
    ("Use bound parameters for SQL。Never log passwords。",
     ["Use bound parameters for SQL。", "Never log passwords。"]),
    ("请使用参数化查询。不要记录密码。", ["请使用参数化查询。", "不要记录密码。"]),
    ("Use tests. ✅ Always lint. 🚀🚀 Ship it.", ["Use tests.", "Always lint.", "Ship it."]),
]
KEPT_WHOLE = [
    "Use X (e.g. Y) for the API.", "See `foo.bar` in the docs.", "Version 3.5 is out.",
    "Use bound parameters for SQL 👍 never log them.", "Wait... then deploy.",
]


@pytest.mark.parametrize("text, sentences", SPLIT)
def test_sentences_of_any_script_are_split(text, sentences):
    assert split_sentences(text) == sentences


@pytest.mark.parametrize("text", KEPT_WHOLE)
def test_what_is_no_sentence_end_stays(text):
    assert split_sentences(text) == [text]


@pytest.mark.parametrize("remote", [False, True], ids=["in-process", "client-of-owner"])
def test_two_rules_learnt_apart(tmp_path, remote):
    with bank_for(tmp_path, remote) as bank:
        texts = {e.text for e in bank.guidelines.learn(
            "Use bound parameters for SQL。Never log passwords。").entries}
        assert texts == {"Use bound parameters for SQL.", "Never log passwords."}
        texts = {e.text for e in bank.guidelines.learn(
            "Always write tests first. 👍 Évite les variables globales dans le code.",
            namespace="fr").entries}
        assert texts == {"Always write tests first.",
                         "Évite les variables globales dans le code."}
