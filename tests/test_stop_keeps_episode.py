"""A stop nobody gave an outcome for does not end a thread's episode (hunt-threads #3,
session 32).

A LangChain stream the user left early was recorded as `partial`, an outcome, which ends the
episode: the next follow-up ("also rotate key k5") became a task of its own, the user's later
success landed on it, the real task stayed `partial`, and the thread's later turns recalled its
own first half as a past experience. Now a run stopped from outside (a stream left early, a
cancel, Ctrl-C) is recorded with its steps and a last step naming the stop, and in a thread
its episode stays open (outcome `unknown`): the follow-ups and the outcome update the same
record. LlamaIndex agrees: `arecord_run(memory, error=<a stop>)` in a session (it recorded a
cancel as a `failure`, which ended the episode). Without a thread a stop is still `partial`.

Real `create_agent` and `FunctionAgent` runs with scripted models, in process and through a
client of another process that owns the root.
"""

from __future__ import annotations

import asyncio
import re

import pytest

pytest.importorskip("langchain.agents")
pytest.importorskip("llama_index.core")

from langchain.agents import create_agent  # noqa: E402
from langchain_core.messages import AIMessage  # noqa: E402
from langchain_core.tools import tool  # noqa: E402
from langgraph.checkpoint.memory import InMemorySaver  # noqa: E402
from llama_index.core.agent.workflow import FunctionAgent  # noqa: E402
from llama_index.core.base.llms.types import ChatMessage  # noqa: E402
from llama_index.core.memory import Memory  # noqa: E402
from scripted import call, script, system_text  # noqa: E402
from scripted_llama import scripted  # noqa: E402

from owner_client import bank_for  # noqa: E402
from skillbank.adapters.langchain import SkillbankMiddleware  # noqa: E402
from skillbank.adapters.llamaindex import SkillbankMemoryBlock  # noqa: E402

REMOTE = pytest.mark.parametrize("remote", [False, True], ids=["in-process", "client-of-owner"])
GOAL = "Rotate the API keys of the billing service"


@tool
def rotate(key: str) -> str:
    """Rotate one API key."""
    return f"rotated {key}"


def user(text: str, **extra) -> dict:
    return {"messages": [{"role": "user", "content": text}], **extra}


def steps_text(record) -> str:
    return str([s.model_dump() for s in record.steps])


@REMOTE
@pytest.mark.parametrize("background", [False, True], ids=["inline", "background"])
def test_a_stream_left_early_leaves_the_thread_one_record(tmp_path, remote, background):
    with bank_for(tmp_path, remote) as bank:
        bank.experiences.record(task="Rotate the API keys of the search service",
                                outcome="success", feedback="Reload the service first.")
        model = script(AIMessage(content="Which keys?"),
                       call("rotate", {"key": "k5"}, "c1"), AIMessage(content="k5 rotated."),
                       AIMessage(content="k6 rotated."), AIMessage(content="All rotated."))
        agent = create_agent(model, tools=[rotate], checkpointer=InMemorySaver(),
                             middleware=[SkillbankMiddleware(bank, background=background)])
        config = {"configurable": {"thread_id": "Z"}}
        agent.invoke(user(GOAL), config)
        stream = agent.stream(user("also rotate key k5"), config, stream_mode="updates")
        for chunk in stream:
            if "model" in chunk:
                break  # the user leaves after the model's first step
        stream.close()
        agent.invoke(user("also rotate key k6"), config)
        agent.invoke(user("all done", outcome="success"), config)
        bank.flush()
        (record,) = [r for r in bank.experiences.list() if r.thread == "Z"]
        assert record.task == GOAL and record.outcome == "success"
        text = steps_text(record)
        for said in ("also rotate key k5", "rotate", "left unfinished", "also rotate key k6",
                     "all done"):
            assert said in text, said
        # No later turn was shown the thread's own first half as a past experience.
        shown = set(re.findall(r"exp-[0-9a-f]{12}", " ".join(system_text(m)
                                                              for m in model.seen)))
        assert record.id not in shown


@REMOTE
async def test_a_run_cancelled_in_a_thread_goes_on_with_its_goal(tmp_path, remote):
    started = asyncio.Event()

    @tool
    async def slow_rotate(key: str) -> str:
        """Rotate one key (slowly)."""
        started.set()
        await asyncio.Event().wait()  # until cancelled
        return "never"

    with bank_for(tmp_path, remote) as bank:
        model = script(call("slow_rotate", {"key": "k1"}, "c1"), AIMessage(content="Done."))
        agent = create_agent(model, tools=[slow_rotate], checkpointer=InMemorySaver(),
                             middleware=[SkillbankMiddleware(bank, background=False)])
        config = {"configurable": {"thread_id": "C"}}
        task = asyncio.create_task(agent.ainvoke(user(GOAL), config))
        await started.wait()
        task.cancel()
        with pytest.raises(asyncio.CancelledError):
            await task
        (record,) = bank.experiences.list()
        assert record.outcome == "unknown" and "cancelled" in record.steps[-1].observation
        await agent.ainvoke(user("try again please", outcome="success"), config)
        (record,) = bank.experiences.list()
        assert record.task == GOAL and record.outcome == "success"
        assert "try again please" in steps_text(record)


@REMOTE
async def test_llamaindex_a_stop_keeps_the_sessions_episode(tmp_path, remote):
    with bank_for(tmp_path, remote) as bank:
        block = SkillbankMemoryBlock(bank, background=False)
        llm, _ = scripted([ChatMessage(role="assistant", content=f"ok {i}") for i in range(3)])
        agent = FunctionAgent(tools=[], llm=llm, system_prompt="You rotate keys.")
        memory = Memory.from_defaults(session_id="S", memory_blocks=[block])
        await agent.run(user_msg=GOAL, memory=memory)
        first = await block.arecord_run(memory, error=asyncio.CancelledError())
        assert bank.experiences.get(first).outcome == "unknown"
        await agent.run(user_msg="also rotate key k5", memory=memory)
        eid = await block.arecord_run(memory, outcome="success")
        assert eid == first
        record = bank.experiences.get(eid)
        assert record.task == GOAL and record.outcome == "success"
        assert "cancelled" in steps_text(record) and "also rotate key k5" in steps_text(record)
        assert [r.task for r in bank.experiences.list()] == [GOAL]


async def test_without_a_thread_a_stop_is_still_partial(tmp_path):
    with bank_for(tmp_path, False) as bank:
        block = SkillbankMemoryBlock(bank, background=False)
        eid = await block.arecord_run([ChatMessage(role="user", content=GOAL)],
                                      error=KeyboardInterrupt())
        record = bank.experiences.get(eid)
        assert record.outcome == "partial" and "interrupted" in record.feedback
