"""Never on the event loop, continued (hunt-agents-team #2 and #3, session 31): what the async
paths of the adapters hand to a worker thread includes `bank.experiences` itself, and a failed
model or tool call is recorded off the loop.

- #2: `SkillbankMemoryBlock` looked a new session's open record up with
  ``asyncio.to_thread(self.bank.experiences.open_thread, ...)``: Python evaluates the argument,
  the `experiences` property, on the loop, and the property syncs another process's writes (in
  team mode under the deployment's write lock): with PostgreSQL down the whole loop froze for
  ~5 s at every new session.
- #3: `SkillbankMiddleware.awrap_model_call` / `awrap_tool_call` recorded a failed call with
  the sync `_on_failure` on the loop, which with ``background=False`` writes inline (a 5 s
  stall with PostgreSQL down).

No timing: every access to the `experiences` property and every `record_messages` notes the
thread it runs on, and none may be the loop's. In process and through a client of an owner
process (the adapters are faces over either).
"""

from __future__ import annotations

import threading
from typing import Any

import pytest

from owner_client import bank_for

REMOTE = pytest.mark.parametrize("remote", [False, True], ids=["in-process", "client-of-owner"])


def _watch(bank: Any, monkeypatch: pytest.MonkeyPatch) -> list[tuple[str, int]]:
    """The threads `open_thread` and `record_messages` run on and, in process, the thread the
    `experiences` property is read on (a client's is a plain attribute: its owner syncs)."""
    seen: list[tuple[str, int]] = []
    memory = bank.experiences
    for name in ("open_thread", "record_messages"):
        def noted(*args: Any, _name: str = name, _call: Any = getattr(memory, name),
                  **kwargs: Any) -> Any:
            seen.append((_name, threading.get_ident()))
            return _call(*args, **kwargs)

        monkeypatch.setattr(memory, name, noted)
    prop = getattr(type(bank), "experiences", None)
    if isinstance(prop, property):
        def experiences(self: Any) -> Any:
            seen.append(("experiences", threading.get_ident()))
            return prop.fget(self)

        monkeypatch.setattr(type(bank), "experiences", property(experiences))
    return seen


@REMOTE
async def test_the_memory_block_reads_bank_experiences_off_the_loop(tmp_path, monkeypatch,
                                                                     remote):
    pytest.importorskip("llama_index.core")
    from llama_index.core.agent.workflow import FunctionAgent
    from llama_index.core.base.llms.types import ChatMessage
    from llama_index.core.llms.mock import MockFunctionCallingLLM
    from llama_index.core.memory import Memory

    from skillbank.adapters.llamaindex import SkillbankMemoryBlock

    with bank_for(tmp_path, remote) as bank:
        block = SkillbankMemoryBlock(bank, raise_errors=True, background=False)
        seen = _watch(bank, monkeypatch)
        loop = threading.get_ident()
        llm = MockFunctionCallingLLM(response_generator=lambda messages, **kw: ChatMessage(
            role="assistant", content="Done."))
        memory = Memory.from_defaults(session_id="session-1", memory_blocks=[block])
        agent = FunctionAgent(tools=[], llm=llm, system_prompt="You are a DBA.")
        await agent.run(user_msg="Migrate the orders table", memory=memory)
        eid = await block.arecord_run(memory, outcome="success")
        assert eid and eid.startswith("exp-")
        assert {"open_thread", "record_messages"} <= {what for what, _ in seen}, seen
        assert remote or "experiences" in {what for what, _ in seen}, seen
        assert [what for what, thread in seen if thread == loop] == [], seen


@REMOTE
@pytest.mark.parametrize("fails", ["model", "tool"])
async def test_a_failed_async_call_is_recorded_off_the_loop(tmp_path, monkeypatch, remote,
                                                           fails):
    pytest.importorskip("langchain.agents")
    from langchain.agents import create_agent
    from langchain_core.tools import tool
    from scripted import call, script

    from skillbank.adapters.langchain import SkillbankMiddleware

    @tool
    def migrate(table: str) -> str:
        """Migrate a table."""
        raise RuntimeError("the migration tool crashed")

    replies = [RuntimeError("the model provider is down")] if fails == "model" else \
        [call("migrate", {"table": "orders"}, "c1")]
    with bank_for(tmp_path, remote) as bank:
        middleware = SkillbankMiddleware(bank, background=False, raise_errors=True)
        seen = _watch(bank, monkeypatch)
        loop = threading.get_ident()
        agent = create_agent(script(*replies), [migrate], middleware=[middleware])
        with pytest.raises(RuntimeError, match="provider is down|tool crashed"):
            await agent.ainvoke({"messages": [{"role": "user",
                                               "content": "Migrate the orders table"}]})
        assert ("record_messages" in {what for what, _ in seen}), seen
        assert [what for what, thread in seen if thread == loop] == [], seen
        failed = bank.experiences.list(kind="experience")
        assert [e.outcome for e in failed] == ["failure"], failed
