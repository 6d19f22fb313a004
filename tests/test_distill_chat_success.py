"""A success lesson names what worked, or is not written (hunt-exp #2, session 27).

The adapters record every answer as a step with the pseudo-action "final answer", and the
deterministic distiller took that label for the method: a successful chat run (no tools, as
most are) left the lesson "When writing a migration for the users table, this worked: final
answer.", which says nothing, costs block budget and was shown above the run itself. A real
`create_agent` run with a scripted chat model and a checkpointer, and `experiences.distill` on a
recorded conversation, in process and through a client of an owner process.
"""

from __future__ import annotations

import pytest

from owner_client import bank_for
from skillbank.distill import RuleDistiller
from skillbank.records import Experience, Step

WAIT = 60
REMOTE = pytest.mark.parametrize("remote", [False, True], ids=["in-process", "client-of-owner"])
TASK = "Write a migration for the users table"


def _agent(bank, *replies):
    pytest.importorskip("langchain.agents")
    from langchain.agents import create_agent
    from langchain_core.tools import tool
    from langgraph.checkpoint.memory import InMemorySaver
    from scripted import Scripted

    from skillbank.adapters.langchain import SkillbankMiddleware

    @tool
    def run_sql(statement: str) -> str:
        """Run one SQL statement."""
        return f"ok: {statement}"

    return create_agent(Scripted(messages=iter(replies)), [run_sql],
                        middleware=[SkillbankMiddleware(bank, distill=True)],
                        checkpointer=InMemorySaver())


@REMOTE
def test_a_chat_run_leaves_no_empty_lesson_and_a_tool_run_names_its_tool(tmp_path, remote,
                                                                        minilm):
    from langchain_core.messages import AIMessage
    from scripted import call

    with bank_for(tmp_path, remote, minilm) as bank:
        agent = _agent(bank, AIMessage(content="Here is the migration: ALTER TABLE users ..."),
                       AIMessage(content="Added the index."))
        config = {"configurable": {"thread_id": "T1"}}
        agent.invoke({"messages": [{"role": "user", "content": TASK}]}, config)
        agent.invoke({"messages": [{"role": "user", "content": "add an index too"}],
                      "outcome": "success"}, config)
        assert bank.flush(timeout=WAIT)
        assert bank.experiences.list(kind="lesson") == []
        block = bank.context_for("Write a migration for the orders table").text
        assert "final answer" not in block and "Lesson:" not in block
        assert "Produced: Added the index." in block  # the run itself is shown

        # A run that did something: its lesson says what.
        tools = _agent(bank, call("run_sql", {"statement": "CREATE INDEX ix_email"}, "c1"),
                       AIMessage(content="Indexed."))
        tools.invoke({"messages": [{"role": "user", "content": "Index the email column"}],
                      "outcome": "success"}, {"configurable": {"thread_id": "T2"}})
        assert bank.flush(timeout=WAIT)
        (lesson,) = bank.experiences.list(kind="lesson")
        assert "this worked: run_sql(statement='CREATE INDEX ix_email')" in lesson.task
        assert "final answer" not in lesson.task


@REMOTE
def test_distilling_a_recorded_conversation(tmp_path, remote):
    with bank_for(tmp_path, remote) as bank:
        eid = bank.experiences.record_messages(
            [{"role": "user", "content": "Set up CI for the repo"},
             {"role": "assistant", "content": "Added a workflow file."},
             {"role": "user", "content": "also cache pip"},
             {"role": "assistant", "content": "Cached pip."}],
            outcome="success", feedback="Nice. Always pin action versions.")
        ids = bank.experiences.distill(eid)
        texts = [bank.experiences.get(i).task for i in ids]
        assert texts and all("final answer" not in t and "Added a workflow" not in t
                             for t in texts), texts
        assert any("Always pin action versions" in t for t in texts), texts
        quiet = bank.experiences.record_messages(
            [{"role": "user", "content": "Summarise the incident report"},
             {"role": "assistant", "content": "Summary: ..."}], outcome="success")
        assert bank.experiences.distill(quiet) == []  # nothing to say: no lesson


def _success(*steps: Step, feedback: str | None = None) -> list[str]:
    exp = Experience(task="Rotate the API keys of the billing service", outcome="success",
                     steps=list(steps), feedback=feedback)
    return [lesson.text for lesson in RuleDistiller().lessons_from_experience(exp)]


def test_what_a_success_lesson_names():
    answer = Step(action="final answer", observation="All keys rotated.")
    assert _success(answer) == []
    assert _success(Step(thought="Sure, which keys?"), Step(observation="User: all of them"),
                    answer) == []  # a reply in a chat is no step of the method
    assert _success(Step(thought="[120 steps omitted]"), answer) == []
    assert _success(answer, feedback="Good, no downtime.") == [
        "When rotating the API keys of the billing service, this worked. "
        "Feedback: Good, no downtime."]
    assert _success(Step(thought="Drain the workers first"),
                    Step(action="rotate_key", action_input={"key": "billing"}), answer) == [
        "When rotating the API keys of the billing service, this worked: "
        "Drain the workers first -> rotate_key(key='billing')."]
