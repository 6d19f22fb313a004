"""Runs the model does not read are folded only when they repeat word for word.

Users met `record(task="迁移用户表", feedback="忘记锁表，写入丢失。")` then `record(task="迁移订单表",
feedback="没有先备份，数据无法恢复。")` (migrate the users / orders table, other feedback) returning
the same id: MiniLM reads both as five [UNK], cosine 0.9999995, and the second run's feedback
was lost; `recall("迁移订单表")` answered with the users-table run (hunt-i18n #1). In process and
through a client of another process that owns the root.
"""

from __future__ import annotations

import pytest

from owner_client import bank_for

RUNS = [("迁移用户表", "failure", "忘记锁表，写入丢失。"),
        ("迁移订单表", "failure", "没有先备份，数据无法恢复。"),
        ("部署网站", "success", None),
        ("部署数据库", "success", None)]


@pytest.mark.parametrize("remote", [False, True], ids=["in-process", "client-of-owner"])
def test_different_cjk_runs_are_kept_and_recalled_by_their_words(tmp_path, minilm, remote):
    with bank_for(tmp_path, remote, minilm) as bank:
        ids = [bank.experiences.record(task=task, outcome=outcome, feedback=feedback)
               for task, outcome, feedback in RUNS]
        assert len(set(ids)) == len(RUNS)
        kept = {e.task: (e.feedback, e.duplicates) for e in bank.experiences.list()}
        assert kept == {task: (feedback, 0) for task, _outcome, feedback in RUNS}
        hits = bank.experiences.recall("迁移订单表", k=2)
        assert hits and hits[0].record.task == "迁移订单表"


@pytest.mark.parametrize("remote", [False, True], ids=["in-process", "client-of-owner"])
def test_a_word_for_word_repeat_is_still_folded(tmp_path, minilm, remote):
    with bank_for(tmp_path, remote, minilm) as bank:
        run = dict(task="部署 web 网站到生产环境", outcome="failure", feedback="forgot the TLS cert")
        first = bank.experiences.record(**run)
        assert bank.experiences.record(**run) == first
        assert [e.duplicates for e in bank.experiences.list()] == [1]
