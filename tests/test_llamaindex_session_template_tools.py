"""`SkillbankToolSpec(namespace="{session_id}")` fills the template from the session of the
`Memory` given to `agent.run`, as the memory block beside it does (hunt-async #4, session 34).

Before, the block recorded the run in namespace `alice` while every write of the tools was
refused: "namespace template '{session_id}' needs 'session_id': ... or pass it to
memory.aget(session_id=...)", a hint that means nothing to a tool call, and alice's rule was
never stored. A real `FunctionAgent` run with a scripted LLM, in process and through a client
of another process that owns the root.
"""

from __future__ import annotations

import pytest

pytest.importorskip("llama_index.core")

from llama_index.core.agent.workflow import FunctionAgent, ToolCallResult  # noqa: E402
from llama_index.core.base.llms.types import ChatMessage  # noqa: E402
from llama_index.core.memory import Memory  # noqa: E402
from scripted_llama import scripted, tool_call  # noqa: E402

from owner_client import bank_for  # noqa: E402
from skillbank import Scope  # noqa: E402
from skillbank.adapters.llamaindex import SkillbankMemoryBlock, SkillbankToolSpec  # noqa: E402

RULE = "Always sign emails with the team name."


@pytest.mark.parametrize("remote", [False, True], ids=["in-process", "client-of-owner"])
async def test_the_tools_write_into_the_memory_s_session_namespace(tmp_path, remote):
    with bank_for(tmp_path, remote) as bank:
        block = SkillbankMemoryBlock(bank, namespace="{session_id}", background=False)
        spec = SkillbankToolSpec(bank, namespace="{session_id}")
        llm, _seen = scripted([tool_call("learn_from_critique", {"critique": RULE}, "c1"),
                               ChatMessage(role="assistant", content="Done.")])
        agent = FunctionAgent(tools=spec.to_tool_list(), llm=llm, system_prompt="You help.")
        memory = Memory.from_defaults(session_id="alice", memory_blocks=[block])
        handler = agent.run(user_msg="Write the weekly email", memory=memory)
        replies = [str(ev.tool_output.content) async for ev in handler.stream_events()
                   if isinstance(ev, ToolCallResult)]
        await handler
        await block.arecord_run(memory, outcome="success")
        bank.flush()

        assert len(replies) == 1 and "needs 'session_id'" not in replies[0], replies
        alice = bank.scoped(Scope(principal="alice", namespace="alice", role="contributor"))
        assert [g.text for g in alice.guidelines.list()] == [RULE]
        assert [e.task for e in alice.experiences.list(namespace="alice")] == \
            ["Write the weekly email"]
        # The run's record and the rule are alice's only.
        assert RULE not in [g.text for g in bank.guidelines.list()]


async def test_the_memory_s_session_comes_before_the_context_store_s_and_the_docs_say_so():
    """Review 2 #7, session 34: a step with `ctx.store.set("session_id", "alice")` and a
    `Memory` fills a tool's `{session_id}` from the Memory (the memory block's order), and
    `Memory.from_defaults()` has a random session: the tool's writes silently left "alice".
    By design, but docs/scope.md did not say it. The order is pinned, and the docs say it."""
    import re
    from pathlib import Path

    from workflows import Context, Workflow, step
    from workflows.events import StartEvent, StopEvent

    from skillbank.adapters._li_namespace import resolve_namespace

    class Step(Workflow):
        @step
        async def go(self, ctx: Context, ev: StartEvent) -> StopEvent:
            if ev.get("memory"):  # as agent.run(memory=...) keeps it
                await ctx.store.set("memory", Memory.from_defaults(session_id="bob"))
            await ctx.store.set("session_id", "alice")
            return StopEvent(result=await resolve_namespace("{session_id}"))

    assert await Step().run(memory=True) == "bob"
    assert await Step().run(memory=False) == "alice"
    scope = re.sub(r"\s+", " ", (Path(__file__).parents[1] / "docs" / "scope.md").read_text())
    assert ("a Context-store `session_id` is used only when the step has no `Memory`" in scope)
    assert "`Memory.from_defaults(session_id=\"alice\")`" in scope
