"""A lone surrogate in a task gets one clear error from every read (hunt-li #6).

A web client cut an emoji's escape in half (``"Write the sales report \\ud83d"``, which
`json.loads` turns into a lone surrogate). `guidelines.search`, the retriever and
`experiences.record` said "task is not valid Unicode text (it holds a lone surrogate)", but
`context_for` and `skills.search` raised the tokenizer's raw `TypeError: TextEncodeInput must be
Union[...]`; the memory block logged a traceback and the agent got no memory. With the offline
MiniLM model (the hash embedding encodes anything), in process and through a client of another
process that owns the root.
"""

from __future__ import annotations

import json

import pytest

from owner_client import bank_for
from skillbank.errors import InvalidInputError

TASK = json.loads('"Write the sales report \\ud83d"')

READS = {
    "context_for": lambda bank: bank.context_for(TASK),
    "skills.search": lambda bank: bank.skills.search(TASK),
    "guidelines.search": lambda bank: bank.guidelines.search(TASK),
    "experiences.recall": lambda bank: bank.experiences.recall(TASK),
}


@pytest.mark.parametrize("remote", [False, True], ids=["in-process", "client-of-owner"])
def test_every_read_names_the_lone_surrogate(tmp_path, minilm, remote):
    with bank_for(tmp_path, remote, minilm) as bank:
        bank.guidelines.add("Always use metric units in sales reports.")
        bank.experiences.record(task="Write the sales report for March", outcome="success")
        bank.skills.create("sales-report", "Writes the monthly sales report.", "# Steps\n")
        for name, read in READS.items():
            with pytest.raises(InvalidInputError, match="lone surrogate") as caught:
                read(bank)
            assert "task" in str(caught.value), name
        assert bank.context_for("Write the sales report").guidelines  # the bank still answers


@pytest.mark.parametrize("remote", [False, True], ids=["in-process", "client-of-owner"])
async def test_a_cut_emoji_in_a_chat_is_recorded_one_character_short(tmp_path, minilm, remote):
    """From a chat the text is repaired, not refused: the agent got no memory and its run went
    unrecorded (the record refused the task and the steps), for half an emoji."""
    pytest.importorskip("llama_index.core")
    from llama_index.core.agent.workflow import FunctionAgent
    from llama_index.core.base.llms.types import ChatMessage
    from llama_index.core.memory import Memory
    from scripted_llama import scripted

    from skillbank.adapters.llamaindex import SkillbankMemoryBlock

    with bank_for(tmp_path, remote, minilm) as bank:
        bank.guidelines.add("Always use metric units in sales reports.")
        block = SkillbankMemoryBlock(bank, background=False)
        memory = Memory.from_defaults(session_id="s1", memory_blocks=[block])
        llm, seen = scripted([ChatMessage(role="assistant", content="Done.")])
        agent = FunctionAgent(tools=[], llm=llm, system_prompt="You write reports.")
        await agent.run(user_msg=TASK, memory=memory)
        assert "metric units" in "\n".join(str(m.content) for m in seen[0])
        assert block.last_error is None
        assert await block.arecord_run(memory, outcome="success") is not None
        assert [r.task for r in bank.experiences.list()] == ["Write the sales report \ufffd"]
        record = bank.experiences.record_messages([{"role": "user", "content": TASK},
                                                   {"role": "assistant", "content": "Done " + TASK[-1]}],
                                                  outcome="success")
        assert bank.experiences.get(record).task == "Write the sales report \ufffd"
