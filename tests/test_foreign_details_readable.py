"""Detail messages and "about" words read as the user wrote them, in any script.

Users met detail messages quoting 'ffentliche funktionen', 'f r randf lle' and 'berpr' (the
accented letters dropped), `when_to_use` lists made of function words ("about mets, jamais,
mots, passe", "about bitte, gib, zitate, immer"), and a 1,400-character Chinese rule whose
`when_to_use` was the whole run, 1,427 characters (hunt-i18n #10). In process and through a
client of another process that owns the root.
"""

from __future__ import annotations

import pytest

from owner_client import bank_for
from skillbank.distill.topics import MAX_KEYWORD, _when_to_use
from skillbank.memories.guidelines.decisions import other_values


def test_other_values_quote_whole_words():
    assert other_values("Bitte schreibe Tests immer für Randfälle.",
                        "Bitte schreibe Tests immer mit pytest.") == [("für randfälle",
                                                                       "mit pytest")]
    assert other_values("Label the bravo dashboards with owner golf.",
                        "Label the alpha dashboards with owner foxtrot.") == [
        ("bravo", "alpha"), ("golf", "foxtrot")]


def test_about_words_are_no_function_words_and_no_whole_run():
    assert _when_to_use("Bitte gib Zitate immer im APA-Format an.", "general", None).endswith(
        "about zitate, apa-format")
    assert "jamais" not in _when_to_use("Ne mets jamais de mots de passe dans le code.",
                                        "general", None)
    assert "about" in _when_to_use("Always label the dashboards with an owner.", "general", None)
    long = _when_to_use("请" * 1400, "general", None)
    assert len(long) < 100 and "请" * MAX_KEYWORD in long


@pytest.mark.parametrize("remote", [False, True], ids=["in-process", "client-of-owner"])
def test_learnt_details_quote_accented_words(tmp_path, remote):
    with bank_for(tmp_path, remote) as bank:
        bank.guidelines.learn("Bitte schreibe Tests immer mit pytest.")
        [entry] = bank.guidelines.learn("Bitte schreibe Tests immer für Randfälle.").entries
        assert entry.action == "added"
        assert "'für randfälle' for 'mit pytest'" in entry.detail, entry.detail
        rule = bank.guidelines.get(entry.guideline_id)
        assert "bitte" not in rule.when_to_use and "immer" not in rule.when_to_use
