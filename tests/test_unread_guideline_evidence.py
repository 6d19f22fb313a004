"""A task the model does not read is served a rule only when it shares words with it, not one
character pair.

Session 23: guideline search had, for a task mostly in a script the model does not read
(`skillbank.unread`), no dense side and a BM25 share of 0.15 as its only evidence. The share's
best possible score counts only the task's tokens some rule holds, so a Japanese request about
anything that ends in "する" (to do) scored 0.30 against a rule whose critique says "表示すること",
and "给客户写一封道歉信" (write an apology letter to a customer) scored 0.22 against the SQL rule
learnt on "写一个按用户查询订单的函数" (they share 写一): 12 of 27 requests about other things were
served a rule, in the memory block too (`benchmarks/unread_guidelines.py`). A rule now has to
hold at least two of the task's tokens (`search.UNREAD_MIN_HELD`). With the real model (its
reading decides nothing here, its absence does: "unread" takes the dense side away), in process
and through a client of another process that owns the root.
"""

from __future__ import annotations

import pytest

from owner_client import bank_for
from skillbank import Skillbank
from skillbank.embeddings import HashEmbedding
from test_chroma_outage import ChromaServer, own_chroma  # noqa: F401 - fixture

#: (rule, the critique it was learnt from, the task of that critique, a task it applies to)
RULES = [
    ("エラーメッセージは日本語で表示すること。",
     "ユーザーから英語のエラーメッセージが分からないという問い合わせが多かった。エラーメッセージは日本語で"
     "表示すること。技術的な詳細はログに出してください。",
     "ログイン画面のエラー処理を実装する", "フォームの入力チェックのエラーメッセージを作る"),
    ("本番環境へのデプロイは金曜日に行わない。",
     "金曜日の夕方にデプロイして週末に障害が起きたが、対応できる人がいなかった。本番環境へのデプロイは"
     "金曜日に行わない。",
     "新機能を本番環境にリリースする", "本番環境に新しいバージョンをデプロイする"),
    ("不要在SQL中使用f-string，请使用参数化查询。",
     "你在查询订单的函数里用f-string拼接了SQL，这会导致SQL注入。不要在SQL中使用f-string，请使用参数化查询。",
     "写一个按用户查询订单的函数", "写一个按日期查询订单的SQL函数"),
    ("変数名はキャメルケースで書く。", None, None, "新しいクラスの変数名を決める"),
]
ENGLISH = ["Write commit messages in the imperative mood.", "Never log passwords or tokens."]
#: Requests about other things, each sharing one character pair with a rule above ("する",
#: "写一"): all of them were served a rule.
UNRELATED = ["プリンターのトナーを交換する",  # replace the printer's toner
             "年末調整の書類を提出する",  # hand in the year-end tax papers
             "画像のサイズを一括で変更する",  # resize images in bulk
             "给客户写一封道歉信"]  # write an apology letter to a customer


def _learn(bank) -> list[str]:
    ids = []
    for rule, critique, task, _applies in RULES:
        if critique is None:
            entry = bank.guidelines.add(rule)
        else:
            entry = bank.guidelines.learn(critique, task=task, rules=[{"text": rule}]).entries[0]
        assert entry.action == "added", entry
        ids.append(entry.guideline_id)
    for rule in ENGLISH:
        bank.guidelines.add(rule)
    return ids


@pytest.mark.parametrize("remote", [False, True], ids=["in-process", "client-of-owner"])
def test_a_request_sharing_one_pair_with_a_rule_is_served_no_rule(tmp_path, minilm, remote):
    with bank_for(tmp_path, remote, minilm) as bank:
        ids = _learn(bank)
        for (rule, _critique, _task, applies), gid in zip(RULES, ids):
            assert [h.id for h in bank.guidelines.search(rule, k=3)][:1] == [gid], rule
            assert gid in [h.id for h in bank.guidelines.search(applies, k=3)], applies
            assert gid in [h.id for h in bank.context_for(applies).guidelines], applies
        served = {request: ([h.record.text for h in bank.guidelines.search(request, k=5)],
                            [h.record.text for h in bank.context_for(request).guidelines])
                  for request in UNRELATED}
        assert served == {request: ([], []) for request in UNRELATED}


def test_while_chroma_is_down_a_request_sharing_one_pair_is_served_no_rule(tmp_path,
                                                                          own_chroma):
    # The records' fallback search: the index's own keyword side in this process, the same
    # judgement. In process only: an owner process here would need the server too.
    bank = Skillbank.open(tmp_path / "root", embedding_function=HashEmbedding(),
                          include_bundled=False, chroma_url=own_chroma.url)
    try:
        ids = _learn(bank)
        own_chroma.stop()
        bank.guidelines.add("ログは必ずJSON形式で出力する。")  # kept in its file; the index is behind
        down = bank.guidelines.search(RULES[0][3], k=3)
        assert down.note.startswith("the Chroma server") and ids[0] in [h.id for h in down]
        for request in UNRELATED:
            assert [h.record.text for h in bank.guidelines.search(request, k=5)] == [], request
    finally:
        bank.close()
