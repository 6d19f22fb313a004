"""MCP recall_experiences and memory_context say what they may miss on a full disk (session 33,
left item 3 of session 32's hunt-disk #1).

Since session 32 a recall answers past a catch-up the full disk refused (the records kept in
the journal, not in the index yet), and Python's `Hits.note` says so. Before: the MCP tools'
results had no such note: `recall_experiences` had no note field at all, `memory_context`'s
note left it out (`MemoryContext` did not carry the recall's note), and a recall within
INDEX_RETRY_SECONDS of the refused catch-up (the next tool call) carried no note even in Python,
so an agent took the answer for everything remembered.

A real MCP client session; the full disk simulated as in test_disk_full_index (`full_disk`),
in this process and in an owner process whose client the server serves.
"""

from __future__ import annotations

import pytest

import full_disk
from test_disk_full_index import _bank

WAITING = "not in the index yet"


@pytest.mark.parametrize("remote", [False, True], ids=["in-process", "client-of-owner"])
async def test_the_tools_note_the_records_waiting_to_be_indexed(tmp_path, remote, monkeypatch):
    from mcp import Client

    from skillbank.mcp_server import build_server
    from test_mcp_server import call

    with _bank(tmp_path, remote, monkeypatch) as bank:
        memory = bank.experiences
        indexed = memory.record(task="Migrate the orders table", outcome="failure",
                                feedback="Lock the orders table first.")
        async with Client(build_server(bank, trusted=True)) as client:
            found = await call(client, "recall_experiences", {"task": "Migrate the orders table"})
            assert found["note"] == ""  # nothing waiting: nothing to say
            (tmp_path / "upsert-error").write_text(full_disk.SQLITE_FULL)
            memory.record(task="Migrate the invoices table", outcome="failure",
                          feedback="Lock the invoices table first.")  # kept in the journal
            found = await call(client, "recall_experiences", {"task": "Migrate the orders table"})
            assert indexed in [e["id"] for e in found["experiences"]]
            assert WAITING in found["note"] and "later recall" in found["note"], found
            context = await call(client, "memory_context", {"task": "Migrate the orders table"})
            assert indexed in context["ids"]
            assert WAITING in context["note"], context
            (tmp_path / "upsert-error").unlink()  # space freed
            memory.sync()
            found = await call(client, "recall_experiences",
                               {"task": "Migrate the invoices table"})
            assert found["note"] == "", found
            context = await call(client, "memory_context", {"task": "Migrate the orders table"})
            assert WAITING not in context["note"], context


@pytest.mark.parametrize("remote", [False, True], ids=["in-process", "client-of-owner"])
def test_a_recall_before_the_retry_still_says_so(tmp_path, remote, monkeypatch):
    """The catch-up is retried after INDEX_RETRY_SECONDS: a recall before that (made certain
    here: the retry put off) said nothing of the records still waiting."""
    import skillbank.memories.experiences.memory as memory_module

    # In this process; an owner retries after 2 s and is refused again: the same note either
    # way, so the client-of-owner run does not depend on how fast the two recalls come.
    monkeypatch.setattr(memory_module, "INDEX_RETRY_SECONDS", 3600.0)
    with _bank(tmp_path, remote, monkeypatch) as bank:
        memory = bank.experiences
        memory.record(task="Migrate the orders table", outcome="failure",
                      feedback="Lock the orders table first.")
        (tmp_path / "upsert-error").write_text(full_disk.SQLITE_FULL)
        memory.record(task="Migrate the invoices table", outcome="failure",
                      feedback="Lock the invoices table first.")
        first = memory.recall("Migrate the orders table")
        second = memory.recall("Migrate the orders table")
        assert WAITING in first.note
        assert second.note == first.note
        assert WAITING in bank.context_for("Migrate the orders table").note


@pytest.mark.parametrize("remote", [False, True], ids=["in-process", "client-of-owner"])
def test_the_langchain_tools_say_it_too(tmp_path, remote, monkeypatch):
    """The adapters' `recall_experiences` and `memory_context` tools (LangChain here, the same
    functions serve LlamaIndex) dropped the recall's note, as MCP did."""
    import json

    pytest.importorskip("langchain_core")
    from skillbank.adapters.langchain import skillbank_tools

    with _bank(tmp_path, remote, monkeypatch) as bank:
        bank.experiences.record(task="Migrate the orders table", outcome="failure",
                                feedback="Lock the orders table first.")
        tools = {t.name: t for t in skillbank_tools(bank, include="all")}
        found = json.loads(tools["recall_experiences"].invoke({"task": "Migrate the orders table"}))
        assert "note" not in found  # nothing waiting: nothing to say
        (tmp_path / "upsert-error").write_text(full_disk.SQLITE_FULL)
        bank.experiences.record(task="Migrate the invoices table", outcome="failure",
                                feedback="Lock the invoices table first.")
        found = json.loads(tools["recall_experiences"].invoke({"task": "Migrate the orders table"}))
        assert found["experiences"] and WAITING in found["note"], found
        block = tools["memory_context"].invoke({"task": "Migrate the orders table"})
        assert "Migrate the orders table" in block and WAITING in block, block
