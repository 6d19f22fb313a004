"""A conversation is one experience (issue 25, item 2): a task plus its follow-ups in one thread
is one record holding every turn's steps; an outcome on a later turn updates that record (no
`unknown` twin); a thread never recalls its own record; two threads are two records; a
follow-up whose earlier record was forgotten starts a new one. Real `create_agent` and
`FunctionAgent` runs (scripted chat models), a real bank, and once through a client of an
owner in another process.
"""

from __future__ import annotations

import logging
import re
from typing import Any

import pytest

from skillbank import Skillbank
from skillbank.embeddings import HashEmbedding

WAIT = 60
TASK = "Add a users table to the billing schema"
FOLLOW_UPS = ["add an index on email", "rename the column to email_address",
              "also add a created_at timestamp"]


@pytest.fixture
def bank(hash_bank):
    return hash_bank  # conftest: a temp root, the hash embedding, no bundled skills


def experiences(bank) -> list:
    assert bank.flush(timeout=WAIT)
    return sorted(bank.experiences.list(namespace="*", kind="experience", limit=100,
                                        include_retired=True), key=lambda e: e.created)


def observations(experience) -> list[str]:
    return [s.observation for s in experience.steps if s.observation]


# -- LangChain ------------------------------------------------------------------------------------

def _langchain():
    pytest.importorskip("langchain.agents")
    from langchain.agents import create_agent
    from langchain_core.messages import AIMessage
    from langchain_core.tools import tool
    from langgraph.checkpoint.memory import InMemorySaver
    from scripted import Scripted

    from skillbank.adapters.langchain import SkillbankMiddleware

    @tool
    def run_sql(statement: str) -> str:
        """Run one SQL statement."""
        return f"ok: {statement}"

    def agent(bank, model):
        return create_agent(model, [run_sql], middleware=[SkillbankMiddleware(bank)],
                            checkpointer=InMemorySaver())

    def replies():
        yield AIMessage(content="", tool_calls=[{"name": "run_sql", "id": "c1",
                                                 "args": {"statement": "CREATE TABLE users"}}])
        yield AIMessage(content="Created the users table.")
        for number, text in enumerate(FOLLOW_UPS):
            yield AIMessage(content=f"Done: {text}.")

    return agent, Scripted, replies


def _four_turns(bank, thread: str, outcome: str | None = "success") -> list[str]:
    """Run the task and its three follow-ups in `thread`; returns each model call's system text."""
    agent_for, Scripted, replies = _langchain()
    from scripted import system_text

    model = Scripted(messages=replies())
    agent = agent_for(bank, model)
    config = {"configurable": {"thread_id": thread}}
    for number, text in enumerate([TASK, *FOLLOW_UPS]):
        payload: dict[str, Any] = {"messages": [{"role": "user", "content": text}]}
        if outcome and number == len(FOLLOW_UPS):
            payload["outcome"] = outcome
        agent.invoke(payload, config)
        assert bank.flush(timeout=WAIT)  # the record exists before the next turn asks
    return [system_text(messages) for messages in model.seen]


def test_a_task_and_three_follow_ups_are_one_experience_with_every_step(bank):
    seen = _four_turns(bank, "thread-a", outcome=None)
    [experience] = experiences(bank)
    said = observations(experience)
    for text in FOLLOW_UPS:  # every follow-up is a step, none lost
        assert f"User: {text}" in said
    assert experience.task == TASK and experience.thread == "thread-a"
    assert experience.steps[0].action == "run_sql"
    assert "Done: also add a created_at timestamp." in said[-1]
    # From turn two on, the block never shows the thread's own record.
    assert len(seen) == 5
    for system in seen[2:]:
        assert experience.id not in system and f"Task: {TASK}" not in system


def test_an_outcome_on_the_last_turn_updates_the_record_no_unknown_twin(bank):
    _four_turns(bank, "thread-b", outcome="success")
    [experience] = experiences(bank)  # every status: no `unknown` record beside it
    assert experience.outcome == "success"
    assert f"User: {FOLLOW_UPS[-1]}" in observations(experience)
    # The journal stays append-only: one `add`, then each later turn as an event of the same
    # id (an `update` delta, or the whole record again flagged "update").
    lines = [line for path in sorted((bank.root / "experiences").glob("*.jsonl"))
             for line in path.read_text().splitlines() if experience.id in line]
    assert len(lines) == 4 and '"op":"add"' in lines[0] and '"update"' not in lines[0]
    assert all('"op":"update"' in line or '"update":true' in line for line in lines[1:])
    # A reopen replays the journal to the same one record.
    bank.experiences.sync()
    assert [e.id for e in experiences(bank)] == [experience.id]


def test_two_threads_are_two_records_and_each_recalls_only_the_other(bank):
    _four_turns(bank, "thread-1")
    seen = _four_turns(bank, "thread-2")
    first, second = experiences(bank)
    assert first.outcome == second.outcome == "success"
    assert first.id in seen[0]  # another conversation's record is a past experience
    assert all(second.id not in system for system in seen)
    assert (first.thread, second.thread) == ("thread-1", "thread-2")


def test_a_follow_up_after_its_record_was_forgotten_starts_a_new_one(bank, caplog):
    agent_for, Scripted, _ = _langchain()
    from langchain_core.messages import AIMessage

    model = Scripted(messages=iter([AIMessage(content="Created."), AIMessage(content="Indexed.")]))
    agent = agent_for(bank, model)
    config = {"configurable": {"thread_id": "gone"}}
    agent.invoke({"messages": [{"role": "user", "content": TASK}]}, config)
    [first] = experiences(bank)
    bank.experiences.forget(first.id)
    with caplog.at_level(logging.INFO, logger="skillbank.experiences"):
        result = agent.invoke({"messages": [{"role": "user", "content": FOLLOW_UPS[0]}]}, config)
        [second] = experiences(bank)
    assert result["messages"][-1].content == "Indexed."  # the agent went on
    assert second.id != first.id and second.task == TASK
    assert observations(second)[0] == f"User: {FOLLOW_UPS[0]}"
    assert any("starts a new experience" in r.getMessage() for r in caplog.records)


def test_a_bad_thread_id_is_a_clear_error_in_the_api(bank):
    from skillbank.errors import InvalidInputError

    with pytest.raises(InvalidInputError, match="thread"):
        bank.experiences.record_messages([{"role": "user", "content": TASK}], thread="  ")
    assert experiences(bank) == []


# -- LlamaIndex -----------------------------------------------------------------------------------

async def test_llamaindex_session_is_one_experience(bank):
    pytest.importorskip("llama_index.core")
    from llama_index.core.agent.workflow import FunctionAgent
    from llama_index.core.base.llms.types import ChatMessage, ToolCallBlock
    from llama_index.core.llms.mock import MockFunctionCallingLLM
    from llama_index.core.memory import Memory
    from llama_index.core.tools import FunctionTool

    from skillbank.adapters.llamaindex import SkillbankMemoryBlock

    def run_sql(statement: str) -> str:
        """Run one SQL statement."""
        return f"ok: {statement}"

    seen: list[str] = []
    replies = iter([
        ChatMessage(role="assistant", blocks=[ToolCallBlock(
            tool_call_id="t1", tool_name="run_sql", tool_kwargs={"statement": "CREATE TABLE"})]),
        ChatMessage(role="assistant", content="Created the users table."),
        *[ChatMessage(role="assistant", content=f"Done: {text}.") for text in FOLLOW_UPS],
        ChatMessage(role="assistant", content="Created it in the other session."),
    ])

    def generate(messages, **kwargs):
        seen.append("\n".join(m.content or "" for m in messages if m.role.value == "system"))
        return next(replies)

    llm = MockFunctionCallingLLM(response_generator=generate)
    block = SkillbankMemoryBlock(bank, raise_errors=True)
    agent = FunctionAgent(tools=[FunctionTool.from_defaults(run_sql)], llm=llm,
                          system_prompt="You are a database engineer.")
    memory = Memory.from_defaults(session_id="session-1", token_limit=8000,
                                  memory_blocks=[block])
    ids = []
    for number, text in enumerate([TASK, *FOLLOW_UPS]):
        await agent.run(user_msg=text, memory=memory)
        last = number == len(FOLLOW_UPS)
        ids.append(await block.arecord_run(memory, outcome="success" if last else "unknown"))
    assert len(set(ids)) == 1
    [experience] = experiences(bank)
    said = observations(experience)
    for text in FOLLOW_UPS:
        assert f"User: {text}" in said
    assert experience.thread == "session-1" and experience.outcome == "success"
    assert experience.steps[0].action == "run_sql"
    for system in seen[2:]:  # turns two to four never show the session's own record
        assert experience.id not in system

    # Another session is another record, and is shown the first session's record.
    other = Memory.from_defaults(session_id="session-2", token_limit=8000, memory_blocks=[block])
    await agent.run(user_msg=TASK, memory=other)
    await block.arecord_run(other, outcome="success")
    first, second = experiences(bank)
    assert (first.thread, second.thread) == ("session-1", "session-2")
    assert experience.id in seen[-1]


# -- through a client of an owner in another process -----------------------------------------------

def test_a_thread_through_a_client_of_an_owner_process(tmp_path):
    from owner_client import client_of_owner

    with client_of_owner(tmp_path / "root") as bank:
        seen = _four_turns(bank, "remote-thread", outcome="success")
        [experience] = experiences(bank)
        assert all(f"User: {text}" in observations(experience) for text in FOLLOW_UPS)
        assert experience.outcome == "success" and experience.thread == "remote-thread"
        assert all(experience.id not in system for system in seen[2:])
        assert bank.stats()["recording_failures"] == 0


@pytest.mark.parametrize("through", ["in-process", "client-of-owner"])
def test_a_turn_that_opens_with_a_follow_up_keeps_it_as_a_step(tmp_path, through):
    """A chat memory that flushes a chunk of a session records it under the session's goal;
    when the chunk opened with a follow-up ("also add the marketing line"), that request was
    taken for the task and dropped (LlamaIndex `Memory`, found by using it)."""
    import contextlib

    from owner_client import client_of_owner

    root = tmp_path / "root"
    opened = (client_of_owner(root) if through == "client-of-owner" else contextlib.closing(
        Skillbank.open(root, embedding_function=HashEmbedding(), include_bundled=False)))
    with opened as bank:
        goal = "Plan the quarterly budget review"
        bank.experiences.record_messages([{"role": "user", "content": goal},
                                          {"role": "assistant", "content": "Draft plan."}],
                                         task=goal, thread="T1")
        eid = bank.experiences.record_messages(
            [{"role": "user", "content": "also add the marketing line"},
             {"role": "assistant", "content": "Added marketing."}],
            task=goal, thread="T1", followup=True)
        steps = bank.experiences.get(eid).steps
        assert [(s.action, s.observation) for s in steps] == [
            ("final answer", "Draft plan."), (None, "User: also add the marketing line"),
            ("final answer", "Added marketing.")]
        # The task's own first message is still the task, not a step.
        single = bank.experiences.record_messages(
            [{"role": "user", "content": "Rotate  the staging keys"},
             {"role": "assistant", "content": "Rotated."}], task="Rotate the staging keys")
        assert [s.observation for s in bank.experiences.get(single).steps] == ["Rotated."]


def test_a_follow_up_step_keeps_its_place_and_the_step_limit():
    """Review: the follow-up step was put first (before an assistant message that came before
    it) and after the trim to MAX_STEPS, so a long run became one step too long and failed."""
    from skillbank.memories.experiences.transcript import steps_from_messages
    from skillbank.records import MAX_STEPS

    calls = [{"role": "assistant", "content": "", "tool_calls": [
        {"id": str(i), "type": "function", "function": {"name": "run_sql", "arguments": "{}"}}]}
        for i in range(MAX_STEPS + 100)]
    messages = [{"role": "assistant", "content": "Hello."},
                {"role": "user", "content": "also add the marketing line"}, *calls]
    steps, first = steps_from_messages(messages, task="Plan the quarterly budget review")
    assert len(steps) == MAX_STEPS and first == "also add the marketing line"
    assert steps[0].thought == "Hello." and steps[1].observation == "User: also add the marketing line"
    same, _ = steps_from_messages(messages[1:3], task="also add  the marketing line")
    assert [s.observation for s in same if s.observation] == []


# -- a thread's closed episodes are past experiences -------------------------------------------

@pytest.mark.parametrize("remote", [False, True], ids=["in-process", "client-of-owner"])
def test_a_thread_recalls_its_closed_episodes_but_never_its_open_one(tmp_path, remote):
    """A per-user session id (the README's ``session_id="user-1"``) is one thread for all of
    the user's work: hiding every record of the thread hid the user's whole history from them.
    Only the open episode (no outcome yet) is the thread's own "present"."""
    from owner_client import bank_for

    with bank_for(tmp_path, remote) as bank:
        task = "Refund order 1234 for the customer"
        closed = bank.experiences.record_messages(
            [{"role": "user", "content": task}, {"role": "assistant", "content": "Refunded."}],
            task=task, outcome="failure", feedback="Needs the finance role first.",
            thread="user-1")
        opened = bank.experiences.record_messages(
            [{"role": "user", "content": task}], task=task, thread="user-1")
        assert opened != closed  # an outcome closed the first episode: a new record
        ids = [h.id for h in bank.experiences.recall(task, k=5, exclude_thread="user-1")]
        assert closed in ids and opened not in ids
        block = bank.context_for(task, thread="user-1")
        assert closed in block.ids and opened not in block.ids
