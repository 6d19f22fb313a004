"""A chat model that never answers must not stall the bank (hunt-llm #3, session 32).

Before: `LLMDistiller` called the model with no timeout, inside the bank's one background
writer, so a hung model held every later job: runs recorded after it never were, `close()`
never returned, and interpreter exit dropped the queued runs with the daemon thread without a
word. Now a model call is abandoned after `timeout` (SKILLBANK_DISTILLER_TIMEOUT) and the
model-free distiller answers, saying why; at exit a waiting call gives up at once, so the
queued runs are written; and a write exit cannot finish is logged.
"""

from __future__ import annotations

import os
import subprocess
import sys
import textwrap
import threading

import pytest

from owner_client import bank_for
from skillbank import Skillbank
from skillbank.distill import LLMDistiller
from skillbank.embeddings import HashEmbedding

RELEASED = threading.Event()  # set at the end of each test: the abandoned threads finish


@pytest.fixture(autouse=True)
def release_the_model():
    RELEASED.clear()
    yield
    RELEASED.set()


def hanging(prompt: str) -> str:
    RELEASED.wait()
    return "[]"


def test_a_hung_model_call_falls_back_to_the_rules_and_says_why(monkeypatch):
    """Before: rules_from_critique never returned."""
    monkeypatch.setenv("SKILLBANK_DISTILLER_TIMEOUT", "0.3")
    distiller = LLMDistiller(hanging)
    assert distiller.timeout == 0.3
    rules = distiller.rules_from_critique("Never put SQL in f-strings.", task="write a query")
    assert rules.distilled_by == "rules"
    assert rules.reason == "no reply within 0.3 s (SKILLBANK_DISTILLER_TIMEOUT)"
    assert [r.text for r in rules] == [r.text for r in distiller.fallback.rules_from_critique(
        "Never put SQL in f-strings.", task="write a query")]
    assert LLMDistiller(hanging, timeout=0).timeout is None  # 0: no limit, as asked


async def test_a_hung_model_call_falls_back_on_the_async_path_too():
    distiller = LLMDistiller(hanging, timeout=0.3)  # no acomplete: complete on a thread
    rules = await distiller.arules_from_critique("Never put SQL in f-strings.")
    assert rules.distilled_by == "rules" and rules.reason.startswith("no reply within")


@pytest.mark.parametrize("remote", [False, True], ids=["in-process", "client-of-owner"])
def test_learn_with_a_hung_model_is_learnt_by_the_rules(tmp_path, remote):
    """Before: learn never returned (in a client bank too: its distiller reads the critique)."""
    with bank_for(tmp_path, remote) as bank:
        bank.distiller = LLMDistiller(hanging, timeout=0.3)
        report = bank.guidelines.learn("Never put SQL in f-strings.", task="write a query")
        assert report.distilled_by == "rules"
        assert report.distill_error == "no reply within 0.3 s (SKILLBANK_DISTILLER_TIMEOUT)"
        assert [e.action for e in report.entries] == ["added"]


def test_the_background_writer_goes_on_past_a_hung_model_and_close_returns(tmp_path):
    """Before: the first run's distilling held the writer; runs 2 and 3 were never recorded
    and close() never returned."""
    bank = Skillbank.open(tmp_path / "root", embedding_function=HashEmbedding(),
                          include_bundled=False, distiller=LLMDistiller(hanging, timeout=0.3))
    for i in range(3):
        bank.background.submit(bank.experiences.record, task=f"Write the release notes {i}",
                               outcome="failure", feedback="Lead with breaking changes.",
                               distill=True, what="recording a run")
    closing = threading.Thread(target=bank.close, daemon=True)
    closing.start()
    closing.join(120)  # a hang guard, not a timing check: it returns in about a second
    assert not closing.is_alive(), "close() did not return"
    with Skillbank.open(tmp_path / "root", embedding_function=HashEmbedding(),
                        include_bundled=False) as again:
        tasks = {e.task for e in again.experiences.list(kind="experience")}
    assert tasks == {f"Write the release notes {i}" for i in range(3)}


EXIT = textwrap.dedent("""
    import sys, threading
    from skillbank import Skillbank, background
    from skillbank.distill import LLMDistiller
    from skillbank.embeddings import HashEmbedding
    background.EXIT_TIMEOUT = 1.0
    forever = threading.Event()
    bank = Skillbank.open(sys.argv[1], embedding_function=HashEmbedding(), include_bundled=False,
                          distiller=LLMDistiller(lambda p: forever.wait() or "[]", timeout=0))
    for i in range(3):
        bank.background.submit(bank.experiences.record, task=f"Write the release notes {i}",
                               outcome="failure", feedback="Lead with breaking changes.",
                               distill=True, what="recording a run")
    if sys.argv[2] == "stuck":  # a write that no model call is part of: it cannot finish
        bank.background.submit(forever.wait, what="a stuck write")
        bank.background.submit(print, "never", what="a write behind it")
    # exit without close()
""")


@pytest.mark.parametrize("case", ["model", "stuck"])
def test_interpreter_exit_writes_the_queued_runs_or_says_what_is_lost(tmp_path, case):
    """Before: exit waited 2 x 60 s, then the queued runs died with the daemon thread and
    nothing was said (1 of 3 runs in the journal, rc 0, stderr empty)."""
    root = tmp_path / "root"
    env = {**os.environ, "ANONYMIZED_TELEMETRY": "False"}
    done = subprocess.run([sys.executable, "-c", EXIT, str(root), case], env=env, text=True,
                          capture_output=True, timeout=300)
    assert done.returncode == 0, done.stderr
    assert "no reply before the interpreter exited" in done.stderr  # the fallback, said
    with Skillbank.open(root, embedding_function=HashEmbedding(), include_bundled=False) as bank:
        tasks = {e.task for e in bank.experiences.list(kind="experience")}
    assert tasks == {f"Write the release notes {i}" for i in range(3)}
    if case == "stuck":
        assert ("2 background write(s) did not finish before the interpreter exited and are "
                "lost (still running: a stuck write, queued: a write behind it)") in done.stderr
    else:
        assert "did not finish" not in done.stderr


async def test_mcp_sampling_is_bounded_by_its_own_timeout_only(tmp_path, monkeypatch):
    """The MCP server's sampling distiller is not cut by SKILLBANK_DISTILLER_TIMEOUT: the
    sampling request has SKILLBANK_MCP_SAMPLING_TIMEOUT (a slower client model set up with a
    longer sampling timeout must still be used)."""
    import anyio
    import json

    import mcp_types as types
    from mcp import Client

    from skillbank.mcp_server import build_server

    monkeypatch.setenv("SKILLBANK_DISTILLER_TIMEOUT", "0.2")
    reply = json.dumps([{"text": "Quote every identifier in generated SQL.", "topic": "sql"}])

    async def slow(context, params):
        await anyio.sleep(1.0)  # longer than the distiller timeout, well within sampling's
        return types.CreateMessageResult(role="assistant", model="fake-llm",
                                         content=types.TextContent(type="text", text=reply))

    with Skillbank.open(tmp_path / "root", embedding_function=HashEmbedding(),
                        include_bundled=False) as bank:
        async with Client(build_server(bank, trusted=True), mode="legacy",
                          sampling_callback=slow) as client:
            result = await client.call_tool("learn_from_critique",
                                            {"critique": "Quote the column names.", "task": "sql"})
    assert result.structured_content["distilled_by"] == "client_model"
