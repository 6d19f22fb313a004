"""`await handler.cancel_run()`, LlamaIndex's own way to cancel a run, is a stop, not a failure
(hunt-llama #3, session 35).

The run ends with `workflows.errors.WorkflowCancelledByUser`, an `Exception`, and
`_runs.is_stop` took only what is not an `Exception` (`asyncio.CancelledError`) for a stop.
Before, `arecord_run(memory, error=err, ctx=handler.ctx)` recorded the run as a failure with
the feedback 'WorkflowCancelledByUser', which closed the session's episode: the retry on the
same session ("ok try again") became a second record and the cancelled one stayed a failure in
later memory blocks. Now it is recorded as a cancelled `asyncio` task is: outcome `unknown`, a
last step naming the stop, and the retry goes on with the same record. No framework is
imported by `_runs` to know it. A real `FunctionAgent` run, in process and through a client of
another process that owns the root.
"""

from __future__ import annotations

import asyncio

import pytest

pytest.importorskip("llama_index.core")

from llama_index.core.agent.workflow import FunctionAgent  # noqa: E402
from llama_index.core.base.llms.types import ChatMessage  # noqa: E402
from llama_index.core.memory import Memory  # noqa: E402
from llama_index.core.tools import FunctionTool  # noqa: E402
from scripted_llama import scripted, tool_call  # noqa: E402
from workflows.errors import WorkflowCancelledByUser  # noqa: E402

from owner_client import bank_for  # noqa: E402
from skillbank.adapters._runs import is_stop, stop_feedback  # noqa: E402
from skillbank.adapters.llamaindex import SkillbankMemoryBlock  # noqa: E402


@pytest.mark.parametrize("remote", [False, True], ids=["in-process", "client-of-owner"])
async def test_a_run_cancelled_with_cancel_run_keeps_its_episode_open(tmp_path, remote):
    started = asyncio.Event()

    async def refund(order_id: str) -> str:
        """Issue a refund for an order."""
        started.set()
        await asyncio.Event().wait()  # until the run is cancelled
        return "refunded"

    with bank_for(tmp_path, remote) as bank:
        block = SkillbankMemoryBlock(bank, background=False)
        memory = Memory.from_defaults(session_id="sess-c", memory_blocks=[block])
        llm, _ = scripted([tool_call("refund", {"order_id": "1234"}, "c1"),
                           ChatMessage(role="assistant", content="Order 1234 shipped.")])
        agent = FunctionAgent(tools=[FunctionTool.from_defaults(async_fn=refund)], llm=llm,
                              system_prompt="You are support.")
        handler = agent.run(user_msg="Please refund order 1234 now", memory=memory)
        await started.wait()
        await handler.cancel_run()
        with pytest.raises(WorkflowCancelledByUser) as cancelled:
            await handler
        eid = await block.arecord_run(memory, error=cancelled.value, ctx=handler.ctx)

        record = bank.experiences.get(eid)
        assert record.outcome == "unknown" and record.feedback is None, record
        assert record.steps[0].action == "refund"
        assert record.steps[-1].observation == (
            "error: The run was cancelled (handler.cancel_run()) before it finished "
            "(WorkflowCancelledByUser).")

        # The retry goes on with the same record, and its outcome lands there.
        await agent.run(user_msg="ok try again: where is order 1234", memory=memory)
        assert await block.arecord_run(memory, outcome="success") == eid
        bank.flush()
        assert [(e.id, e.task, e.outcome) for e in bank.experiences.list()] == [
            (eid, "Please refund order 1234 now", "success")]


def test_the_stop_is_known_by_name_without_importing_a_framework():
    assert is_stop(WorkflowCancelledByUser()) and is_stop(asyncio.CancelledError())
    assert not is_stop(RuntimeError("the model timed out"))

    # Another package's class of the same name is no stop.
    namesake = type("WorkflowCancelledByUser", (Exception,), {"__module__": "someapp.errors"})
    assert not is_stop(namesake())
    assert "cancelled" in stop_feedback(WorkflowCancelledByUser())
    import ast
    from pathlib import Path

    import skillbank.adapters._runs as runs

    tree = ast.parse(Path(runs.__file__).read_text())
    imported = {n.module or "" for n in ast.walk(tree) if isinstance(n, ast.ImportFrom)} | {
        a.name for n in ast.walk(tree) if isinstance(n, ast.Import) for a in n.names}
    assert not [m for m in imported if m.split(".")[0] in ("workflows", "llama_index")]
