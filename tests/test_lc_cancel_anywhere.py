"""A cancelled LangChain run is recorded wherever the cancel lands, and never as the outcome its
input declared (hunt-async #1 and #2, session 34).

* #1: `asyncio.wait_for` / `task.cancel()` landing while `SkillbankMiddleware` built its memory
  block (the `to_thread` awaits of `awrap_model_call` sat outside the try that records a
  stop): without a thread nothing was recorded; in a thread the run was recorded only at the
  thread's next request, as "left unfinished (its stream was left early ...)".
* #2: a run in a thread whose input carried ``"outcome": "success"``, cancelled in its tool, was
  stored as a closed success whose only step was the cancel, and the retry on the thread filed
  a second record. A stop is no outcome: the episode stays open and the retry lands on it.

Real `create_agent` runs with a scripted model, in process and through a client of another
process that owns the root. The cancel is placed by events, not by timing.
"""

from __future__ import annotations

import asyncio
import re
import threading
from pathlib import Path

import pytest

pytest.importorskip("langchain.agents")

from langchain.agents import create_agent  # noqa: E402
from langchain_core.messages import AIMessage  # noqa: E402
from langchain_core.tools import tool  # noqa: E402
from langgraph.checkpoint.memory import InMemorySaver  # noqa: E402

from owner_client import bank_for  # noqa: E402
from scripted import call, script  # noqa: E402
from skillbank.adapters.langchain import SkillbankMiddleware  # noqa: E402

REMOTE = pytest.mark.parametrize("remote", [False, True], ids=["in-process", "client-of-owner"])
GOAL = "Rotate the API keys of the billing service"


def user(text: str, **extra) -> dict:
    return {"messages": [{"role": "user", "content": text}], **extra}


def steps_text(record) -> str:
    return str([s.model_dump() for s in record.steps])


def held_compute(middleware: SkillbankMiddleware) -> tuple[threading.Event, threading.Event]:
    """Make the middleware's memory block wait (in its worker thread) until released: the
    cancel lands while it is being built. Returns (started, release)."""
    started, release = threading.Event(), threading.Event()
    compute = middleware._compute

    def held(run):
        started.set()
        release.wait(60)
        return compute(run)

    middleware._compute = held
    return started, release


async def cancel_while_computing(agent, middleware, inp, config=None) -> None:
    started, release = held_compute(middleware)
    task = asyncio.create_task(agent.ainvoke(inp, config))
    try:
        assert await asyncio.to_thread(started.wait, 60)
        task.cancel()
    finally:
        release.set()
    with pytest.raises(asyncio.CancelledError):
        await task
    del middleware._compute  # the class's own again


async def open_then_retried(bank, agent, config):
    """The thread's one record: open (`unknown`, its last step the cancel), then, after the
    request is sent again declaring success, that same record a success; returned."""
    (record,) = bank.experiences.list()
    assert record.outcome == "unknown"
    assert "cancelled" in record.steps[-1].observation
    await agent.ainvoke(user(GOAL, outcome="success"), config)
    (record,) = bank.experiences.list()
    assert record.task == GOAL and record.outcome == "success"
    return record


@REMOTE
async def test_a_run_cancelled_while_its_memory_is_built_is_recorded(tmp_path, remote):
    """Without a thread: before, no record at all."""
    with bank_for(tmp_path, remote) as bank:
        middleware = SkillbankMiddleware(bank, background=False)
        agent = create_agent(script(AIMessage(content="Done.")), tools=[],
                             middleware=[middleware])
        await cancel_while_computing(agent, middleware, user(GOAL))
        (record,) = bank.experiences.list()
        assert record.task == GOAL and record.outcome == "partial"
        assert "cancelled" in record.feedback
        assert "cancelled" in record.steps[-1].observation


@REMOTE
async def test_a_thread_run_cancelled_while_its_memory_is_built_goes_on(tmp_path, remote):
    """In a thread: recorded at once as cancelled (before: only at the next request, as "left
    unfinished"), the episode open; the retry lands on the same record."""
    with bank_for(tmp_path, remote) as bank:
        middleware = SkillbankMiddleware(bank, background=False)
        agent = create_agent(script(AIMessage(content="Done.")), tools=[],
                             checkpointer=InMemorySaver(), middleware=[middleware])
        config = {"configurable": {"thread_id": "T"}}
        await cancel_while_computing(agent, middleware, user(GOAL), config)
        record = await open_then_retried(bank, agent, config)
        assert "left unfinished" not in steps_text(record)


@REMOTE
async def test_a_cancelled_run_declared_a_success_is_not_one(tmp_path, remote):
    """hunt-async #2: before, a closed success holding only the cancel, and the retry a second
    record."""
    started = asyncio.Event()
    calls = []

    @tool
    async def slow_rotate(key: str) -> str:
        """Rotate one key (slowly the first time)."""
        calls.append(key)
        if len(calls) == 1:
            started.set()
            await asyncio.Event().wait()  # until cancelled
        return f"rotated {key}"

    with bank_for(tmp_path, remote) as bank:
        model = script(call("slow_rotate", {"key": "k1"}, "c1"),
                       call("slow_rotate", {"key": "k1"}, "c2"), AIMessage(content="Done."))
        agent = create_agent(model, tools=[slow_rotate], checkpointer=InMemorySaver(),
                             middleware=[SkillbankMiddleware(bank, background=False)])
        config = {"configurable": {"thread_id": "T"}}
        task = asyncio.create_task(agent.ainvoke(user(GOAL, outcome="success"), config))
        await started.wait()
        task.cancel()
        with pytest.raises(asyncio.CancelledError):
            await task
        record = await open_then_retried(bank, agent, config)
        assert "rotated k1" in steps_text(record)


@REMOTE
async def test_an_astream_left_between_steps_is_recorded_only_in_a_thread(tmp_path, remote):
    """hunt-async #5: the README said every run is recorded, and api.md did not say what becomes
    of a run without a thread whose stream is left between two steps, where no hook runs. The
    docs now say it is the one stop not recorded (nothing goes on with it); in a thread, its
    next request records it. This pins what the docs say."""
    @tool
    def rotate(key: str) -> str:
        """Rotate one API key."""
        return f"rotated {key}"

    with bank_for(tmp_path, remote) as bank:
        for config in (None, {"configurable": {"thread_id": "T"}}):
            model = script(call("rotate", {"key": "k1"}, "c1"), AIMessage(content="Done."),
                           AIMessage(content="Done again."))
            agent = create_agent(model, tools=[rotate],
                                 checkpointer=InMemorySaver() if config else None,
                                 middleware=[SkillbankMiddleware(bank, background=False)])
            stream = agent.astream(user(GOAL), config, stream_mode="updates")
            async for chunk in stream:
                if "model" in chunk:
                    break
            await stream.aclose()
            assert bank.experiences.list() == []
        await agent.ainvoke(user("go on", outcome="success"), config)
        (record,) = bank.experiences.list()
        assert record.task == GOAL and "left unfinished" in steps_text(record)
    api = re.sub(r"\s+", " ", (Path(__file__).parents[1] / "docs" / "api.md").read_text())
    assert "The one stop that is not recorded" in api


@REMOTE
async def test_a_run_cancelled_while_its_recursion_limit_is_recorded_gets_one_record(
        tmp_path, remote):
    """Review 2 #3, session 34: a cancel landing while the run's last step (the recursion
    limit's failure) was being written in its worker thread, which the cancel does not stop:
    the cancel's handler wrote its own record meanwhile, as the run was claimed only after the
    first write returned. Before: two records for one run (a `failure` and a `partial`). Now the
    first to claim the run records it. The write is held by events (a slow PostgreSQL write or
    `distill` has this window anyway), and released once the cancel's handler has returned."""
    @tool
    def rotate(key: str) -> str:
        """Rotate one key."""
        return f"rotated {key}"

    with bank_for(tmp_path, remote) as bank:
        middleware = SkillbankMiddleware(bank, background=False)
        started, release, written, cancel_handled = (threading.Event() for _ in range(4))
        write, on_failure = middleware._write, middleware._on_failure

        def held_write(*args, **kwargs):
            if started.is_set():
                return write(*args, **kwargs)
            started.set()  # the first write: the recursion limit's
            release.wait(60)
            try:
                return write(*args, **kwargs)
            finally:
                written.set()

        def noted_on_failure(state, run, exc, *args, **kwargs):
            try:
                return on_failure(state, run, exc, *args, **kwargs)
            finally:
                if isinstance(exc, asyncio.CancelledError):
                    cancel_handled.set()

        middleware._write, middleware._on_failure = held_write, noted_on_failure
        agent = create_agent(script(call("rotate", {"key": "k1"}, "c1"),
                                    AIMessage(content="Done.")),
                             tools=[rotate], middleware=[middleware])
        task = asyncio.create_task(agent.ainvoke(user(GOAL), {"recursion_limit": 2}))
        try:
            assert await asyncio.to_thread(started.wait, 60), "no recursion-limit write"
            task.cancel()
            assert await asyncio.to_thread(cancel_handled.wait, 60)
        finally:
            release.set()
        with pytest.raises(asyncio.CancelledError):
            await task
        assert await asyncio.to_thread(written.wait, 60)  # its thread outlives the cancel
        records = bank.experiences.list()
        assert [r.outcome for r in records] == ["failure"], [
            (r.outcome, r.feedback) for r in records]
        assert "GraphRecursionError" in records[0].feedback

