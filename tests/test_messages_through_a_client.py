"""A framework's chat messages are recorded the same from any process.

`record(messages=[HumanMessage(...), ...])`, `record_messages(...)` and `record_many([{"messages":
...}])` worked in the process that opened the root first and raised `InvalidInputError` ("a
HumanMessage cannot be sent to the process that owns the memory root") in every other one:
whether an agent's code worked depended on whether `skillbank serve`, another agent or the
CLI's background owner held the root. A client now sends them as plain chat dicts, and what is
stored is the same as in process.
"""

from __future__ import annotations

import pytest

from owner_client import client_of_owner
from skillbank import Skillbank
from skillbank.embeddings import HashEmbedding

messages = pytest.importorskip("langchain_core.messages")
llama_types = pytest.importorskip("llama_index.core.base.llms.types")

LC = [messages.HumanMessage("Import the orders CSV"),
      messages.AIMessage("", tool_calls=[{"name": "load_csv", "args": {"path": "o.csv"},
                                          "id": "c1"}]),
      messages.ToolMessage("120 rows", tool_call_id="c1"),
      messages.AIMessage("Imported 120 rows.")]
LI = [llama_types.ChatMessage(role="user", content="Export the invoices"),
      llama_types.ChatMessage(role="assistant", content="Exported.")]


def _stored(bank) -> list[tuple]:
    ids = [bank.experiences.record(messages=LC, outcome="success"),
           bank.experiences.record_messages(LC, outcome="partial", thread="t1"),
           bank.experiences.record(messages=LI, outcome="success"),
           *bank.experiences.record_many([{"messages": LC, "outcome": "failure"}]),
           bank.experiences.record(messages=iter(LC), outcome="success")]  # a generator too
    out = []
    for eid in ids:
        e = bank.experiences.get(eid)
        out.append((e.task, e.outcome, [s.model_dump() for s in e.steps]))
    return out


def test_messages_are_stored_alike_in_process_and_through_a_client(tmp_path):
    with Skillbank.open(tmp_path / "here", embedding_function=HashEmbedding(),
                        include_bundled=False) as bank:
        here = _stored(bank)
    with client_of_owner(tmp_path / "there") as bank:
        there = _stored(bank)
    assert here == there
    assert here[0][0] == "Import the orders CSV" and any(
        step["action"] == "load_csv" for step in here[0][2])


def _outcome(call) -> str:
    from skillbank.errors import InvalidInputError

    try:
        call()
        return "ok"
    except InvalidInputError:
        return "InvalidInputError"


ODD = [{"role": "user", "content": "Import the orders CSV"}, 5, "text", ["a"],
       {"content": "", "type": {"x": 1}, "tool_calls": '"'}]


def test_odd_items_fare_alike_in_process_and_through_a_client(tmp_path):
    """Plain items that are no chat message are the owner's to judge, as in process: the
    client's conversion refused a list holding one (the API fuzz corpus found it)."""
    with Skillbank.open(tmp_path / "here", embedding_function=HashEmbedding(),
                        include_bundled=False) as bank:
        here = [_outcome(lambda: bank.experiences.record(task="t", messages=ODD)),
                _outcome(lambda: bank.experiences.record(task="t", messages=[*ODD, LC[0]]))]
    with client_of_owner(tmp_path / "there") as bank:
        there = [_outcome(lambda: bank.experiences.record(task="t", messages=ODD)),
                 _outcome(lambda: bank.experiences.record(task="t", messages=[*ODD, LC[0]]))]
    assert here == there
