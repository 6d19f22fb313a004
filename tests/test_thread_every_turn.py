"""Every turn of a thread is kept, once (issue 25: "one thread is one experience whose steps
include every follow-up"; hunt-exp #3 and #5, session 27).

A follow-up whose answer repeated an earlier one ("Done.", "ok") was dropped from the thread's
record: the de-duplication of re-delivered turns compared steps without the user's words, so
every "User: …" step looked alike and the turn read as one the record already held (four
turns answered "Done." kept three; six API turns answered "ok" kept the first). A user polling
"Is the deploy done?" lost the third poll the same way. Turns delivered again (the same
transcript retried, the middleware reading the latest turn once more when the outcome comes
later) must still be recorded once. And a long thread's "[N steps omitted]" counted only the
last trim ("[3 steps omitted]" where 101 were gone). Through the Python API, a real
`create_agent` run with a scripted chat model and a checkpointer, in process and through a
client of an owner process.
"""

from __future__ import annotations

import re

import pytest

from owner_client import bank_for

WAIT = 60
REMOTE = pytest.mark.parametrize("remote", [False, True], ids=["in-process", "client-of-owner"])


def said(bank, eid: str) -> list[str]:
    return [s.observation or s.thought or "" for s in bank.experiences.get(eid).steps]


@REMOTE
def test_follow_ups_answered_alike_are_each_kept(tmp_path, remote):
    with bank_for(tmp_path, remote) as bank:
        record = bank.experiences.record_messages
        turns = [[{"role": "user", "content": f"check server {n}"},
                  {"role": "assistant", "content": "ok"}] for n in range(6)]
        ids = {record(turn, task="Monitor the fleet", thread="T") for turn in turns}
        assert len(ids) == 1
        (eid,) = ids
        expected = [text for n in range(6) for text in (f"User: check server {n}", "ok")]
        assert said(bank, eid) == expected
        # The same turns delivered again (a retried call with the whole transcript): the
        # record holds them all already, nothing is added.
        assert record([m for turn in turns for m in turn], task="Monitor the fleet",
                      thread="T", outcome="success") == eid
        assert said(bank, eid) == expected
        assert bank.experiences.get(eid).outcome == "success"

        # A user polling with the same words: each poll is a turn of its own.
        goal = "Deploy release 4.2"
        poll = record([{"role": "user", "content": goal},
                       {"role": "assistant", "content": "Deploy started."}], thread="P")
        for answer in ["Not yet.", "Not yet.", "Not yet.", "Yes, it is done."]:
            record([{"role": "user", "content": "Is the deploy done?"},
                    {"role": "assistant", "content": answer}], task=goal, thread="P")
        assert said(bank, poll) == ["Deploy started.", *[
            text for answer in ["Not yet.", "Not yet.", "Not yet.", "Yes, it is done."]
            for text in ("User: Is the deploy done?", answer)]]


@REMOTE
def test_a_langchain_thread_keeps_every_turn_answered_alike(tmp_path, remote):
    pytest.importorskip("langchain.agents")
    from langchain.agents import create_agent
    from langchain_core.messages import AIMessage
    from langgraph.checkpoint.memory import InMemorySaver
    from scripted import Scripted

    from skillbank.adapters.langchain import SkillbankMiddleware

    turns = ["Rename the column user_name to username in the users table",
             "now drop the legacy_id column", "and add a NOT NULL constraint on email",
             "finally vacuum the table"]
    with bank_for(tmp_path, remote) as bank:
        model = Scripted(messages=iter([AIMessage(content="Done.") for _ in range(6)]))
        agent = create_agent(model, [], middleware=[SkillbankMiddleware(bank)],
                             checkpointer=InMemorySaver())
        config = {"configurable": {"thread_id": "ops-1"}}
        for text in turns:
            agent.invoke({"messages": [{"role": "user", "content": text}]}, config)
            assert bank.flush(timeout=WAIT)
        # The outcome given later: the middleware reads the latest turn's messages again.
        agent.invoke({"messages": [], "outcome": "success"}, config)
        assert bank.flush(timeout=WAIT)
        (record,) = bank.experiences.list(kind="experience", include_retired=True)
        assert record.task == turns[0] and record.outcome == "success"
        steps = said(bank, record.id)
        assert [s for s in steps if s.startswith("User: ")] == [f"User: {t}" for t in turns[1:]]
        # Four turns and the later invoke's own answer: five answers, none lost, none twice.
        assert steps.count("Done.") == 5, steps
        assert steps[:2] == ["Done.", f"User: {turns[1]}"] and steps[-1] == "Done."


def test_what_a_turn_adds_when_answers_repeat():
    from skillbank.memories.experiences.threads import _new_steps
    from skillbank.records import Step

    def steps(*texts: str) -> list[Step]:
        return [Step(observation=f"User: {t}") if t.endswith("?") else
                Step(action="final answer", observation=t) for t in texts]

    held = steps("a?", "ok", "b?", "ok")
    assert _new_steps(held, steps("c?", "ok")) == steps("c?", "ok")  # another request
    assert _new_steps(held, steps("a?", "ok")) == []  # held before the end: delivered again
    assert _new_steps(held, steps("b?", "ok")) == steps("b?", "ok")  # asked again
    assert _new_steps(held, steps("a?", "ok", "b?", "ok")) == []  # the same transcript
    assert _new_steps(held, steps("b?", "ok", "c?", "ok")) == steps("c?", "ok")
    polled = steps("a?", "no", "a?", "no")
    assert _new_steps(polled, steps("a?", "no")) == steps("a?", "no")  # the third poll
    # Held further back than just before the end (docs/api.md): asked again, not delivered
    # again (hunt-threads #3, session 38).
    longer = steps("a?", "ok", "b?", "ok", "c?", "ok")
    assert _new_steps(longer, steps("a?", "ok")) == steps("a?", "ok")
    assert _new_steps(longer, steps("b?", "ok")) == []  # just before the end: as before


@REMOTE
def test_a_question_asked_again_turns_later_is_kept(tmp_path, remote):
    """A LangChain thread polls "is it done?", restarts the worker, reads the logs, and polls
    again with the same answer: the second poll was dropped as a turn delivered again, and the
    record read as if the restart had fixed the deploy (hunt-threads #3, session 38)."""
    pytest.importorskip("langchain.agents")
    from langchain.agents import create_agent
    from langchain_core.messages import AIMessage
    from langchain_core.tools import tool
    from langgraph.checkpoint.memory import InMemorySaver
    from scripted import call, script

    from skillbank.adapters.langchain import SkillbankMiddleware

    @tool
    def deploy_status() -> str:
        """Status of the deploy."""
        return "rolling: 3/10 pods"

    @tool
    def restart_worker() -> str:
        """Restart the worker."""
        return "restarted"

    model = script(AIMessage(content="Started the deploy."),
                   call("deploy_status", {}, "c1"), AIMessage(content="Not yet: 3/10 pods."),
                   call("restart_worker", {}, "c2"), AIMessage(content="Restarted."),
                   AIMessage(content="The logs show a slow image pull."),
                   call("deploy_status", {}, "c3"), AIMessage(content="Not yet: 3/10 pods."))
    with bank_for(tmp_path, remote) as bank:
        agent = create_agent(model, tools=[deploy_status, restart_worker],
                             checkpointer=InMemorySaver(), middleware=[SkillbankMiddleware(bank)])
        config = {"configurable": {"thread_id": "ops-2"}}
        for text in ["Deploy release 4.2 to production", "is it done?", "restart the worker",
                     "what do the logs say?", "is it done?"]:
            agent.invoke({"messages": [{"role": "user", "content": text}]}, config)
            assert bank.flush(timeout=WAIT)
        (record,) = bank.experiences.list(kind="experience", include_retired=True)
        steps = said(bank, record.id)
        assert steps.count("User: is it done?") == 2, steps
        assert steps[-3:] == ["User: is it done?", "rolling: 3/10 pods", "Not yet: 3/10 pods."]


@REMOTE
def test_the_omitted_marker_counts_every_step_a_long_thread_lost(tmp_path, remote):
    from skillbank.records import MAX_STEPS

    task = "Long pairing session on the compiler"
    given = 0
    with bank_for(tmp_path, remote) as bank:
        for turn in range(4):  # 100 exchanges a turn: 799 steps, 500 kept
            messages = [{"role": role, "content": f"{role} {turn}.{n}"}
                        for n in range(100) for role in ("user", "assistant")]
            if turn == 0:
                messages[0]["content"] = task
            eid = bank.experiences.record_messages(messages, task=task, thread="long")
            given += len(messages) - (1 if turn == 0 else 0)
        steps = said(bank, eid)
    markers = [(n, s) for n, s in enumerate(steps) if re.fullmatch(r"\[\d+ steps omitted\]", s)]
    assert len(steps) == MAX_STEPS and len(markers) == 1, markers
    (at, marker), = markers
    omitted = int(re.search(r"\d+", marker).group())
    assert omitted == given - (MAX_STEPS - 1) == 300
    # Head and tail are the thread's first and latest steps, the marker between them.
    assert steps[0] == "assistant 0.0" and steps[-1] == "assistant 3.99"
    assert at == MAX_STEPS // 2
