"""Turns an outcome closed are not recorded again when LlamaIndex's `Memory` flushes them
(hunt-exp #6, session 27).

`arecord_run(memory, outcome=...)` records the episode with its turns still in Memory's queue;
Memory flushes those turns into the block later, once the next episode has begun. The block took
them for the next episode's: the failed episode 2 claimed episode 1's closing "ok thanks" and its
answer, and stored its own first answer twice. A real `FunctionAgent` and `Memory` (small enough
to flush every turn) with a scripted model, in process and through a client of another process
that owns the root.
"""

from __future__ import annotations

import pytest

pytest.importorskip("llama_index.core")

from llama_index.core.agent.workflow import FunctionAgent  # noqa: E402
from llama_index.core.base.llms.types import ChatMessage  # noqa: E402
from llama_index.core.llms.mock import MockFunctionCallingLLM  # noqa: E402
from llama_index.core.memory import Memory  # noqa: E402

from owner_client import bank_for  # noqa: E402
from skillbank.adapters.llamaindex import SkillbankMemoryBlock  # noqa: E402

REMOTE = pytest.mark.parametrize("remote", [False, True], ids=["in-process", "client-of-owner"])


def reply_to(messages, **kw):
    """A long answer naming the request, so Memory flushes the oldest turn at every turn."""
    request = messages[-1].content
    text = "You're welcome." if request == "ok thanks" else f"Reply to <{request}>"
    return ChatMessage(role="assistant", content=text + " lorem ipsum" * 60)


async def talk(bank, episodes: list[tuple[list[str], str]]) -> dict[str, list[str]]:
    """One session through these episodes (requests, outcome), `arecord_run` closing each;
    each record's step texts (without the padding), by task."""
    block = SkillbankMemoryBlock(bank)
    memory = Memory.from_defaults(session_id="s1", memory_blocks=[block], token_limit=400,
                                  chat_history_token_ratio=0.5)
    agent = FunctionAgent(tools=[], llm=MockFunctionCallingLLM(response_generator=reply_to),
                          system_prompt="You help.")
    for requests, outcome in episodes:
        for request in requests:
            await agent.run(user_msg=request, memory=memory)
        await block.arecord_run(memory, outcome=outcome)
    bank.flush()
    return {e.task: [(s.observation or s.thought or "").split(" lorem")[0] for s in e.steps]
            for e in bank.experiences.list(kind="experience")}


@REMOTE
async def test_the_next_episode_holds_its_own_turns_once(tmp_path, remote):
    with bank_for(tmp_path, remote) as bank:
        records = await talk(bank, [
            (["Plan the database backup strategy", "what about retention?", "ok thanks"],
             "success"),
            (["Now plan the disaster recovery drill", "fine"], "failure")])
    assert records == {
        "Plan the database backup strategy": [
            "Reply to <Plan the database backup strategy>", "User: what about retention?",
            "Reply to <what about retention?>", "User: ok thanks", "You're welcome."],
        "Now plan the disaster recovery drill": [
            "Reply to <Now plan the disaster recovery drill>", "User: fine",
            "Reply to <fine>"]}


@REMOTE
async def test_a_turn_the_next_episode_repeats_word_for_word_is_kept(tmp_path, remote):
    """The queue's order, not the text, says what was recorded: the same "ok thanks" and the
    same answer in the next episode are that episode's own turn."""
    with bank_for(tmp_path, remote) as bank:
        records = await talk(bank, [
            (["Plan the database backup strategy", "ok thanks"], "success"),
            (["Now plan the disaster recovery drill", "ok thanks"], "failure"),
            (["Write the incident report", "ok thanks"], "success")])
    closing = ["User: ok thanks", "You're welcome."]
    assert records == {
        "Plan the database backup strategy":
            ["Reply to <Plan the database backup strategy>", *closing],
        "Now plan the disaster recovery drill":
            ["Reply to <Now plan the disaster recovery drill>", *closing],
        "Write the incident report": ["Reply to <Write the incident report>", *closing]}
