"""LlamaIndex agents as they really run: follow-ups, failures, ReActAgent, retriever conventions.

Real bank (hash embedding), real `FunctionAgent` / `ReActAgent` and `Memory`; the LLM is scripted.
"""

from __future__ import annotations

import copy

import pytest

pytest.importorskip("llama_index.core")

from llama_index.core.agent.workflow import FunctionAgent, ReActAgent  # noqa: E402
from llama_index.core.base.llms.types import ChatMessage  # noqa: E402
from llama_index.core.memory import InsertMethod, Memory  # noqa: E402
from llama_index.core.tools import FunctionTool  # noqa: E402
from llama_index.core.vector_stores.types import (  # noqa: E402
    FilterOperator,
    MetadataFilter,
    MetadataFilters,
)
from scripted_llama import scripted, tool_call  # noqa: E402

from skillbank import Skillbank  # noqa: E402
from skillbank.adapters.llamaindex import SkillbankMemoryBlock, SkillbankRetriever  # noqa: E402
from skillbank.embeddings import HashEmbedding  # noqa: E402
from skillbank.errors import InvalidInputError  # noqa: E402


@pytest.fixture
def bank(tmp_path):
    bank = Skillbank.open(tmp_path / "bank", embedding_function=HashEmbedding())
    bank.skills.create("db-migration", "Plans and runs database schema migrations: lock the "
                       "table, copy rows, swap. Use to migrate a table.",
                       "# Migrate\n\n1. Lock the table.\n2. Copy rows.\n")
    bank.guidelines.add("Always migrate with a rollback script.", topic="db",
                        when_to_use="When migrating a table")
    yield bank
    bank.close()


def migrate(table: str) -> str:
    """Run the schema migration of a table."""
    return f"{table} migrated"


def system_of(prompt: list) -> str:
    return "\n".join(m.content or "" for m in prompt if m.role.value == "system")


def spy_on(bank, monkeypatch) -> list:
    calls: list = []
    real = bank.context_for
    monkeypatch.setattr(bank, "context_for",
                        lambda task, *a, **k: calls.append(task) or real(task, *a, **k))
    return calls


async def test_follow_up_keeps_the_session_goal(bank, monkeypatch):
    calls = spy_on(bank, monkeypatch)
    llm, seen = scripted([ChatMessage(role="assistant", content="Plan ready. Go ahead?"),
                          tool_call("migrate", {"table": "orders"}, "t1"),
                          ChatMessage(role="assistant", content="Migrated.")])
    block = SkillbankMemoryBlock(bank)
    memory = Memory.from_defaults(session_id="s1", memory_blocks=[block])
    agent = FunctionAgent(tools=[FunctionTool.from_defaults(migrate)], llm=llm,
                          system_prompt="You are a DBA.")
    await agent.run(user_msg="Migrate the orders table", memory=memory)
    await block.arecord_run(memory)
    await agent.run(user_msg="yes, go ahead", memory=memory)
    eid = await block.arecord_run(memory, outcome="success")

    assert calls == ["Migrate the orders table", "Migrate the orders table\nyes, go ahead"]
    assert "rollback script" in system_of(seen[-1])
    experience = bank.experiences.get(eid)
    assert experience.task == "Migrate the orders table" and experience.outcome == "success"
    # One session, one experience: the first turn's step, then the follow-up's (issue 25).
    steps = [(s.action, s.observation) for s in experience.steps]
    assert steps[0][1] == "Plan ready. Go ahead?"
    assert steps[1] == (None, "User: yes, go ahead") and steps[2][0] == "migrate"
    assert [e.id for e in bank.experiences.list(kind="experience")] == [eid]


async def test_a_failed_run_is_recorded_with_its_error(bank):
    llm, _ = scripted([tool_call("migrate", {"table": "orders"}, "t1"),
                       TimeoutError("the model timed out after 60 s")])
    block = SkillbankMemoryBlock(bank)
    memory = Memory.from_defaults(session_id="s2", memory_blocks=[block])
    agent = FunctionAgent(tools=[FunctionTool.from_defaults(migrate)], llm=llm,
                          system_prompt="You are a DBA.")
    with pytest.raises(Exception) as raised:
        await agent.run(user_msg="Migrate the orders table", memory=memory)
    eid = await block.arecord_run(memory, error=raised.value)
    experience = bank.experiences.get(eid)
    assert experience.outcome == "failure" and experience.task == "Migrate the orders table"
    assert "TimeoutError" in experience.feedback and "timed out" in experience.feedback
    # A failure is an outcome: it ends the episode, so the next request is a new task.
    assert not block._goals[("s2", None)]["open"]  # per session and namespace


async def test_distill_true_gives_a_recorded_run_its_lessons(bank):
    """As the LangChain middleware's distill=True: a run recorded with an outcome is distilled
    (here by the rule distiller), a flush with no outcome is not."""
    llm, _ = scripted([tool_call("migrate", {"table": "orders"}, "t1"),
                       ChatMessage(role="assistant", content="Migrated.")])
    block = SkillbankMemoryBlock(bank, distill=True, background=False)
    memory = Memory.from_defaults(session_id="d1", memory_blocks=[block])
    agent = FunctionAgent(tools=[FunctionTool.from_defaults(migrate)], llm=llm,
                          system_prompt="You are a DBA.")
    await agent.run(user_msg="Migrate the orders table", memory=memory)
    eid = await block.arecord_run(memory, outcome="failure",
                                  feedback="Lock the table before copying rows.")
    lessons = [r for r in bank.experiences.list(kind="lesson") if r.source == eid]
    assert lessons, "the recorded failure was not distilled"


def test_a_misspelt_block_option_is_an_error_not_ignored(bank):
    """`namspace="{user_id}"` was accepted and ignored: every user shared one namespace."""
    from pydantic import ValidationError

    with pytest.raises(ValidationError, match="namspace"):
        SkillbankMemoryBlock(bank, namspace="{user_id}")


def react_reply(text: str) -> ChatMessage:
    return ChatMessage(role="assistant", content=f"Thought: I can answer without tools.\nAnswer: {text}")


async def test_react_agent_recipe(bank):
    # Without a system_prompt ReActAgent drops the first system message: the memory.
    llm, seen = scripted([react_reply("done")])
    memory = Memory.from_defaults(session_id="r0", memory_blocks=[SkillbankMemoryBlock(bank)])
    await ReActAgent(tools=[], llm=llm).run(user_msg="Migrate the orders table", memory=memory)
    assert "rollback script" not in "\n".join(m.content or "" for m in seen[0])

    # Recipe 1: give the agent a system prompt; the memory then reaches the LLM.
    llm, seen = scripted([react_reply("done")])
    memory = Memory.from_defaults(session_id="r1", memory_blocks=[SkillbankMemoryBlock(bank)])
    await ReActAgent(tools=[], llm=llm, system_prompt="You are a DBA.").run(
        user_msg="Migrate the orders table", memory=memory)
    assert "rollback script" in "\n".join(m.content or "" for m in seen[0])

    # Recipe 2: put memory blocks in the user message instead.
    llm, seen = scripted([react_reply("done")])
    memory = Memory.from_defaults(session_id="r2", memory_blocks=[SkillbankMemoryBlock(bank)],
                                  insert_method=InsertMethod.USER)
    await ReActAgent(tools=[], llm=llm).run(user_msg="Migrate the orders table", memory=memory)
    assert "rollback script" in "\n".join(m.content or "" for m in seen[0])


async def test_retriever_conventions(bank):
    failed = bank.experiences.record(task="Migrate the users table", outcome="failure",
                                     feedback="Forgot the lock.", tags=["db"])
    bank.experiences.record(task="Migrate the users table again", outcome="success")
    retriever = SkillbankRetriever(bank, kind="experiences", similarity_top_k=1)
    assert len(await retriever.aretrieve("migrate the users table")) == 1
    assert SkillbankRetriever(bank, kind="experiences", k=3).similarity_top_k == 3

    only_failures = SkillbankRetriever(bank, kind="experiences", filters=MetadataFilters(
        filters=[MetadataFilter(key="outcome", value="failure")]))
    assert [n.node.node_id for n in only_failures.retrieve("migrate the users table")] == [failed]
    tagged = SkillbankRetriever(bank, kind="experiences", filters=MetadataFilters(filters=[
        MetadataFilter(key="tags", value=["db"], operator=FilterOperator.IN)]))
    assert [n.node.node_id for n in tagged.retrieve("migrate the users table")] == [failed]
    with pytest.raises(InvalidInputError):
        SkillbankRetriever(bank, filters=MetadataFilters(
            filters=[MetadataFilter(key="score", value=1, operator=FilterOperator.GT)]))

    # What the LLM reads: the content once, no paths, no empty fields, no scores.
    skill = SkillbankRetriever(bank, kind="skills").retrieve("migrate a table")[0].node
    llm_text = skill.get_content(metadata_mode="llm")
    assert llm_text.count("lock the table, copy rows") == 1
    assert "/" not in llm_text and "score" not in llm_text and "[]" not in llm_text
    with_body = SkillbankRetriever(bank, kind="skills", include_body=True).retrieve("migrate a table")
    assert "2. Copy rows." in with_body[0].node.get_content()

    assert repr(retriever).startswith(f"SkillbankRetriever(bank=Skillbank({str(bank.root)!r})")
    clone = copy.deepcopy(only_failures)
    assert clone.bank is bank and clone.filters == only_failures.filters
