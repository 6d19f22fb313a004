"""A LlamaIndex session whose block and Memory are built anew for each request (a web handler
over a persistent chat store, or a restarted process) records each turn once (review 1 #1,
session 38).

The block noted Memory's queue at every `arecord_run`, so a flush was matched by position, but
that note lived in the block object: with a new block per request each flush was recorded
whole, and the next `arecord_run`, whose transcript no longer matched the record's end,
appended the whole queue again (26 steps stored as 89, each follow-up three to five times).
With no note the block now tells a flush from the thread's record and the Memory's history,
by position. A real `FunctionAgent` with a scripted model and a tool, a SQLite chat store the
requests share, in process and through a client of another process that owns the root.
"""

from __future__ import annotations

import collections

import pytest

pytest.importorskip("llama_index.core")
pytest.importorskip("aiosqlite")

from llama_index.core.agent.workflow import FunctionAgent  # noqa: E402
from llama_index.core.llms.mock import MockFunctionCallingLLM  # noqa: E402
from llama_index.core.memory import Memory  # noqa: E402
from llama_index.core.storage.chat_store.sql import SQLAlchemyChatStore  # noqa: E402
from llama_index.core.tools import FunctionTool  # noqa: E402

from owner_client import bank_for  # noqa: E402
from skillbank.adapters.llamaindex import SkillbankMemoryBlock  # noqa: E402
from test_llamaindex_long_session import check_disk, ops  # noqa: E402

TURNS = ["Free disk space before the backup"] + [
    text for host in range(1, 6) for text in (f"check disk db{host}", f"clean /tmp on db{host}")]


@pytest.mark.parametrize("remote", [False, True], ids=["in-process", "client-of-owner"])
async def test_a_block_per_request_records_each_turn_once(tmp_path, remote):
    store = SQLAlchemyChatStore(table_name="chat",
                                async_database_uri=f"sqlite+aiosqlite:///{tmp_path}/chat.db")
    agent = FunctionAgent(tools=[FunctionTool.from_defaults(check_disk)],
                          llm=MockFunctionCallingLLM(response_generator=ops), system_prompt="Ops.")
    with bank_for(tmp_path, remote) as bank:
        for number, text in enumerate(TURNS):  # one request each: a new block and Memory
            block = SkillbankMemoryBlock(bank, background=False)
            memory = Memory.from_defaults(session_id="ops-1", memory_blocks=[block],
                                          token_limit=800, chat_history_token_ratio=0.5,
                                          token_flush_size=300, chat_store=store)
            await agent.run(user_msg=text, memory=memory)
            await block.arecord_run(memory, outcome="success" if number == len(TURNS) - 1
                                    else "unknown")
        (record,) = bank.experiences.list(kind="experience", include_retired=True)
        assert record.task == TURNS[0] and record.outcome == "success"
        asked = [s.observation[len("User: "):] for s in record.steps
                 if (s.observation or "").startswith("User: ")]
        assert asked == TURNS[1:], collections.Counter(asked)  # each follow-up once, in order
        calls = [s.action_input["host"] for s in record.steps if s.action == "check_disk"]
        assert calls == [f"db{host}" for host in range(1, 6)], calls
        assert len(record.steps) == 26


async def test_a_user_repeating_the_first_message_is_recorded_once(tmp_path):
    # review 4 #2, session 38: the flush was anchored at the LATEST user message equal to the
    # record's task, and read whole, where the record left that repeated request out: no end
    # matched, the flush was recorded whole (20 steps, "clean /tmp on db2" asked twice, db1
    # checked three times). A block shared by every request records 16 steps.
    turns = ["check disk db1", "clean /tmp on db1", "check disk db2", "check disk db1",
             "clean /tmp on db2", "check disk db3", "clean /tmp on db3"]
    store = SQLAlchemyChatStore(table_name="chat",
                                async_database_uri=f"sqlite+aiosqlite:///{tmp_path}/chat.db")
    agent = FunctionAgent(tools=[FunctionTool.from_defaults(check_disk)],
                          llm=MockFunctionCallingLLM(response_generator=ops), system_prompt="Ops.")
    with bank_for(tmp_path, False) as bank:
        for number, text in enumerate(turns):  # one request each: a new block and Memory
            block = SkillbankMemoryBlock(bank, background=False)
            memory = Memory.from_defaults(session_id="ops-1", memory_blocks=[block],
                                          token_limit=800, chat_history_token_ratio=0.5,
                                          token_flush_size=300, chat_store=store)
            await agent.run(user_msg=text, memory=memory)
            await block.arecord_run(memory, outcome="success" if number == len(turns) - 1
                                    else "unknown")
        (record,) = bank.experiences.list(kind="experience", include_retired=True)
        asked = [s.observation[len("User: "):] for s in record.steps
                 if (s.observation or "").startswith("User: ")]
        # The repeated first request is recorded as the record's task, not as a step (as with
        # one block for every request); every other follow-up once, in order.
        assert asked == [t for t in turns[1:] if t != turns[0]], collections.Counter(asked)
        calls = [s.action_input["host"] for s in record.steps if s.action == "check_disk"]
        assert calls == ["db1", "db2", "db1", "db3"], calls
        assert len(record.steps) == 16
