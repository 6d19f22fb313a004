"""Keyword search reads words of every script (hunt i18n, #4).

The tokenizer kept only `[a-z0-9]`: a skill described as "Проверка суммы счёта и сверка с
договором." was not found by the query "Проверка суммы счёта" (its own words), the same for
Arabic and Greek, offline recall missed an experience recorded with exactly the asked task, and
"Größe prüfen" was read as `gr`, `pr`, `fen`. In process and through a client of another process
that owns the root (the hash embedding reads only a-z0-9, so the keyword side decides here).
"""

from __future__ import annotations

import contextlib
import re

import pytest

from owner_client import bank_for, client_bank, owner_process
from skillbank import Skillbank
from skillbank.embeddings import HashEmbedding, MiniLMEmbedding
from test_no_model_writes import _no_model
from skillbank.keyword import tokenize

SKILLS = {
    "invoice-ru": ("Проверка суммы счёта и сверка с договором.", "Проверка суммы счёта"),
    "invoice-ar": ("التحقق من مبلغ الفاتورة ومطابقته مع العقد.", "التحقق من مبلغ الفاتورة"),
    "invoice-el": ("Έλεγχος του ποσού του τιμολογίου με τη σύμβαση.", "Έλεγχος του ποσού"),
    "tables-de": ("Größe der Tabelle prüfen, bevor man löscht.", "Tabelle Größe prüfen"),
}


@pytest.mark.parametrize("text, words", [
    ("Проверка счёта", ["проверка", "счёта"]),
    ("التحقق من الفاتورة", ["التحقق", "من", "الفاتورة"]),
    ("Größe prüfen", ["grösse", "prüfen"]),  # casefold: ß is ss, as in "Grösse"
    ("हिन्दी भाषा", ["हिन्दी", "भाषा"]),  # vowel signs are marks, not word breaks
    ("ＡＢＣ ﬁle", ["abc", "file"]),  # NFKC: full-width letters and ligatures
])
def test_words_of_every_script_are_tokens(text, words):
    assert tokenize(text) == words


def test_the_same_word_in_nfd_and_nfc_is_one_token():
    assert tokenize("Pru\u0308fung") == tokenize("Prüfung")


def test_snake_case_and_cjk_bigrams_are_as_before():
    assert tokenize("snake_case") == ["snake", "case"]
    assert tokenize("迁移用户表 and abc中文def") == ["abc", "def", "迁移", "移用", "用户", "户表",
                                                 "中文"]


@pytest.mark.parametrize("text", [
    "Deploy the billing service to staging, then run the smoke tests!",
    "Don't log passwords; use bound parameters (PEP-249) in SQL_queries.",
])
def test_ascii_text_gives_the_words_it_gave(text):
    old = [w for w in re.findall(r"[a-z0-9]+", text.lower()) if len(w) > 1]
    assert tokenize(text) == tokenize(" ".join(old))  # stop words and stems aside, the same
    assert all(w.isascii() for w in tokenize(text))


def _save_and_find(bank) -> None:
    for name, (description, _) in SKILLS.items():
        bank.skills.save(name, description, "# Steps\n")
    for name, (_, query) in SKILLS.items():
        assert name in [h.name for h in bank.skills.search(query, k=2)], query


@pytest.mark.parametrize("remote", [False, True], ids=["in-process", "client-of-owner"])
def test_a_skill_is_found_by_its_own_words(tmp_path, remote):
    with bank_for(tmp_path, remote) as bank:
        _save_and_find(bank)


@pytest.mark.parametrize("remote", [False, True], ids=["in-process", "client-of-owner"])
def test_offline_recall_finds_the_task_recorded_in_russian(tmp_path, monkeypatch, remote):
    """No model (keyword mode), as the hunt ran it: recall of the exact task found nothing."""
    missing = _no_model(tmp_path, monkeypatch)
    root = tmp_path / "root"
    root.mkdir()
    task = "Перенос таблицы заказов"
    with contextlib.ExitStack() as stack:
        if remote:
            stack.enter_context(owner_process(root, minilm=True))
            bank = stack.enter_context(client_bank(root))
        else:
            bank = stack.enter_context(Skillbank.open(
                root, embedding_function=MiniLMEmbedding(model_dir=str(missing)),
                include_bundled=False))
        bank.experiences.record(task="Deploy the billing service", outcome="success")
        bank.experiences.record(task=task, outcome="failure", feedback="Забыли про блокировку.")
        assert [h.record.task for h in bank.experiences.recall(task, k=2)] == [task]


def test_a_root_indexed_by_the_ascii_tokenizer_rebuilds_only_its_keyword_side(tmp_path,
                                                                               monkeypatch):
    """A root written before this change opens, rebuilds BM25 from the stored texts (its saved
    snapshot names tokenizer v3) without embedding anything again, and answers in Russian."""
    import skillbank.keyword as keyword

    root = tmp_path / "root"
    with monkeypatch.context() as old:
        old.setattr(keyword, "TOKENIZER_VERSION", 3)
        old.setattr(keyword, "word_pattern", lambda: re.compile(r"[a-z0-9]+"))
        with Skillbank.open(root, embedding_function=HashEmbedding(),
                            include_bundled=False) as bank:
            bank.skills.save("invoice-ru", SKILLS["invoice-ru"][0], "# Steps\n")
            bank.skills.save("deploy", "Deploy the billing service to staging.", "# Steps\n")
            assert bank.skills.search("Проверка суммы счёта", k=2) == []  # what users met
    embedding = HashEmbedding()
    with Skillbank.open(root, embedding_function=embedding, include_bundled=False) as bank:
        found = bank.skills.search("Проверка суммы счёта", k=2)
        assert [h.name for h in found][:1] == ["invoice-ru"]
        assert embedding.calls == 1  # the query; no stored text embedded again


def test_rules_that_differ_in_a_vowel_sign_are_not_the_same_wording():
    """A rule's dedup key reads words as the keyword side does: with `[^\\W_]+` "हर दिन लिखें"
    (write every day) and "हर दीन लिखें" (a different word) both keyed "हर द न ल ख", and the
    distiller called the second "the same rule" without reading it."""
    from skillbank.distill import RuleDistiller
    from skillbank.distill.text import _key

    assert _key("हर दिन लिखें") != _key("हर दीन लिखें")
    assert _key("Never put SQL in f-strings; use bound_params!") == \
        "never put sql in f strings use bound params"
    assert RuleDistiller().relate("हर दीन लिखें", "हर दिन लिखें", similarity=0.2) != "same"
