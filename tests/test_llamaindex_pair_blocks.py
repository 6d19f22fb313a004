"""A personal root's memory block beside a team's in one LlamaIndex agent shows each item once,
the first block's where both hold it (LlamaIndex hunt, session 21, #5).

Both blocks showed ``**release-notes** [skill:release-notes]`` with other instructions, the same
rule twice and two preambles, and nothing said which counted. ``Memory`` asks its blocks in
priority order (list order among equals); a later skillbank block now leaves out what an earlier
one shows (``skillbank.context.without_shown``, as LangChain middleware instances do), so the
block listed first wins. A real ``FunctionAgent`` run, two turns; the personal root in process
and through a client of another process that owns it.
"""

from __future__ import annotations

import pytest

pytest.importorskip("llama_index.core")

from llama_index.core.agent.workflow import FunctionAgent  # noqa: E402
from llama_index.core.base.llms.types import ChatMessage  # noqa: E402
from llama_index.core.memory import Memory  # noqa: E402
from scripted_llama import scripted  # noqa: E402

from owner_client import bank_for  # noqa: E402
from skillbank import Skillbank  # noqa: E402
from skillbank.adapters.llamaindex import SkillbankMemoryBlock  # noqa: E402
from skillbank.embeddings import HashEmbedding  # noqa: E402

TASK = "Write the release notes for version 3.0"
SHARED_RULE = "Always link every pull request in release notes."


def _fill(bank, order: str, own_rule: str) -> None:
    bank.skills.save("release-notes", "Write release notes for a new version of the product.",
                     f"# Steps\n1. List breaking changes {order}.\n")
    bank.guidelines.add(SHARED_RULE)
    bank.guidelines.add(own_rule)


async def _prompt(memory: Memory, blocks: list) -> str:
    llm, seen = scripted([ChatMessage(role="assistant", content="Done.")])
    agent = FunctionAgent(tools=[], llm=llm, system_prompt="You write release notes.")
    await agent.run(user_msg=TASK, memory=memory)
    return "\n".join(str(m.content) for m in seen[0])


@pytest.mark.parametrize("remote", [False, True], ids=["in-process", "client-of-owner"])
async def test_a_personal_and_a_team_block_show_each_item_once(tmp_path, remote):
    with bank_for(tmp_path, remote) as personal, \
            Skillbank.open(tmp_path / "team-root", embedding_function=HashEmbedding(),
                           include_bundled=False) as team:
        _fill(personal, "last", "Always thank contributors by name in release notes.")
        _fill(team, "first", "Always give the upgrade steps in release notes.")
        blocks = [SkillbankMemoryBlock(personal, name="personal-memory", record=False,
                                       background=False),
                  SkillbankMemoryBlock(team, name="team-memory", record=False,
                                       background=False)]
        memory = Memory.from_defaults(session_id="s1", memory_blocks=blocks)
        for turn in range(2):  # every read of the memory composes the same way
            prompt = await _prompt(memory, blocks)
            assert prompt.count("[skill:release-notes]") == 1, prompt
            assert "breaking changes last" in prompt and "breaking changes first" not in prompt
            assert prompt.count(SHARED_RULE) == 1, prompt
            assert "thank contributors" in prompt and "upgrade steps" in prompt, prompt
