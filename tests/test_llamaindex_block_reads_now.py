"""The LlamaIndex memory block reads memory as it is now (hunt-lxteam #1, #2 and #6, session 37).

The block caches its read so `FunctionAgent`, which reads memory before every LLM call of its
tool loop, looks memory up once per user turn. The cache was keyed on (session, namespace,
position, request) only, with no run and no expiry:

* #1: a support bot with a fixed session id got the same question in a new `Memory`: the
  second run's prompt held the first run's memory, without the rule learned from the user's
  critique through `arecord_run` nor a colleague's rule added since (a new block showed both).
* #2: a read that failed (PostgreSQL stopped) was cached as "no memory" and stayed so after
  PostgreSQL came back.
* #6: during a Chroma outage the `memory_context` tool says the memory was searched by keyword
  only; the block dropped that note.

Real banks, a real `FunctionAgent` with the scripted LLM, a real PostgreSQL and `chroma run`.
"""

from __future__ import annotations

import time

import pytest

pytest.importorskip("llama_index.core")

from llama_index.core.agent.workflow import FunctionAgent, ToolCallResult  # noqa: E402
from llama_index.core.base.llms.types import ChatMessage  # noqa: E402
from llama_index.core.memory import Memory  # noqa: E402
from scripted_llama import scripted, tool_call  # noqa: E402
from workflows import Context  # noqa: E402

from skillbank import Skillbank  # noqa: E402
from skillbank.adapters.llamaindex import SkillbankMemoryBlock, SkillbankToolSpec  # noqa: E402
from test_chroma_outage import alice_bank_while_chroma_is_down, own_chroma  # noqa: E402,F401

QUESTION = "Where is my order 1234?"
TRACKING = "Always include the tracking link when telling a customer where an order is."
APOLOGY = "Always apologise when an order is late or its status is asked twice."


def _system(prompt: list) -> str:
    return "\n".join(str(m.content) for m in prompt if m.role.value == "system")


async def ask(block: SkillbankMemoryBlock, calls: list = (), tools: list = ()) -> tuple:
    """One run as alice in a new Memory of the channel's fixed session id: (memory, ctx, the
    prompts the LLM got, the tool replies)."""
    llm, seen = scripted([*calls, ChatMessage(role="assistant", content="It shipped Monday.")])
    agent = FunctionAgent(tools=list(tools), llm=llm, system_prompt="You are a support agent.")
    ctx = Context(agent)
    await ctx.store.set("user_id", "alice")
    memory = Memory.from_defaults(session_id="support-chat", memory_blocks=[block])
    handler = agent.run(user_msg=QUESTION, memory=memory, ctx=ctx)
    replies = [str(ev.tool_output.content) async for ev in handler.stream_events()
               if isinstance(ev, ToolCallResult)]
    await handler
    return memory, ctx, seen, replies


async def test_a_new_run_on_the_same_session_reads_memory_as_it_is_now(tmp_path, monkeypatch):
    with Skillbank.open(tmp_path / "bank", include_bundled=False) as bank:
        block = SkillbankMemoryBlock(bank, namespace="{user_id}", background=False)
        memory, ctx, seen, _ = await ask(block)
        assert TRACKING not in _system(seen[0])
        # The user's critique, learned through the block; and a colleague's rule for alice.
        await block.arecord_run(memory, ctx=ctx, outcome="success", feedback=TRACKING)
        assert block.last_error is None
        bank.guidelines.add(APOLOGY, namespace="alice")

        lookups: list = []
        real = bank.context_for
        monkeypatch.setattr(bank, "context_for",
                            lambda task, *a, **k: lookups.append(task) or real(task, *a, **k))
        spec = SkillbankToolSpec(bank, namespace="{user_id}")
        _, _, seen, _ = await ask(block, [tool_call("find_skills", {"task": QUESTION}, "c1")],
                                  spec.to_tool_list())
        assert len(seen) == 2  # the tool loop: memory before each LLM call ...
        for prompt in seen:
            assert "tracking link" in _system(prompt) and "apologise" in _system(prompt)
        assert len(lookups) == 1, lookups  # ... looked up once for the turn


async def test_a_read_outside_a_workflow_shows_what_the_block_learned_since(tmp_path):
    """A custom loop's `memory.aget` names no Memory: what the block records or learns is
    shown by its next read of the same request."""
    with Skillbank.open(tmp_path / "bank", include_bundled=False) as bank:
        block = SkillbankMemoryBlock(bank, namespace="alice", background=False)
        turn = [ChatMessage(role="user", content=QUESTION)]
        assert "tracking link" not in await block.aget(turn, session_id="s")
        await block.arecord_run(turn + [ChatMessage(role="assistant", content="It shipped.")],
                                outcome="success", feedback=TRACKING)
        assert block.last_error is None
        assert "tracking link" in await block.aget(turn, session_id="s")


async def test_a_read_outside_a_workflow_shows_a_rule_added_by_someone_else(tmp_path):
    """Review 1, session 37: outside a workflow step every read with the same session, question
    and history was served from one cache entry, so a rule another worker added never came
    (a block that records nothing never cleared it)."""
    with Skillbank.open(tmp_path / "bank", include_bundled=False) as bank:
        block = SkillbankMemoryBlock(bank, namespace="alice", record=False, background=False)
        turn = [ChatMessage(role="user", content=QUESTION)]
        assert "tracking link" not in await block.aget(turn, session_id="s1")
        bank.guidelines.add(TRACKING, namespace="alice")  # a colleague, elsewhere
        assert "tracking link" in await block.aget(turn, session_id="s1")


async def test_a_read_that_failed_is_not_kept_after_postgres_is_back(
        tmp_path, chroma_server, own_postgres):
    root = tmp_path / "root"
    with Skillbank.open(root, database_url=own_postgres.url, chroma_url=chroma_server,
                        deployment=f"lx{time.time_ns()}", include_bundled=False) as bank:
        bank.guidelines.add(TRACKING, namespace="alice")
        block = SkillbankMemoryBlock(bank, namespace="alice", background=False)
        turn = [ChatMessage(role="user", content=QUESTION)]
        own_postgres.stop()
        assert await block.aget(turn, session_id="s") == ""  # logged, no memory
        assert block.last_error is not None
        own_postgres.start()
        deadline = time.monotonic() + 60
        while True:  # the bank answers again (its pool reconnects)
            try:
                if "tracking link" in bank.context_for(QUESTION, namespace="alice").text:
                    break
            except Exception:  # noqa: BLE001 - still reconnecting
                pass
            assert time.monotonic() < deadline, "the bank did not answer again"
            time.sleep(0.5)
        assert "tracking link" in await block.aget(turn, session_id="s")


async def test_the_block_says_its_memory_was_searched_by_keyword_while_chroma_is_down(
        tmp_path, own_chroma):  # noqa: F811 - the fixture
    with alice_bank_while_chroma_is_down(tmp_path / "root", own_chroma, TRACKING,
                                         QUESTION) as bank:
        block = SkillbankMemoryBlock(bank, namespace="{user_id}", background=False)
        spec = SkillbankToolSpec(bank, namespace="{user_id}")
        _, _, seen, replies = await ask(
            block, [tool_call("memory_context", {"task": QUESTION}, "c1")], spec.to_tool_list())
        assert "keyword only" in replies[0], replies  # what the tool tells the model ...
        shown = _system(seen[0])
        assert "tracking link" in shown
        assert "keyword only" in shown, shown  # ... the block tells it too
