"""Rules the model does not read are never merged on its cosine.

Users met four different Chinese rules ("no f-strings in SQL", "commit messages in Chinese",
"functions at most 40 lines", "docstrings on public functions"), each given alone, merged into
the first as "a paraphrase by meaning: model cosine 0.78 >= 0.72"; only the first was served.
"インデントはスペース四つ" (indent with four spaces) was merged into "変数名はキャメルケース"
(camelCase variable names) the same way (hunt-i18n #2). MiniLM reads most CJK characters as
[UNK], so any two such rules look alike to it. They are matched by words now, as without a
model. In process and through a client of another process that owns the root.
"""

from __future__ import annotations

import pytest

from owner_client import bank_for
from skillbank.distill import RuleDistiller
from skillbank.unread import mostly_unread

CHINESE = ["不要在SQL中使用f-string，请使用参数化查询。",
           "提交信息必须用中文书写。",
           "函数不得超过四十行。",
           "所有公共函数都要写文档字符串。"]
JAPANESE = ["変数名はキャメルケースで書く。", "インデントはスペース四つ。"]


@pytest.mark.parametrize("text", CHINESE + JAPANESE + [
    "Проверка суммы счёта и сверка с договором.", "التحقق من مبلغ الفاتورة"])
def test_text_in_a_script_the_model_does_not_read_is_unread(text):
    assert mostly_unread(text)


@pytest.mark.parametrize("text", [
    "Use bound parameters for SQL. 👍 Never log passwords.",
    "Überprüfe immer die Größe der Tabelle vor dem Löschen.",
    "Écris toujours les messages de commit en français.",
    "Keep functions under 40 lines.", "",
    # emoji and symbols are neither read nor unread words: two after an English task made it
    # "mostly unread" and its block empty (review, session 22)
    "Ship the release notes 🚀🔥", "x²+y²", "🚀🔥",
])
def test_latin_text_is_read(text):
    assert not mostly_unread(text)


def test_two_rules_with_no_ascii_word_are_not_one_wording():
    # "" == "" made any two of them "the same" to the distiller, at any similarity.
    assert RuleDistiller().relate(CHINESE[2], CHINESE[1], similarity=0.3) != "same"


@pytest.mark.parametrize("remote", [False, True], ids=["in-process", "client-of-owner"])
def test_different_cjk_rules_stay_apart(tmp_path, minilm, remote):
    with bank_for(tmp_path, remote, minilm) as bank:
        for i, rule in enumerate(CHINESE):
            entry = bank.guidelines.learn(f"代码审查意见 {i}", rules=[{"text": rule}]).entries[0]
            assert entry.action == "added", entry
        for rule in JAPANESE:
            assert bank.guidelines.add(rule).action == "added"
        assert sorted(g.text for g in bank.guidelines.list()) == sorted(CHINESE + JAPANESE)
        # The very same rule again is still one rule.
        again = bank.guidelines.learn("代码审查意见 9", rules=[{"text": CHINESE[1]}]).entries[0]
        assert again.action == "merged", again
        assert len(bank.guidelines.list()) == len(CHINESE + JAPANESE)


@pytest.mark.parametrize("remote", [False, True], ids=["in-process", "client-of-owner"])
def test_a_cjk_task_is_served_by_its_words_not_the_cosine(tmp_path, minilm, remote):
    # "Write an apology letter to a customer" was served "commit messages in Chinese" at
    # cosine 0.63: any two texts the model does not read look alike to it.
    with bank_for(tmp_path, remote, minilm) as bank:
        for i, rule in enumerate(CHINESE[:3]):
            bank.guidelines.learn(f"代码审查意见 {i}", rules=[{"text": rule}])
        assert bank.guidelines.search("给客户写一封道歉信") == []
        assert not bank.context_for("给客户写一封道歉信").guidelines
        found = bank.guidelines.search("写一个查询订单的SQL函数")  # shares "SQL" and "查询"
        assert [h.record.text for h in found][:1] == [CHINESE[0]]
