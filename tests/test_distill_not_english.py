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


# Review of session 20: praise longer than eight words and plain statements were kept as rules.
# A sentence in another language is kept only as an instruction, and never with a praise word.
@pytest.mark.parametrize("remark", [
    "Das ist eine schöne Arbeit, das gefällt mir.",
    "Me encanta el resumen, está muy claro y conciso.",
    "Danke für die schnelle Antwort und die gute Zusammenfassung der Ergebnisse.",
    "Wir sind letztes Jahr nach Berlin gezogen.",
    "Il report è molto chiaro e ben scritto, complimenti a tutto il team.",
    "Het rapport is echt goed geworden, dank je wel voor de moeite.",
    # fresh wordings
    "Die Folien sind wirklich schön geworden und die Zahlen stimmen.",
    "Nous avons déménagé le bureau à Lyon en mars.",
    "El equipo está en Madrid y la reunión fue el lunes.",
])
def test_praise_and_statements_in_another_language_are_no_rule(remark):
    assert all(not actionable for _, actionable in _read(remark)), _read(remark)


@pytest.mark.parametrize("sentence", [
    "Verwenden Sie in Tabellen die Einheit in der Kopfzeile.",
    "No incluyas datos personales en los registros.",
    "Il faut citer la source de chaque chiffre du rapport.",
    "Non usare abbreviazioni nei titoli delle sezioni.",
])
def test_an_imperative_in_another_language_is_still_kept(sentence):
    assert _read(sentence) == [(sentence, True)]
