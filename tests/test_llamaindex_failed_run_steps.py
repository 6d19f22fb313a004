"""A failed LlamaIndex run keeps the tool calls it made before it raised (hunt-li #4).

The agent looked the order up, issued the refund, and then the provider raised. `arecord_run(
memory, error=exc)` recorded one step, "(the run failed: ...)": `FunctionAgent` keeps a run's
tool calls and results in the Context's scratchpad until the run ends, and `Memory` held only
the user message, so the refund actually issued was not in memory. `arecord_run(..., ctx=ctx)`
now records them. A real `FunctionAgent` run, in process and through a client of another
process that owns the root.
"""

from __future__ import annotations

import pytest

pytest.importorskip("llama_index.core")

from llama_index.core.agent.workflow import FunctionAgent  # noqa: E402
from llama_index.core.base.llms.types import ChatMessage  # noqa: E402
from llama_index.core.memory import Memory  # noqa: E402
from llama_index.core.tools import FunctionTool  # noqa: E402
from scripted_llama import scripted, tool_call  # noqa: E402
from workflows import Context  # noqa: E402

from owner_client import bank_for  # noqa: E402
from skillbank.adapters.llamaindex import SkillbankMemoryBlock  # noqa: E402


def order_status(order_id: str) -> str:
    """Look up an order."""
    return f"order {order_id}: delayed"


def refund(order_id: str) -> str:
    """Refund an order."""
    return f"refund of order {order_id} queued"


def agent_with(replies: list) -> FunctionAgent:
    llm, _ = scripted(replies)
    return FunctionAgent(tools=[FunctionTool.from_defaults(order_status),
                                FunctionTool.from_defaults(refund)],
                         llm=llm, system_prompt="You are a support agent.")


CALLS = [tool_call("order_status", {"order_id": "42"}, "c1"),
         tool_call("refund", {"order_id": "42"}, "c2")]


@pytest.mark.parametrize("remote", [False, True], ids=["in-process", "client-of-owner"])
async def test_the_tool_calls_before_the_failure_are_recorded(tmp_path, remote):
    with bank_for(tmp_path, remote) as bank:
        block = SkillbankMemoryBlock(bank, background=False)
        agent = agent_with([*CALLS, RuntimeError("rate limited by the provider")])
        memory = Memory.from_defaults(session_id="f1", memory_blocks=[block])
        ctx = Context(agent)
        with pytest.raises(RuntimeError) as caught:
            await agent.run(user_msg="Refund order 42, it is late", memory=memory, ctx=ctx)
        eid = await block.arecord_run(memory, error=caught.value, ctx=ctx)
        record = bank.experiences.get(eid)
        assert record.outcome == "failure" and "rate limited" in record.feedback
        # The failure is an error step of its own, not the run's "final answer" (as the
        # LangChain middleware records it; hunt-agents #5, session 29).
        assert [s.action for s in record.steps if s.action] == [
            "order_status", "refund", "agent run"]
        assert record.steps[-1].observation == "error: RuntimeError: rate limited by the provider"
        refund_step = next(s for s in record.steps if s.action == "refund")
        assert refund_step.action_input == {"order_id": "42"}
        assert refund_step.observation == "refund of order 42 queued"


async def test_a_run_that_ended_is_recorded_once_with_its_ctx(tmp_path):
    with bank_for(tmp_path, False) as bank:
        block = SkillbankMemoryBlock(bank, background=False)
        agent = agent_with([*CALLS, ChatMessage(role="assistant", content="Refunded.")])
        memory = Memory.from_defaults(session_id="f2", memory_blocks=[block])
        ctx = Context(agent)
        await agent.run(user_msg="Refund order 42, it is late", memory=memory, ctx=ctx)
        eid = await block.arecord_run(memory, outcome="success", ctx=ctx)
        assert [s.action for s in bank.experiences.get(eid).steps if s.action] == [
            "order_status", "refund", "final answer"]
