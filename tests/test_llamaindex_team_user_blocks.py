"""A LlamaIndex agent with a team block and a user block rates what the team block shows
(hunt-li #3).

`SkillbankMemoryBlock(bank, namespace="team")` beside `SkillbankMemoryBlock(bank,
namespace="{user_id}")` showed `[gl-…] Always list breaking changes first` under "Ids in
[brackets] can be rated"; the user's `SkillbankToolSpec(bank, namespace="{user_id}")` answered
the model's rate_memory with "no guideline 'gl-…'; find ids … in the memory block", the very
block it took the id from. `SkillbankToolSpec(..., reads=[team_block])` reads the team's
namespace as the LangChain middleware's tools read what the run's other instances showed: a
vote on a team rule counts once, as the user's outside vote, and writes stay the user's. A real
`FunctionAgent` run, in process and through a client of another process that owns the root.
"""

from __future__ import annotations

import pytest

pytest.importorskip("llama_index.core")

from llama_index.core.agent.workflow import FunctionAgent, ToolCallResult  # noqa: E402
from llama_index.core.base.llms.types import ChatMessage  # noqa: E402
from llama_index.core.memory import Memory  # noqa: E402
from scripted_llama import scripted, tool_call  # noqa: E402
from workflows import Context  # noqa: E402

from owner_client import bank_for  # noqa: E402
from skillbank.adapters.llamaindex import SkillbankMemoryBlock, SkillbankToolSpec  # noqa: E402
from skillbank.errors import InvalidInputError  # noqa: E402

TASK = "Write the release notes for version 3.0"


async def run_agent(bank, spec: SkillbankToolSpec, blocks: list, calls: list) -> list[str]:
    """One run as alice; the tool replies the model got."""
    llm, seen = scripted([*calls, ChatMessage(role="assistant", content="Done.")])
    agent = FunctionAgent(tools=spec.to_tool_list(), llm=llm, system_prompt="You write notes.")
    ctx = Context(agent)
    await ctx.store.set("user_id", "alice")
    memory = Memory.from_defaults(session_id="s1", memory_blocks=blocks)
    handler = agent.run(user_msg=TASK, memory=memory, ctx=ctx)
    replies = [str(ev.tool_output.content) async for ev in handler.stream_events()
               if isinstance(ev, ToolCallResult)]
    await handler
    return replies, seen


@pytest.mark.parametrize("remote", [False, True], ids=["in-process", "client-of-owner"])
async def test_the_user_tools_rate_the_rules_the_team_block_shows(tmp_path, remote):
    with bank_for(tmp_path, remote) as bank:
        team_rule = bank.guidelines.add("Always list breaking changes first in release notes.",
                                        namespace="team").guideline_id
        own_rule = bank.guidelines.add("Always thank contributors by name in release notes.",
                                       namespace="alice").guideline_id
        team_block = SkillbankMemoryBlock(bank, namespace="team", name="team-memory",
                                          record=False, background=False)
        user_block = SkillbankMemoryBlock(bank, namespace="{user_id}", background=False)
        spec = SkillbankToolSpec(bank, namespace="{user_id}", reads=[team_block])
        calls = [tool_call("rate_memory", {"id": team_rule, "helpful": True}, "c1"),
                 tool_call("rate_memory", {"id": own_rule, "helpful": True}, "c2"),
                 tool_call("rate_memory", {"id": team_rule, "helpful": True}, "c3")]
        replies, seen = await run_agent(bank, spec, [team_block, user_block], calls)
        assert f"[{team_rule}]" in str(seen[0])  # the block the model took the id from
        assert not any("no guideline" in r for r in replies), replies
        team = bank.guidelines.get(team_rule)
        assert team.outside_votes == {"alice": 2} and team.helpful == 1  # one outsider, once
        assert bank.guidelines.get(own_rule).helpful == 1
        # Without reads=, the user's tools see only the user's memory (as before).
        alone = SkillbankToolSpec(bank, namespace="{user_id}")
        replies, _ = await run_agent(bank, alone, [team_block, user_block], calls[:1])
        assert any("no guideline" in r for r in replies), replies



@pytest.mark.parametrize("remote", [False, True], ids=["in-process", "client-of-owner"])
async def test_the_user_tools_search_the_namespaces_they_read(tmp_path, remote):
    """hunt-lxteam #5, session 37: `reads=[team_block]` made ids of the team block ratable, but
    search_guidelines answered "No guideline applies." for the team rule the block showed, and
    memory_context and recall_experiences left the team's memory out: they searched the user's
    namespace alone. They search the namespaces the tools read (the user's and the team's),
    never another user's."""
    with bank_for(tmp_path, remote) as bank:
        team_rule = bank.guidelines.add("Always list breaking changes first in release notes.",
                                        namespace="team").guideline_id
        bobs = bank.guidelines.add("Always sign release notes with Bob's initials.",
                                   namespace="bob").guideline_id
        team_run = bank.experiences.record(task=TASK, outcome="success", namespace="team")
        team_block = SkillbankMemoryBlock(bank, namespace="team", name="team-memory",
                                          record=False, background=False)
        user_block = SkillbankMemoryBlock(bank, namespace="{user_id}", background=False)
        calls = [tool_call("search_guidelines", {"task": TASK}, "c1"),
                 tool_call("recall_experiences", {"task": TASK}, "c2"),
                 tool_call("memory_context", {"task": TASK}, "c3")]
        spec = SkillbankToolSpec(bank, namespace="{user_id}", reads=[team_block],
                                 include="all")
        replies, seen = await run_agent(bank, spec, [team_block, user_block], calls)
        assert f"[{team_rule}]" in str(seen[0])  # what the team block shows ...
        assert team_rule in replies[0] and team_run in replies[1], replies  # ... is found
        assert team_rule in replies[2] and team_run in replies[2], replies[2]
        assert not any(bobs in r for r in replies), replies  # never another user's
        # Without reads=, the user's tools search only the user's memory (as before).
        alone = SkillbankToolSpec(bank, namespace="{user_id}", include="all")
        replies, _ = await run_agent(bank, alone, [team_block, user_block], calls)
        assert not any(team_rule in r or team_run in r or bobs in r for r in replies), replies


def test_reads_takes_blocks_or_plain_namespaces_only(tmp_path):
    with bank_for(tmp_path, False) as bank:
        assert SkillbankToolSpec(bank, reads="team").reads == ("team",)
        for bad in (["{team_id}"], [SkillbankMemoryBlock(bank)], ["*"]):
            with pytest.raises(InvalidInputError):
                SkillbankToolSpec(bank, reads=bad)
