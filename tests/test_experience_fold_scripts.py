"""Runs written in Chinese are told apart when folding; a folded run says so (hunt i18n, #1).

`_normalise_text` kept only `[a-z0-9]`: every Chinese task normalised to "", so offline "给客户
写道歉信" (write an apology letter to a customer) was folded into "迁移订单数据库" (migrate the
orders database), and Chinese feedback was no part of `content_key`, so with the model two runs
with different lessons shared one duplicate bucket and the second feedback was lost. The call
returned the old record's id and the MCP reply said `"note": ""`. In process, through a client of
another process that owns the root, and over MCP.
"""

from __future__ import annotations

import contextlib
import hashlib

import pytest

from owner_client import client_bank, owner_process
from skillbank import Skillbank
from skillbank.embeddings import MiniLMEmbedding
from skillbank.memories.experiences.indexing import _normalise_text, content_key
from skillbank.records import Experience
from test_no_model_writes import _no_model

RUNS = [("部署公司官网", "failure", "忘记配置HTTPS证书，浏览器报不安全。"),
        ("迁移订单数据库", "failure", "没有先备份，迁移失败后数据丢了。"),
        ("给客户写道歉信", "failure", "语气太生硬，客户更生气了。"),
        ("Bereitstellung der Firmenwebseite", "failure", "Zertifikat vergessen."),
        ("Migration der Bestelldatenbank", "failure", "Kein Backup gemacht.")]


def test_texts_of_every_script_normalise_to_their_words():
    assert _normalise_text("迁移订单数据库") != _normalise_text("给客户写道歉信")
    assert _normalise_text("Größe prüfen!") == _normalise_text("GRÖSSE  prüfen")
    assert _normalise_text("Deploy the App, then (re)start it!") == \
        "deploy the app then re start it"  # ASCII as before
    assert _normalise_text("🚀") and _normalise_text("🚀") != _normalise_text("🎉")


def test_chinese_feedback_is_part_of_the_content_key():
    def run(feedback: str) -> Experience:
        return Experience(id="exp-1", task="迁移用户表", outcome="failure", feedback=feedback)

    assert content_key(run("忘记锁表，写入丢失。")) != content_key(run("没有先备份，数据无法恢复。"))
    english = run("Lock the table before migrating.")
    old = hashlib.sha256("lock the table before migrating".encode()).hexdigest()[:16]
    assert content_key(english) == old  # English records keep the key they were indexed with


@contextlib.contextmanager
def _bank(tmp_path, remote: bool, embedding=None, *, minilm: bool = False):
    root = tmp_path / "root"
    root.mkdir()
    if remote:
        with owner_process(root, minilm=minilm), client_bank(root) as bank:
            yield bank
        return
    with Skillbank.open(root, embedding_function=embedding, include_bundled=False) as bank:
        yield bank


def _different_runs_stay_apart_and_a_repeat_says_it_is_folded(bank) -> None:
    ids = [bank.experiences.record(task=t, outcome=o, feedback=f) for t, o, f in RUNS]
    assert len(set(ids)) == len(RUNS)
    assert not any(i.folded or i.note for i in ids)
    again = bank.experiences.record(task=RUNS[1][0], outcome="failure", feedback=RUNS[1][2])
    assert again == ids[1] and again.folded
    assert again.note.startswith(f"folded into {ids[1]}")
    assert bank.experiences.get(ids[1]).duplicates == 1


@pytest.mark.parametrize("remote", [False, True], ids=["in-process", "client-of-owner"])
def test_without_a_model(tmp_path, monkeypatch, remote):
    missing = _no_model(tmp_path, monkeypatch)
    with _bank(tmp_path, remote, MiniLMEmbedding(model_dir=str(missing)), minilm=True) as bank:
        _different_runs_stay_apart_and_a_repeat_says_it_is_folded(bank)


@pytest.mark.parametrize("remote", [False, True], ids=["in-process", "client-of-owner"])
def test_with_the_model_different_chinese_feedback_is_two_records(tmp_path, minilm, remote):
    """MiniLM reads both tasks as [UNK]x5 (cosine ~1.0); the feedback differs, so they are not
    one run (the model-cosine guard for equal feedback is the folding module's)."""
    with _bank(tmp_path, remote, minilm, minilm=True) as bank:
        first = bank.experiences.record(task="迁移用户表", outcome="failure",
                                        feedback="忘记锁表，写入丢失。")
        second = bank.experiences.record(task="迁移订单表", outcome="failure",
                                         feedback="没有先备份，数据无法恢复。")
        assert first != second and not second.folded


async def test_the_mcp_reply_says_a_run_was_folded(tmp_path):
    from mcp import Client

    from skillbank.embeddings import HashEmbedding
    from skillbank.mcp_server import build_server

    run = {"task": "Deploy the Flask app to fly.io", "outcome": "failure",
           "feedback": "Bind the server to 0.0.0.0 so the proxy can reach it"}
    with Skillbank.open(tmp_path / "root", embedding_function=HashEmbedding(),
                        include_bundled=False) as bank:
        async with Client(build_server(bank, trusted=True)) as client:
            replies = [(await client.call_tool("record_experience", run)).structured_content
                       for _ in range(2)]
    assert replies[0]["note"] == ""
    assert replies[1]["id"] == replies[0]["id"]
    assert replies[1]["note"].startswith(f"folded into {replies[0]['id']}")
