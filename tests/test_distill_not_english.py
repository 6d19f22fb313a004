"""A critique in another language is kept as written, not reported as praise.

Users met "Bitte gib Zitate immer im APA-Format an.", "Ajoute toujours un attribut aria-label
..." and "No incluyas cláusulas de arbitraje ..." each ignored as "no reusable advice (praise
...)": no rule, no warning (learning-loop hunt, session 20, defect 5). The model-free
distiller cannot rewrite them, but the agent reading the memory can read them.
"""

from __future__ import annotations

import pytest

from skillbank import Skillbank
from skillbank.distill import RuleDistiller
from skillbank.distill.language import not_english
from skillbank.embeddings import HashEmbedding


def _read(critique: str) -> list[tuple[str, bool]]:
    return [(r.text, r.actionable) for r in RuleDistiller().rules_from_critique(critique)]


@pytest.mark.parametrize("sentence", [
    "Schreib die Commit-Nachrichten bitte immer auf Englisch.",
    "N'utilise jamais de couleurs vives pour les graphiques.",
    "Responde siempre en el idioma del cliente.",
    "Usa sempre il congiuntivo nelle lettere formali.",
    "Gebruik altijd de actieve vorm in de handleiding.",
])
def test_an_instruction_in_another_language_is_kept_as_written(sentence):
    assert _read(sentence) == [(sentence, True)]


@pytest.mark.parametrize("praise", [
    "Super, danke, genau so!", "Merci beaucoup, c'est parfait.", "¡Muy bien, gracias!",
])
def test_praise_in_another_language_is_no_rule(praise):
    assert all(not actionable for _, actionable in _read(praise))


@pytest.mark.parametrize("sentence", [
    "Keep one message per slide and use the template.",
    "Great answer, thanks! Nice work on the plots.",
    "Use the same font as the logo, plus a bold weight for titles.",
    "Sign off as the Acme team, not with your own name.",
])
def test_english_is_not_taken_for_another_language(sentence):
    assert not not_english(sentence)


def test_a_german_critique_is_learnt_and_served(tmp_path):
    with Skillbank.open(tmp_path / "root", embedding_function=HashEmbedding(),
                        include_bundled=False) as bank:
        report = bank.guidelines.learn("Bitte nenne immer die Quelle der Zahlen im Bericht.",
                                       task="Write the quarterly sales report")
        assert [(e.action, e.text) for e in report.entries] == [
            ("added", "Bitte nenne immer die Quelle der Zahlen im Bericht.")], report
