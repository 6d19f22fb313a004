"""A `create_agent` run that stops where no hook saw an exception is still recorded, with its
steps (hunt-agents #1 and #2, session 29).

* The recursion limit: a model looping on a tool was stopped by LangGraph's
  `GraphRecursionError`, raised between two nodes, and the run, the failure most worth keeping,
  left no record at all.
* Stops from outside: an asyncio cancel, a Ctrl-C in a tool and a stream left early are
  `BaseException`s; the middleware caught `Exception` only (or never ran again), so the steps
  the run made, a tool's side effects among them, were lost. They are recorded as stopped:
  a last step naming the stop; without a thread, outcome partial and feedback naming it. In a
  thread a stop is no outcome: its episode goes on (hunt-threads #3, session 32; see
  tests/test_stop_keeps_episode.py).

Real `create_agent` runs with a scripted model, in process and through a client of another
process that owns the root.
"""

from __future__ import annotations

import asyncio

import pytest

pytest.importorskip("langchain.agents")

from langchain.agents import create_agent  # noqa: E402
from langchain_core.messages import AIMessage  # noqa: E402
from langchain_core.tools import tool  # noqa: E402
from langgraph.checkpoint.memory import InMemorySaver  # noqa: E402
from langgraph.errors import GraphRecursionError  # noqa: E402

from owner_client import bank_for  # noqa: E402
from scripted import call, script  # noqa: E402
from skillbank.adapters.langchain import SkillbankMiddleware  # noqa: E402

REMOTE = pytest.mark.parametrize("remote", [False, True], ids=["in-process", "client-of-owner"])
ASK = {"messages": [{"role": "user", "content": "Where is order 1234?"}]}


@tool
def check_status(order: str) -> str:
    """Check an order's status."""
    return f"pending {order}"


def two_checks(i: int) -> AIMessage:
    """A reply calling the tool twice in parallel (one step, two tool calls)."""
    return AIMessage(content="", tool_calls=[
        {"name": "check_status", "args": {"order": f"{i}a"}, "id": f"a{i}"},
        {"name": "check_status", "args": {"order": f"{i}b"}, "id": f"b{i}"}])


def only_record(bank):
    records = bank.experiences.list()
    assert len(records) == 1, [r.task for r in records]
    return records[0]


@REMOTE
@pytest.mark.parametrize("limit, last", [(5, "tools"), (4, "model")])
def test_a_run_stopped_by_the_recursion_limit_is_a_failure_with_its_steps(tmp_path, remote,
                                                                          limit, last):
    """Limit 5 ends on a step of two parallel tool calls (both results recorded, once), 4 on a
    model call whose tool calls never ran."""
    with bank_for(tmp_path, remote) as bank:
        model = script(*[two_checks(i) for i in range(50)])
        agent = create_agent(model, tools=[check_status],
                             middleware=[SkillbankMiddleware(bank, background=False)])
        with pytest.raises(GraphRecursionError):
            agent.invoke(ASK, {"recursion_limit": limit})
        record = only_record(bank)
        assert record.outcome == "failure"
        assert record.feedback.startswith(f"GraphRecursionError: Recursion limit of {limit} ")
        seen = [s.observation for s in record.steps if s.action == "check_status"]
        done = ["pending 0a", "pending 0b"] + (["pending 1a", "pending 1b"] if last == "tools"
                                                 else [None, None])
        assert seen == done
        assert record.steps[-1].action == "agent loop"
        assert "Recursion limit" in record.steps[-1].observation


@REMOTE
async def test_a_cancelled_run_is_recorded_as_stopped_with_its_steps(tmp_path, remote):
    started = asyncio.Event()

    @tool
    async def slow_migrate(table: str) -> str:
        """Migrate a table (slowly)."""
        started.set()
        await asyncio.Event().wait()  # until cancelled
        return "never"

    with bank_for(tmp_path, remote) as bank:
        model = script(call("slow_migrate", {"table": "orders"}, "c1"))
        agent = create_agent(model, tools=[slow_migrate],
                             middleware=[SkillbankMiddleware(bank, background=False)])
        task = asyncio.create_task(agent.ainvoke(
            {"messages": [{"role": "user", "content": "Migrate the orders table"}]}))
        await started.wait()
        task.cancel()
        with pytest.raises(asyncio.CancelledError):
            await task
        record = only_record(bank)
        assert record.outcome == "partial" and "cancelled" in record.feedback
        assert [s.action for s in record.steps if s.action] == ["slow_migrate"]
        assert "cancelled" in record.steps[-1].observation


@REMOTE
def test_a_run_interrupted_in_a_tool_is_recorded_as_stopped(tmp_path, remote):
    @tool
    def migrate(table: str) -> str:
        """Migrate a table (the user presses Ctrl-C)."""
        raise KeyboardInterrupt()

    with bank_for(tmp_path, remote) as bank:
        model = script(call("migrate", {"table": "orders"}, "c1"))
        agent = create_agent(model, tools=[migrate],
                             middleware=[SkillbankMiddleware(bank, background=False)])
        with pytest.raises(KeyboardInterrupt):
            agent.invoke({"messages": [{"role": "user", "content": "Migrate the orders table"}]})
        record = only_record(bank)
        assert record.outcome == "partial" and "interrupted" in record.feedback
        assert [s.action for s in record.steps if s.action] == ["migrate"]


@REMOTE
def test_a_stream_left_early_is_recorded_when_its_thread_goes_on(tmp_path, remote):
    """No hook runs when a caller breaks out of `stream` between two steps: the thread's next
    request records the run, with the steps its state holds. A stop is no outcome: the next
    request goes on with the same goal and record (it started a goal of its own, and the
    stopped run was closed as partial: hunt-threads #3, session 32)."""
    with bank_for(tmp_path, remote) as bank:
        model = script(call("check_status", {"order": "1234"}, "c1"),
                       AIMessage(content="It is sunny in Paris."))
        agent = create_agent(model, tools=[check_status], checkpointer=InMemorySaver(),
                             middleware=[SkillbankMiddleware(bank, background=False)])
        config = {"configurable": {"thread_id": "t1"}}
        stream = agent.stream(ASK, config, stream_mode="updates")
        for chunk in stream:
            if "model" in chunk:
                break
        stream.close()
        agent.invoke({"messages": [{"role": "user", "content": "What is the weather in Paris?"}],
                      "outcome": "success"}, config)
        (record,) = bank.experiences.list()
        assert record.task == "Where is order 1234?" and record.outcome == "success"
        actions = [s.action for s in record.steps if s.action]
        assert actions[0] == "check_status" and "agent loop" in actions
        stop = next(s for s in record.steps if s.action == "agent loop")
        assert "left unfinished" in stop.observation
        assert "What is the weather in Paris?" in str([s.model_dump() for s in record.steps])


@REMOTE
async def test_an_astream_closed_while_a_tool_runs_is_recorded_as_stopped(tmp_path, remote):
    """Closing the stream cancels the graph's running tasks: the tool call sees the cancel."""
    from langgraph.config import get_stream_writer

    @tool
    async def slow_migrate(table: str) -> str:
        """Migrate a table (slowly), saying when it starts."""
        get_stream_writer()({"started": table})
        await asyncio.Event().wait()  # until cancelled
        return "never"

    with bank_for(tmp_path, remote) as bank:
        model = script(call("slow_migrate", {"table": "orders"}, "c1"))
        agent = create_agent(model, tools=[slow_migrate],
                             middleware=[SkillbankMiddleware(bank, background=False)])
        stream = agent.astream({"messages": [{"role": "user",
                                              "content": "Migrate the orders table"}]},
                               stream_mode="custom")
        async for chunk in stream:
            assert chunk == {"started": "orders"}
            break
        await stream.aclose()
        record = only_record(bank)
        assert record.outcome == "partial"
        assert record.feedback == "The run was cancelled before it finished (CancelledError)."
        assert [s.action for s in record.steps if s.action] == ["slow_migrate"]
