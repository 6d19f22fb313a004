"""A thread picked up by a new process keeps its goal and its one record (hunt-threads #1,
session 32).

The LangChain middleware took a thread's goal only from its checkpointer's state. A thread
picked up where that state is gone (an `InMemorySaver` that died with its process, a second
worker with a checkpointer of its own) took its next request as a new task: the conversation
split into three records ("Rotate the API keys ...", "also rotate key k5", "done, thanks") and
the outcome landed on "done, thanks", while the real task stayed `unknown` for good. The
LlamaIndex block already took the goal from the thread's open episode in the bank; both faces
now do (`skillbank.adapters._runs.open_goal`).

Real `create_agent` runs with a scripted model, the bank opened twice (a restart), in process
and through a client of another process that owns the root.
"""

from __future__ import annotations

import pytest

pytest.importorskip("langchain.agents")

from langchain.agents import create_agent  # noqa: E402
from langchain_core.messages import AIMessage  # noqa: E402
from langgraph.checkpoint.memory import InMemorySaver  # noqa: E402

from owner_client import bank_for  # noqa: E402
from scripted import script, system_text  # noqa: E402
from skillbank.adapters.langchain import SkillbankMiddleware  # noqa: E402

REMOTE = pytest.mark.parametrize("remote", [False, True], ids=["in-process", "client-of-owner"])
GOAL = "Rotate the API keys of the billing service"
CONFIG = {"configurable": {"thread_id": "R"}}


def ask(bank, *turns, last=None):
    """`turns` through a new agent with a checkpointer of its own (a new process, or another
    worker), `last` (an input state) after them; the scripted model's requests."""
    model = script(*[AIMessage(content=f"ok {i}") for i in range(len(turns) + 1)])
    agent = create_agent(model, tools=[], checkpointer=InMemorySaver(),
                         middleware=[SkillbankMiddleware(bank, background=False)])
    for text in turns:
        agent.invoke({"messages": [{"role": "user", "content": text}]}, CONFIG)
    if last is not None:
        agent.invoke(last, CONFIG)
    return model.seen


@REMOTE
def test_a_thread_picked_up_after_a_restart_stays_one_record(tmp_path, remote):
    with bank_for(tmp_path, remote) as bank:
        ask(bank, GOAL, "also rotate key k1")
        (first,) = bank.experiences.list()
    with bank_for(tmp_path, remote) as bank:  # the process restarted: its saver is gone
        seen = ask(bank, "also rotate key k5",
                   last={"messages": [{"role": "user", "content": "done, thanks"}],
                         "outcome": "failure", "feedback": "Rotated the wrong key first."})
        records = bank.experiences.list()
        assert [r.task for r in records] == [GOAL], "the thread split into new records"
        record = records[0]
        assert record.id == first.id and record.thread == "R"
        assert record.outcome == "failure" and record.feedback == "Rotated the wrong key first."
        texts = " ".join(str(s.model_dump()) for s in record.steps)
        assert "also rotate key k1" in texts and "also rotate key k5" in texts
        # Its own open record is never shown back to the thread as a past experience.
        assert all(first.id not in system_text(request) for request in seen)


@REMOTE
def test_a_second_worker_with_its_own_checkpointer_goes_on_with_the_goal(tmp_path, remote):
    """Two workers, one bank: the thread's turns alternate between them."""
    with bank_for(tmp_path, remote) as bank:
        ask(bank, GOAL)
        ask(bank, "also rotate key k2")  # another worker: no state of the thread
        ask(bank, "also rotate key k3", last={
            "messages": [{"role": "user", "content": "that is all"}], "outcome": "success"})
        (record,) = bank.experiences.list()
        assert record.task == GOAL and record.outcome == "success"
        texts = " ".join(str(s.model_dump()) for s in record.steps)
        assert "also rotate key k2" in texts and "also rotate key k3" in texts
