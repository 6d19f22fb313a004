"""A run in a script the model does not read is recalled by the tokens it shares with a request,
however long its feedback; a request about another task recalls nothing.

hunt-upgrade #2 (session 23): `recall("リリースノートを日本語に翻訳する")` answered [] even with
`min_score=0` once the run's feedback was Japanese too and four other runs were in the bank. With
no dense evidence for such a task, recall needed a BM25 share of 0.15, and the feedback's
character pairs made the record long: its own task scored 0.13. The same share let requests
about other tasks in: sharing a pair or two ("する") with a run's text scored up to 0.27, as the
best possible score counted only the request's pairs some record holds. Recall now counts the
tokens a request shares with a record (`recall.MIN_SHARED_TOKENS`). With the real model (its
judgement of "unread" is what takes the dense side away), in process and through a client of
another process that owns the root.
"""

from __future__ import annotations

import pytest

from owner_client import bank_for

OTHER_RUNS = [
    dict(task="Migrate the users table to the new schema", outcome="failure",
         feedback="Forgot to lock the table; writes were lost.",
         lessons=["Lock the table before migrating."], tags=["database"]),
    dict(task="Migrate the orders table", outcome="success",
         feedback="Took a backup first and ran in a transaction. Worked well."),
    dict(task="Übersetze die Release-Notes ins Deutsche", outcome="success",
         feedback="Bitte immer die Sie-Form verwenden. Umlaute nicht ersetzen (ä, ö, ü, ß)."),
    dict(task="Rotate the API keys for the payment service", outcome="success",
         feedback="Revoke the old keys only after every service reloads."),
]
JAPANESE_RUN = dict(task="リリースノートを日本語に翻訳する", outcome="partial",
                    feedback="敬語を使ってください。技術用語は英語のままにしてください。")


@pytest.mark.parametrize("remote", [False, True], ids=["in-process", "client-of-owner"])
def test_a_japanese_run_with_japanese_feedback_is_recalled_among_others(tmp_path, minilm, remote):
    with bank_for(tmp_path, remote, minilm) as bank:
        ids = [bank.experiences.record(**run) for run in OTHER_RUNS]
        assert bank.experiences.recall(OTHER_RUNS[0]["task"], k=1, count_use=False)
        # Written after a search built the keyword index: its tokens are read from the newer
        # part of the index, as a run recorded during a session is.
        japanese = bank.experiences.record(**JAPANESE_RUN)
        for run, run_id in zip(OTHER_RUNS + [JAPANESE_RUN], ids + [japanese]):
            hits = bank.experiences.recall(run["task"], k=3, count_use=False)
            assert hits and hits[0].id == run_id, run["task"]
        for request in ("リリースノートの日本語訳を作る",  # a paraphrase
                        "リリースノートを日本語に翻訳する。来週のリリースまでに終わらせたいので、"
                        "注意点を教えてください。",  # the task and a sentence more
                        "技術用語は英語のまま"):  # the words of its feedback
            hits = bank.experiences.recall(request, k=3, count_use=False)
            assert [hit.id for hit in hits] == [japanese], request


CJK_RUNS = [
    ("ユーザーテーブルを新しいスキーマに移行する",
     "移行前にテーブルをロックするのを忘れて、書き込みが失われた。次回は必ずバックアップを取ってから実行すること。"),
    ("決済サービスのAPIキーをローテーションする",
     "すべてのサービスが設定を再読み込みした後で古いキーを無効にすること。早すぎると決済が止まる。"),
    ("週次レポートをメールで送信する",
     "添付ファイルのサイズが大きすぎて送信に失敗した。共有フォルダのリンクを送る方が良い。"),
    ("迁移用户表到新的数据库", "迁移前没有锁表，导致部分写入丢失。下次先备份再执行，并在低峰期操作。"),
    ("为订单服务编写单元测试", "覆盖率从百分之四十提高到百分之八十，模拟外部依赖时要小心，不要模拟数据库。"),
    ("사용자 테이블을 새 스키마로 마이그레이션하기",
     "마이그레이션 전에 테이블을 잠그지 않아서 쓰기가 손실되었습니다. 다음에는 백업을 먼저 하세요."),
]
#: Requests about other tasks, each sharing a character pair or a word with some run above.
UNRELATED = ["新入社員のオンボーディング資料を作成する",  # onboarding material for new hires
             "画像のサイズを一括で変更する",  # resize images in bulk
             "サーバーの証明書を更新する",  # renew the server certificate
             "编写新功能的产品文档",  # write product docs for a new feature
             "设置每日自动备份",  # set up a daily automatic backup
             "고객 문의 메일에 답장하기"]  # answer customer emails


@pytest.mark.parametrize("remote", [False, True], ids=["in-process", "client-of-owner"])
def test_a_request_about_another_task_recalls_no_cjk_run(tmp_path, minilm, remote):
    with bank_for(tmp_path, remote, minilm) as bank:
        ids = [bank.experiences.record(task=task, outcome="partial", feedback=feedback)
               for task, feedback in CJK_RUNS]
        for (task, _feedback), run_id in zip(CJK_RUNS, ids):
            assert [h.id for h in bank.experiences.recall(task, k=3, count_use=False)] == [run_id]
        recalled = {request: [hit.record.task for hit in bank.experiences.recall(
                        request, k=3, count_use=False, min_score=0)] for request in UNRELATED}
        assert recalled == {request: [] for request in UNRELATED}
