"""Text in any Unicode normalisation is one text (hunt i18n #9, #11).

- #9: "Überprüfe immer die Größe der Tabelle vor dem Löschen." learnt once typed on macOS (NFD)
  and once elsewhere (NFC) was two active rules, "the same rule with other values".
- #11: a hand-written skill folder named in NFD ("résumé-writer" decomposed) was listed, but
  `load("résumé-writer")` (NFC) said "no skill named 'résumé-writer'".

In process and through a client of another process that owns the root.
"""

from __future__ import annotations

import contextlib
import unicodedata

import pytest

from conftest import write_skill
from owner_client import bank_for, client_bank, owner_process
from skillbank import Skillbank
from skillbank.embeddings import HashEmbedding

RULE = "Überprüfe immer die Größe der Tabelle vor dem Löschen."


def nfd(text: str) -> str:
    return unicodedata.normalize("NFD", text)


def _one_rule_one_task(bank) -> None:
    first = bank.guidelines.learn(nfd(RULE)).ids()
    again = bank.guidelines.learn(RULE)
    assert again.entries[0].action == "merged" and again.ids() == first
    told = bank.guidelines.learn("Review", rules=[{"text": nfd(RULE)}])
    assert told.ids() == first
    assert [g.text for g in bank.guidelines.list()] == [RULE]
    eid = bank.experiences.record(task=nfd("Größe der Bestelltabelle prüfen"), outcome="failure",
                                  feedback=nfd("Löschen ohne Prüfung."))
    stored = bank.experiences.get(eid)
    assert stored.task == "Größe der Bestelltabelle prüfen" and stored.feedback == "Löschen ohne Prüfung."


@pytest.mark.parametrize("remote", [False, True], ids=["in-process", "client-of-owner"])
def test_nfd_and_nfc_text_is_one_text(tmp_path, remote):
    with bank_for(tmp_path, remote) as bank:
        _one_rule_one_task(bank)


@contextlib.contextmanager
def _bank_with_skills(tmp_path, remote: bool):
    skills = tmp_path / "skills"
    write_skill(skills, nfd("résumé-writer"), "Write a résumé (CV) for a job application.")
    root = tmp_path / "root"
    root.mkdir()
    if remote:
        with owner_process(root, (skills,)), client_bank(root) as bank:
            yield bank
        return
    with Skillbank.open(root, skill_roots=[skills], embedding_function=HashEmbedding(),
                        include_bundled=False) as bank:
        yield bank


@pytest.mark.parametrize("remote", [False, True], ids=["in-process", "client-of-owner"])
def test_a_skill_folder_named_in_nfd_loads_by_its_nfc_name(tmp_path, remote):
    with _bank_with_skills(tmp_path, remote) as bank:
        assert bank.skills.names() == [nfd("résumé-writer")]  # the folder's name, as it is
        skill = bank.skills.load("résumé-writer")
        assert "résumé" in unicodedata.normalize("NFC", skill.description)
