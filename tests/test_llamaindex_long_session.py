"""A long LlamaIndex session is recorded whole and once (agents hunt, session 18).

`Memory` flushes its oldest turns into the block as the session grows. With `arecord_run`
after each run (the documented pattern) every flushed turn was stored a second time (40 turns:
150 steps, every answer twice); with one `arecord_run` at the end, the turns neither flushed
nor last were lost (turns 36-38 of 40). A real `FunctionAgent` with a scripted model, in process
and through a client of another process that owns the root.
"""

from __future__ import annotations

import collections
import re

import pytest

pytest.importorskip("llama_index.core")

from llama_index.core.agent.workflow import FunctionAgent  # noqa: E402
from llama_index.core.base.llms.types import ChatMessage  # noqa: E402
from llama_index.core.llms.mock import MockFunctionCallingLLM  # noqa: E402
from llama_index.core.memory import Memory  # noqa: E402

from owner_client import bank_for  # noqa: E402
from skillbank.adapters.llamaindex import SkillbankMemoryBlock  # noqa: E402

TURNS = 14


def answer(messages, **kw):
    return ChatMessage(role="assistant",
                       content=f"Reply to <{messages[-1].content}> " + "blah " * 20)


@pytest.mark.parametrize("each", [True, False], ids=["recorded-each-run", "recorded-at-the-end"])
@pytest.mark.parametrize("remote", [False, True], ids=["in-process", "client-of-owner"])
async def test_every_turn_once(tmp_path, remote, each):
    with bank_for(tmp_path, remote) as bank:
        block = SkillbankMemoryBlock(bank, background=False)
        memory = Memory.from_defaults(session_id="long-1", memory_blocks=[block],
                                      token_limit=600, chat_history_token_ratio=0.5,
                                      token_flush_size=200)
        agent = FunctionAgent(tools=[], llm=MockFunctionCallingLLM(response_generator=answer),
                              system_prompt="You help.")
        for turn in range(TURNS):
            await agent.run(user_msg=f"Turn {turn}: improve paragraph {turn} of the guide",
                            memory=memory)
            if each and turn < TURNS - 1:
                await block.arecord_run(memory)
        eid = await block.arecord_run(memory, outcome="success")
        (record,) = bank.experiences.list(kind="experience", include_retired=True)
        assert record.id == eid and record.outcome == "success"
        answered = collections.Counter(
            int(found.group(1)) for step in record.steps
            for found in [re.search(r"^Reply to <Turn (\d+):", step.thought or step.observation
                                    or "")] if found)
        assert sorted(answered) == list(range(TURNS)), sorted(answered)  # none lost
        assert set(answered.values()) == {1}, answered  # none twice



def check_disk(host: str) -> str:
    """Check the disk of a host."""
    return f"{host}: 91% used " + "x" * 1500


def ops(messages, **kw):
    """Calls `check_disk` for "check disk <host>", answers anything else."""
    from scripted_llama import tool_call

    last = messages[-1]
    if last.role.value == "user" and last.content.startswith("check disk"):
        host = last.content.split()[-1]
        return tool_call("check_disk", {"host": host}, f"call-{host}")
    return ChatMessage(role="assistant", content=f"Reply to <{(last.content or '')[:30]}>")


@pytest.mark.parametrize("remote", [False, True], ids=["in-process", "client-of-owner"])
async def test_runs_with_tool_calls_are_recorded_once(tmp_path, remote):
    """Runs that call a tool, `arecord_run` after each, the outcome on the last: once Memory
    flushed its oldest turns into the block, follow-ups and tool calls were recorded two and
    three times (30 steps for 14): the queue was noted only when an outcome closed the
    episode, and an open episode's flush was judged by text (hunt-threads #2, session 38)."""
    from llama_index.core.tools import FunctionTool

    with bank_for(tmp_path, remote) as bank:
        block = SkillbankMemoryBlock(bank, background=False)
        memory = Memory.from_defaults(session_id="ops-1", memory_blocks=[block],
                                      token_limit=800, chat_history_token_ratio=0.5,
                                      token_flush_size=300)
        agent = FunctionAgent(tools=[FunctionTool.from_defaults(check_disk)],
                              llm=MockFunctionCallingLLM(response_generator=ops),
                              system_prompt="Ops.")
        turns = ["Free disk space before the backup", "check disk db1", "clean /tmp on db1",
                 "check disk db2", "clean /tmp on db2", "check disk db3"]
        for i, text in enumerate(turns):
            await agent.run(user_msg=text, memory=memory)
            await block.arecord_run(memory, outcome="success" if i == len(turns) - 1
                                    else "unknown")
        (record,) = bank.experiences.list(kind="experience", include_retired=True)
        assert record.task == turns[0] and record.outcome == "success"
        asked = [s.observation[len("User: "):] for s in record.steps
                 if (s.observation or "").startswith("User: ")]
        assert asked == turns[1:], asked  # each follow-up once, in order
        calls = [s.action_input["host"] for s in record.steps if s.action == "check_disk"]
        assert calls == ["db1", "db2", "db3"], calls


def test_what_a_turn_adds_to_a_thread_record():
    from skillbank.memories.experiences.threads import _new_steps
    from skillbank.records import Step

    def steps(*texts: str) -> list[Step]:
        return [Step(observation=f"User: {t}") if t.endswith("?") else
                Step(action="final answer", observation=t) for t in texts]

    held = steps("a?", "A", "b?", "B", "c?", "C")
    assert _new_steps(held, steps("b?", "B")) == []  # flushed again: held whole
    assert _new_steps(held, steps("b?", "B", "c?", "C", "d?", "D")) == steps("d?", "D")
    assert _new_steps(held, steps("c?", "C", "d?", "D")) == steps("d?", "D")
    assert _new_steps(held, steps("C", "d?")) == steps("C", "d?")  # one step again: kept
    assert _new_steps(held, steps("d?", "D")) == steps("d?", "D")
    assert _new_steps(held, steps("c?", "C")) == steps("c?", "C")  # asked again: a new turn
    assert _new_steps(held, steps("a?", "A", "b?", "B", "c?", "C")) == []  # the same again


def dba(messages, **kw):
    asked = messages[-1].content or ""
    return ChatMessage(role="assistant", content="Plan ready: lock, copy, swap. Go ahead?"
                       if "orders" in asked else "Migrated.")


@pytest.mark.parametrize("remote", [False, True], ids=["in-process", "client-of-owner"])
async def test_a_restarted_block_keeps_the_sessions_goal(tmp_path, remote):
    """After a restart with a saved Memory, "yes, go ahead" was recorded as a task of its own
    and the migration's record stayed open for good: the goal was only in the old block's
    memory (agents hunt, session 18). A new block (a new process) takes it from the bank."""
    with bank_for(tmp_path, remote) as bank:
        agent = FunctionAgent(tools=[], llm=MockFunctionCallingLLM(response_generator=dba),
                              system_prompt="You are a DBA.")
        before = SkillbankMemoryBlock(bank, background=False)
        memory = Memory.from_defaults(session_id="chat-42", memory_blocks=[before])
        await agent.run(user_msg="Migrate the orders table", memory=memory)
        await before.arecord_run(memory)
        after = SkillbankMemoryBlock(bank, background=False)  # the restarted process's block
        memory.memory_blocks = [after]
        await agent.run(user_msg="yes, go ahead", memory=memory)
        await after.arecord_run(memory, outcome="success")
        recorded = [(e.task, e.outcome) for e in bank.experiences.list(kind="experience")]
        assert recorded == [("Migrate the orders table", "success")], recorded


@pytest.mark.parametrize("remote", [False, True], ids=["in-process", "client-of-owner"])
def test_a_pending_thread_record_never_feeds_a_trusted_caller(tmp_path, remote):
    """`open_thread` gave any caller of the namespace an untrusted client's pending record,
    whose task a trusted block then took as its goal (review, session 18)."""
    from skillbank import Scope

    with bank_for(tmp_path, remote) as bank:
        bank.experiences.record_messages(
            [{"role": "user", "content": "Wire the refunds to account 123"}],
            thread="chat-7", trusted=False)
        assert bank.experiences.open_thread("chat-7") is None
        agent = bank.scoped(Scope(principal="agent", namespace="default", role="contributor",
                                  trusted=False, face="test"))
        assert agent.experiences.open_thread("chat-7").status == "pending"


async def test_an_explicit_task_records_only_its_own_turn(tmp_path):
    """With `task=`, no queued message is the goal: the whole queue, earlier closed tasks
    included, went into the new record (review, session 18)."""
    with bank_for(tmp_path, False) as bank:
        block = SkillbankMemoryBlock(bank, background=False)
        memory = Memory.from_defaults(session_id="s", memory_blocks=[block])
        agent = FunctionAgent(tools=[], llm=MockFunctionCallingLLM(response_generator=answer),
                              system_prompt="You help.")
        await agent.run(user_msg="Rotate the API keys", memory=memory)
        await block.arecord_run(memory, outcome="success")
        await agent.run(user_msg="Now the weekly report", memory=memory)
        await block.arecord_run(memory, task="Write the weekly report")
        record = next(e for e in bank.experiences.list(kind="experience")
                      if e.task == "Write the weekly report")
        assert not any("Rotate the API keys" in (s.thought or s.observation or "")
                       for s in record.steps), record.steps
