"""A correction said in German or French supersedes the rule it corrects; it is never merged.

Users met "Bitte gib Zitate ab sofort immer im MLA-Format an." after "Bitte gib Zitate immer im
APA-Format an." merged into the APA rule ("a paraphrase ... sharing 'bitt', 'gib', 'imm',
'zitat'": German function words), so the agent kept being told APA; "Désormais, écris toujours
les messages de commit en français." merged into "... en anglais."; and "Verwende niemals pytest
für die Tests." kept active beside "Verwende immer pytest für die Tests." (hunt-i18n #3). In
process and through a client of another process that owns the root.
"""

from __future__ import annotations

import pytest

from owner_client import bank_for
from skillbank.distill.foreign_changes import foreign_overrule
from skillbank.memories.guidelines.decisions import merge_evidence

CORRECTIONS = [
    ("Bitte gib Zitate immer im APA-Format an.",
     "Bitte gib Zitate ab sofort immer im MLA-Format an."),
    ("Écris toujours les messages de commit en anglais.",
     "Désormais, écris toujours les messages de commit en français."),
    ("Verwende immer pytest für die Tests.", "Verwende niemals pytest für die Tests."),
    ("Verwende immer Tabs für die Einrückung.",
     "Verwende ab jetzt immer vier Leerzeichen für die Einrückung."),
    ("Utilise toujours unittest pour les tests.",
     "Utilise toujours pytest au lieu de unittest pour les tests."),
]
TWO_RULES = [
    ("Bitte gib Zitate immer im APA-Format an.", "Bitte gib Zitate immer mit Seitenzahl an."),
    ("Verwende niemals globale Variablen in den Modulen.",
     "Verwende niemals print in den Modulen."),
    ("Verwende immer globale Variablen in den Modulen.", "Verwende niemals print in den Modulen."),
    ("Écris toujours les messages de commit en anglais.",
     "Écris toujours les messages de commit au présent."),
    # "plus de" in a written instruction is "more", not "no more" (review, session 22: it
    # retired the different rule before it)
    ("N'écris jamais de tests pour les getters triviaux.",
     "Écris plus de tests pour les cas limites."),
    ("Ajoute des commentaires aux fonctions publiques.",
     "Ajoute plus de commentaires dans le code complexe."),
]


@pytest.mark.parametrize("old, new", CORRECTIONS)
def test_a_correction_overrules_the_rule_it_corrects(old, new):
    assert foreign_overrule(new, old, new)


@pytest.mark.parametrize("old, new", TWO_RULES)
def test_two_instructions_of_one_setting_do_not_overrule(old, new):
    assert foreign_overrule(new, old, new) is None


@pytest.mark.parametrize("old, new", [
    ("Use British spelling in the user docs.", "Use American spelling in the user docs."),
    ("Always write tests first.", "Never write tests first."),
])
def test_english_is_not_read_here(old, new):
    assert foreign_overrule(new, old, new) is None


def test_a_rule_announcing_a_change_is_no_paraphrase():
    members = [(CORRECTIONS[0][0], None, None)]
    assert merge_evidence(CORRECTIONS[0][1], members, 1.0, dense=0.9) is None


@pytest.mark.parametrize("remote", [False, True], ids=["in-process", "client-of-owner"])
def test_corrections_supersede_and_two_rules_stay(tmp_path, minilm, remote):
    with bank_for(tmp_path, remote, minilm) as bank:
        for i, (old, new) in enumerate(CORRECTIONS):
            first = bank.guidelines.learn(old, namespace=f"c{i}").entries[0]
            second = bank.guidelines.learn(new, namespace=f"c{i}").entries[0]
            assert (second.action, second.superseded_id) == ("superseded", first.guideline_id)
            assert [g.text for g in bank.guidelines.list(namespace=f"c{i}", status="active")] == [new]
        for i, (one, other) in enumerate(TWO_RULES):
            for rule in (one, other):
                assert bank.guidelines.learn(rule, namespace=f"t{i}").entries[0].action == "added"
