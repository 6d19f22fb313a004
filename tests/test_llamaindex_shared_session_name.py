"""Two users' `Memory`s on one session name (hunt-llama #1 and #2, session 35).

`SkillbankMemoryBlock(bank, namespace="{user_id}")` kept its per-conversation state by the
session name alone: the session's goal (`_goals`) and the namespace its last read resolved
(`_namespaces`), which `arecord_run` used after the run, where no Context store is current.
LlamaIndex's examples use fixed session names ("chat", "1"), and each `Memory` keeps its own
chat history. Before:

* #1: alice's run, recorded after bob's run on the same session name, was filed in **bob's**
  namespace with her private feedback, and bob's record took alice's request as its task; in a
  second process alice's "yes, go ahead" no longer picked up her open record once bob had used
  the session name (a new record "yes, go ahead"; hers stayed `unknown`).
* #2: a run given no user id at all, on a session name alice had used, read alice's memory and
  was recorded into alice's record, with no warning.

Now the state is kept per session *and* namespace, `arecord_run(memory)` files the run where
that Memory's run read (or where its `ctx=` says), and a run with no value gets the documented
warning and no memory. Real `FunctionAgent` runs with a scripted LLM, in process and through a
client of another process that owns the root.
"""

from __future__ import annotations

import logging

import pytest

pytest.importorskip("llama_index.core")

from llama_index.core.agent.workflow import FunctionAgent  # noqa: E402
from llama_index.core.base.llms.types import ChatMessage  # noqa: E402
from llama_index.core.memory import Memory  # noqa: E402
from scripted_llama import scripted  # noqa: E402
from workflows import Context  # noqa: E402

from owner_client import bank_for  # noqa: E402
from skillbank.adapters.llamaindex import SkillbankMemoryBlock  # noqa: E402

ALICE_TASK = "Draft the ALICE-PRIVATE severance letter for Jones"
BOB_TASK = "Where is my order 1234?"
WARNING = "skillbank namespace failed; the agent goes on without it"


async def run_as(block, user, text, session):
    """One run of a new `Memory` on `session`, as `user` (None: no user id anywhere); the
    Memory, the run's Context and every prompt the LLM was sent (as text)."""
    llm, seen = scripted([ChatMessage(role="assistant", content="Done.")])
    agent = FunctionAgent(tools=[], llm=llm, system_prompt="You help.")
    memory = Memory.from_defaults(session_id=session, memory_blocks=[block])
    ctx = Context(agent)
    if user is not None:
        await ctx.store.set("user_id", user)
    await agent.run(user_msg=text, memory=memory, ctx=ctx)
    prompts = "\n".join(m.content or "" for request in seen for m in request)
    return memory, ctx, prompts


async def alice_s_recorded_run(bank):
    """alice's workflow run on a Memory of session "chat", recorded; (block, agent, Memory)."""
    block = SkillbankMemoryBlock(bank, namespace="{user_id}", background=False)
    llm, _ = scripted([ChatMessage(role="assistant", content="Done.")] * 2)
    agent = FunctionAgent(tools=[], llm=llm, system_prompt="You help.")
    memory = Memory.from_defaults(session_id="chat", memory_blocks=[block])
    ctx = Context(agent)
    await ctx.store.set("user_id", "alice")
    await agent.run(user_msg="Write a severance letter", memory=memory, ctx=ctx)
    assert await block.arecord_run(memory, outcome="success")
    return block, agent, memory


def records(bank, namespace):
    return [(e.task, e.outcome, e.feedback) for e in bank.experiences.list(namespace=namespace)]


@pytest.mark.parametrize("remote", [False, True], ids=["in-process", "client-of-owner"])
async def test_each_user_s_run_is_filed_in_her_own_namespace(tmp_path, remote):
    """#1: alice's run is recorded after bob's run on the same session name has read memory
    (the app answers first, then records). Before, it landed in bob's namespace with her
    feedback, alice had no record, and bob's record had alice's request as its task."""
    with bank_for(tmp_path, remote) as bank:
        block = SkillbankMemoryBlock(bank, namespace="{user_id}", background=False)
        alice, _, _ = await run_as(block, "alice", ALICE_TASK, "chat")
        bob, _, bob_prompts = await run_as(block, "bob", BOB_TASK, "chat")
        assert await block.arecord_run(alice, outcome="success",
                                       feedback="ALICE-PRIVATE: my address is alice street.")
        assert await block.arecord_run(bob, outcome="success",
                                       feedback="BOB-PRIVATE: my address is bob street.")
        bank.flush()

        assert records(bank, "alice") == [
            (ALICE_TASK, "success", "ALICE-PRIVATE: my address is alice street.")]
        assert records(bank, "bob") == [
            (BOB_TASK, "success", "BOB-PRIVATE: my address is bob street.")]
        assert "ALICE-PRIVATE" not in bob_prompts
        bobs = bank.experiences.list(namespace="bob")[0]
        assert "ALICE" not in str(bobs.model_dump()), bobs


@pytest.mark.parametrize("remote", [False, True], ids=["in-process", "client-of-owner"])
async def test_a_follow_up_picks_up_its_own_open_record_after_another_user(tmp_path, remote):
    """#1 (t16): alice leaves her task open; in a second process (a new block), bob uses the
    session name first. Before, alice's "yes, go ahead" took bob's state for the session:
    a new record with the task "yes, go ahead", and her own stayed `unknown` for good."""
    with bank_for(tmp_path, remote) as bank:
        first = SkillbankMemoryBlock(bank, namespace="{user_id}", background=False)
        memory, _, _ = await run_as(first, "alice", "Plan the ALICE-OFFSITE for Q3", "s9")
        opened = await first.arecord_run(memory)

        later = SkillbankMemoryBlock(bank, namespace="{user_id}", background=False)
        memory, _, _ = await run_as(later, "bob", "yes, go ahead", "s9")
        assert await later.arecord_run(memory, outcome="success")
        memory, _, _ = await run_as(later, "alice", "yes, go ahead", "s9")
        assert await later.arecord_run(memory, outcome="success") == opened
        bank.flush()

        assert [(e.id, e.task, e.outcome) for e in bank.experiences.list(namespace="alice")] \
            == [(opened, "Plan the ALICE-OFFSITE for Q3", "success")]
        assert records(bank, "bob") == [("yes, go ahead", "success", None)]


@pytest.mark.parametrize("remote", [False, True], ids=["in-process", "client-of-owner"])
async def test_a_run_with_no_user_id_gets_no_one_s_memory(tmp_path, remote, caplog):
    """#2: after alice's run on session "1", a run on a new Memory of session "1" is given no
    user id. Before, it was shown alice's rule and its `arecord_run` updated alice's record,
    with no warning; docs/scope.md: the middleware's warning and no memory."""
    with bank_for(tmp_path, remote) as bank:
        bank.guidelines.add("Always cc ALICE-BOSS on severance letters.", namespace="alice")
        block = SkillbankMemoryBlock(bank, namespace="{user_id}", background=False)
        memory, _, prompts = await run_as(block, "alice", "Write a severance letter", "1")
        assert "ALICE-BOSS" in prompts  # alice's own run sees her rule
        assert await block.arecord_run(memory, outcome="success")

        with caplog.at_level(logging.WARNING, logger="skillbank"):
            memory, _, prompts = await run_as(block, None, "Write a severance letter please",
                                              "1")
            assert await block.arecord_run(memory, outcome="success",
                                           feedback="Use ANON-STYLE headings.") is None
        bank.flush()

        assert "ALICE-BOSS" not in prompts
        warned = [r.getMessage() for r in caplog.records]
        assert any(WARNING in w and "needs 'user_id'" in w for w in warned), warned
        # arecord_run's warning says how to name the run after it.
        assert any("arecord_run(memory, ctx=ctx)" in w for w in warned), warned
        assert [(e.namespace, e.task, e.feedback) for e in
                bank.experiences.list(namespace="*")] == [
            ("alice", "Write a severance letter", None)]
        assert not [g for g in bank.guidelines.list(namespace="*") if "ANON" in g.text]


@pytest.mark.parametrize("remote", [False, True], ids=["in-process", "client-of-owner"])
async def test_a_run_with_no_user_id_on_a_reused_memory_is_recorded_nowhere(tmp_path, remote):
    """Review 4 of session 35: alice's run, then a run with no user id on the *same* Memory.
    Its read was refused, but its `arecord_run` (with or without ctx=) still filed the run,
    feedback and all, in alice's namespace: the Memory's note was alice's run's."""
    with bank_for(tmp_path, remote) as bank:
        block, agent, memory = await alice_s_recorded_run(bank)
        anonymous = Context(agent)
        await agent.run(user_msg="Write another letter", memory=memory, ctx=anonymous)
        assert await block.arecord_run(memory, outcome="success",
                                       feedback="Never cc bosses.") is None
        assert await block.arecord_run(memory, outcome="success", ctx=anonymous) is None
        bank.flush()
        assert [(e.namespace, e.task) for e in bank.experiences.list(namespace="*")] == [
            ("alice", "Write a severance letter")]
        assert not [g for g in bank.guidelines.list(namespace="*") if "bosses" in g.text]


async def test_a_custom_loop_records_with_the_values_its_reads_had(tmp_path):
    """Review 4 of session 35: a loop outside any workflow reads with
    `memory.aget(user_id="alice")` (docs/scope.md) and records after it: no Context names the
    run, so `arecord_run(memory, values={"user_id": "alice"})` says whose it is; without it,
    the warning says so and nothing is recorded (it was filed by the session name before)."""
    with bank_for(tmp_path, False) as bank:
        bank.guidelines.add("Always cc ALICE-BOSS on severance letters.", namespace="alice")
        block = SkillbankMemoryBlock(bank, namespace="{user_id}", background=False)
        memory = Memory.from_defaults(session_id="chat", memory_blocks=[block])
        await memory.aput(ChatMessage(role="user", content="Write a severance letter"))
        chat = await memory.aget(user_id="alice")
        assert "ALICE-BOSS" in "\n".join(m.content or "" for m in chat)
        await memory.aput(ChatMessage(role="assistant", content="Here it is."))
        assert await block.arecord_run(memory, outcome="success") is None
        assert "values=" in str(block.last_error)
        assert await block.arecord_run(memory, outcome="success", values={"user_id": "alice"})
        bank.flush()
        assert [(e.namespace, e.task) for e in bank.experiences.list(namespace="*")] == [
            ("alice", "Write a severance letter")]


async def test_a_run_given_as_messages_is_filed_by_its_ctx(tmp_path):
    """`arecord_run(messages, ctx=ctx)`: the run's Context names whose run it is, as the brief
    of #1 asks (the Memory object, `ctx=`, the Context store). Before, `ctx=` served only the
    steps a failed run left in it: the template had no value, nothing was recorded. Without
    `ctx=`, a list of messages names no run: the warning, nothing recorded."""
    with bank_for(tmp_path, False) as bank:
        block = SkillbankMemoryBlock(bank, namespace="{user_id}", background=False)
        memory, ctx, _ = await run_as(block, "alice", ALICE_TASK, "chat")
        messages = await memory.aget_all()
        assert await block.arecord_run(messages, outcome="success") is None
        assert await block.arecord_run(messages, outcome="success", ctx=ctx)
        bank.flush()
        assert records(bank, "alice") == [(ALICE_TASK, "success", None)]
        assert bank.experiences.list(namespace="*") == bank.experiences.list(namespace="alice")


@pytest.mark.parametrize("mode", ["wrong-key", "no-values", "anonymous-loop", "values"])
async def test_a_loop_read_after_a_workflow_run_never_records_into_that_run_s_user(tmp_path,
                                                                                   mode):
    """Review 6 of session 35: alice's workflow run reads a Memory; then a custom loop reads
    it for bob (`aget(user_id="bob")`, or `aget()` with no user) and records. With a
    misspelt `values` key, no `values`, or an anonymous read, the run, its feedback and the
    rule learnt from it went to alice's namespace. Now only `values` naming bob records it."""
    with bank_for(tmp_path, False) as bank:
        block, _, memory = await alice_s_recorded_run(bank)
        await memory.aput(ChatMessage(role="user", content="Book bob a flight"))
        await (memory.aget() if mode == "anonymous-loop" else memory.aget(user_id="bob"))
        await memory.aput(ChatMessage(role="assistant", content="Booked."))
        given = {"wrong-key": {"values": {"userid": "bob"}}, "values": {"values": {
            "user_id": "bob"}}}.get(mode, {})
        recorded = await block.arecord_run(memory, outcome="failure",
                                           feedback="Use aisle seats.", **given)
        bank.flush()
        filed = {(e.namespace, e.task) for e in bank.experiences.list(namespace="*")}
        rules = {(g.namespace, g.text) for g in bank.guidelines.list(namespace="*")}
        if mode == "values":
            assert recorded and ("bob", "Book bob a flight") in filed
            assert rules == {("bob", "Use aisle seats.")}
        else:
            assert recorded is None and filed == {("alice", "Write a severance letter")}
            assert rules == set()
