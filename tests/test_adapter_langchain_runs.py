"""SkillbankMiddleware in real `create_agent` runs as they happen: failures, follow-ups,
summaries, per-user namespaces, several instances, streaming, interrupts, background writes.

Real bank (hash embedding), real agents, real checkpointer; only the chat model is scripted.
"""

from __future__ import annotations

import logging
import threading
from dataclasses import dataclass

import pytest

pytest.importorskip("langchain.agents")

from langchain.agents import create_agent  # noqa: E402
from langchain.agents.middleware import SummarizationMiddleware  # noqa: E402
from langchain_core.messages import AIMessage  # noqa: E402
from langchain_core.tools import tool  # noqa: E402
from langgraph.checkpoint.memory import InMemorySaver  # noqa: E402
from langgraph.types import Command, interrupt  # noqa: E402
from scripted import call, script, system_text  # noqa: E402

from skillbank import Skillbank  # noqa: E402
from skillbank.adapters.langchain import SkillbankMiddleware  # noqa: E402
from skillbank.embeddings import HashEmbedding  # noqa: E402
from skillbank.errors import InvalidInputError  # noqa: E402

WAIT = 60


@tool
def migrate(table: str) -> str:
    """Run the schema migration of a table."""
    if table == "broken":
        raise RuntimeError("disk full while copying rows")
    return f"{table} migrated (3 columns added)"


@tool
def approve_and_migrate(table: str) -> str:
    """Ask a person to approve, then migrate a table."""
    answer = interrupt(f"Migrate {table}?")
    return f"{table} migrated after approval: {answer}"


@pytest.fixture
def bank(tmp_path):
    bank = Skillbank.open(tmp_path / "bank", embedding_function=HashEmbedding())
    bank.skills.create("db-migration", "Plans and runs database schema migrations: lock the "
                       "table, copy rows, swap. Use to migrate a table.", "# Migrate\n\n1. Lock.\n")
    yield bank
    bank.close()


@pytest.fixture
def spy(bank, monkeypatch) -> list:
    calls: list = []
    real = bank.context_for

    def counting(task, *args, **kwargs):
        calls.append((task, kwargs.get("namespace")))
        return real(task, *args, **kwargs)

    monkeypatch.setattr(bank, "context_for", counting)
    return calls


def recorded(bank, namespace: str | None = None) -> list:
    assert bank.flush(timeout=WAIT)
    return sorted(bank.experiences.list(namespace=namespace, kind="experience", limit=100),
                  key=lambda e: e.created)


# -- 1. failed runs are recorded ---------------------------------------------------------------

def test_a_tool_that_raises_records_a_failure(bank):
    model = script(call("migrate", {"table": "users"}, "c1"),
                   call("migrate", {"table": "broken"}, "c2"),
                   AIMessage(content="never reached"))
    agent = create_agent(model, [migrate], middleware=[SkillbankMiddleware(bank)])
    with pytest.raises(RuntimeError, match="disk full"):
        agent.invoke({"messages": [{"role": "user", "content": "Migrate the users table"}]})

    [experience] = recorded(bank)
    assert experience.task == "Migrate the users table" and experience.outcome == "failure"
    assert experience.feedback == "RuntimeError: disk full while copying rows"
    steps = [(s.action, s.observation) for s in experience.steps]
    assert steps[0] == ("migrate", "users migrated (3 columns added)")
    assert steps[1][0] == "migrate" and "disk full" in steps[1][1]  # the steps up to the failure


async def test_a_model_that_raises_records_a_failure_async(bank):
    model = script(call("migrate", {"table": "orders"}, "c1"),
                   ConnectionError("provider unavailable (503)"))
    agent = create_agent(model, [migrate], middleware=[SkillbankMiddleware(bank)])
    with pytest.raises(ConnectionError):
        await agent.ainvoke({"messages": [{"role": "user", "content": "Migrate the orders table"}]})
    [experience] = recorded(bank)
    assert experience.outcome == "failure"
    assert experience.feedback == "ConnectionError: provider unavailable (503)"
    assert experience.steps[0].action == "migrate" and "orders migrated" in experience.steps[0].observation
    # The failed call is a step of its own, not the run's "final answer".
    assert [(s.action, s.observation) for s in experience.steps[1:]] == [
        ("model call", "error: ConnectionError: provider unavailable (503)")]


def test_streaming_runs_are_recorded_and_failures_too(bank):
    model = script(AIMessage(content="The users table is migrated."),
                   call("migrate", {"table": "broken"}, "c9"))
    agent = create_agent(model, [migrate], middleware=[SkillbankMiddleware(bank)])
    chunks = list(agent.stream({"messages": [{"role": "user", "content": "Migrate the users table"}],
                                "outcome": "success"}, stream_mode="messages"))
    assert "".join(str(c[0].content) for c in chunks if isinstance(c[0], AIMessage)) \
        == "The users table is migrated."
    with pytest.raises(RuntimeError):
        for _ in agent.stream({"messages": [{"role": "user", "content": "Migrate the broken table"}]},
                              stream_mode="updates"):
            pass
    first, second = recorded(bank)
    assert (first.task, first.outcome) == ("Migrate the users table", "success")
    assert (second.task, second.outcome) == ("Migrate the broken table", "failure")


def test_an_interrupt_is_a_pause_not_a_failure(bank):
    model = script(call("approve_and_migrate", {"table": "orders"}, "c1"),
                   AIMessage(content="Done: orders migrated."))
    agent = create_agent(model, [approve_and_migrate], middleware=[SkillbankMiddleware(bank)],
                         checkpointer=InMemorySaver())
    config = {"configurable": {"thread_id": "hitl"}}
    paused = agent.invoke({"messages": [{"role": "user", "content": "Migrate the orders table"}]},
                          config)
    assert paused.get("__interrupt__")
    assert recorded(bank) == []  # paused: nothing recorded, and not as a failure
    done = agent.invoke(Command(resume="approved"), config)
    assert done["messages"][-1].content == "Done: orders migrated."
    [experience] = recorded(bank)
    assert experience.task == "Migrate the orders table" and experience.outcome == "unknown"
    assert "after approval: approved" in experience.steps[0].observation


# -- 2. a follow-up is not the task ---------------------------------------------------------------

def test_a_follow_up_is_attached_to_the_thread_goal(bank, spy):
    model = script(AIMessage(content="Plan: lock, copy, swap. Shall I go ahead?"),
                   call("migrate", {"table": "orders"}, "c1"), AIMessage(content="Migrated."),
                   AIMessage(content="Here is a haiku."))
    agent = create_agent(model, [migrate], middleware=[SkillbankMiddleware(bank)],
                         checkpointer=InMemorySaver())
    config = {"configurable": {"thread_id": "t"}}
    agent.invoke({"messages": [{"role": "user", "content": "Migrate the orders table"}]}, config)
    assert bank.flush(timeout=WAIT)
    agent.invoke({"messages": [{"role": "user", "content": "yes, go ahead"}], "outcome": "success"},
                 config)
    # The memory query is the goal plus the latest request, never "yes, go ahead" alone.
    assert [task for task, _ in spy] == ["Migrate the orders table",
                                         "Migrate the orders table\nyes, go ahead"]
    # The follow-up run is never shown the thread's own first turn as a past experience.
    assert "Task: Migrate the orders table" not in system_text(model.seen[1])
    # One thread, one experience: the follow-up's steps and outcome update it (issue 25).
    [first] = recorded(bank)
    assert first.task == "Migrate the orders table" and first.outcome == "success"
    steps = [(s.action, s.observation) for s in first.steps]
    assert steps[1] == (None, "User: yes, go ahead") and steps[2][0] == "migrate"
    # The outcome closed the episode: the next request is a task of its own.
    agent.invoke({"messages": [{"role": "user", "content": "Write a haiku about rain"}]}, config)
    assert spy[-1][0] == "Write a haiku about rain"
    assert [e.task for e in recorded(bank)] == ["Migrate the orders table",
                                                 "Write a haiku about rain"]


def test_an_explicit_task_from_input_or_context(bank, spy):
    @dataclass
    class Ctx:
        skillbank_task: str = ""

    model = script(AIMessage(content="ok"), AIMessage(content="ok"))
    agent = create_agent(model, [], middleware=[SkillbankMiddleware(bank)], context_schema=Ctx)
    agent.invoke({"messages": [{"role": "user", "content": "go"}],
                  "skillbank_task": "Migrate the invoices table"})
    agent.invoke({"messages": [{"role": "user", "content": "continue"}]},
                 context=Ctx(skillbank_task="Migrate the payments table"))
    assert [task for task, _ in spy] == ["Migrate the invoices table\ngo",
                                         "Migrate the payments table\ncontinue"]
    assert [e.task for e in recorded(bank)] == ["Migrate the invoices table",
                                                "Migrate the payments table"]


def test_a_summary_mid_run_is_not_a_new_task(bank, spy):
    summariser = script(*[AIMessage(content="The user wants the orders table migrated.")] * 5)
    model = script(call("migrate", {"table": "orders"}, "c1"),
                   call("migrate", {"table": "order_items"}, "c2"),
                   call("migrate", {"table": "order_notes"}, "c3"),
                   AIMessage(content="All three tables are migrated."))
    summary = SummarizationMiddleware(model=summariser, trigger=("messages", 5), keep=("messages", 2))
    agent = create_agent(model, [migrate], middleware=[SkillbankMiddleware(bank), summary],
                         checkpointer=InMemorySaver())
    out = agent.invoke({"messages": [{"role": "user", "content": "Migrate the orders table"}]},
                       {"configurable": {"thread_id": "s"}})
    assert any(getattr(m, "additional_kwargs", {}).get("lc_source") == "summarization"
               for m in out["messages"])  # the summary really replaced earlier messages
    assert spy == [("Migrate the orders table", None)]  # context_for once, not on the summary
    assert all("db-migration" in system_text(p) for p in model.seen)  # memory kept after it
    [experience] = recorded(bank)
    assert experience.task == "Migrate the orders table"


# -- 3. per-user memory at run time, several instances -----------------------------------------------

@dataclass
class UserContext:
    user_id: str = ""


def test_namespace_template_from_context_and_config(bank, spy):
    bank.guidelines.add("Always migrate with a rollback script.", namespace="alice",
                        when_to_use="When migrating a table")
    model = script(*[AIMessage(content="ok")] * 3)
    middleware = SkillbankMiddleware(bank, namespace="{user_id}")
    agent = create_agent(model, [], middleware=[middleware], context_schema=UserContext)
    ask = {"messages": [{"role": "user", "content": "Migrate the users table"}]}

    agent.invoke({**ask, "feedback": "Never migrate on a Friday."}, context=UserContext("alice"))
    agent.invoke(ask, context=UserContext("bob"))
    agent.invoke(ask, {"configurable": {"user_id": "carol"}})

    assert [ns for _, ns in spy] == ["alice", "bob", "carol"]
    assert "rollback script" in system_text(model.seen[0])
    assert "rollback script" not in system_text(model.seen[1])  # bob never sees alice's rules
    assert [e.namespace for e in recorded(bank, namespace="*")] == ["alice", "bob", "carol"]
    assert any("Friday" in h.record.text for h in
               bank.guidelines.search("migrate a table on friday", namespace="alice"))
    assert not bank.guidelines.search("migrate a table on friday", namespace="bob")


def test_a_missing_namespace_value_means_no_memory_not_shared_memory(bank, spy, caplog):
    model = script(AIMessage(content="ok"))
    middleware = SkillbankMiddleware(bank, namespace="{user_id}")
    agent = create_agent(model, [], middleware=[middleware])
    with caplog.at_level(logging.WARNING, logger="skillbank.adapters.langchain"):
        out = agent.invoke({"messages": [{"role": "user", "content": "Migrate the users table"}]})
    assert out["messages"][-1].content == "ok" and spy == []
    assert isinstance(middleware.last_error, InvalidInputError) and "user_id" in caplog.text
    assert recorded(bank, namespace="*") == []
    strict = SkillbankMiddleware(bank, namespace="{user_id}", raise_errors=True)
    agent = create_agent(script(AIMessage(content="ok")), [], middleware=[strict])
    with pytest.raises(InvalidInputError, match="user_id"):
        agent.invoke({"messages": [{"role": "user", "content": "Migrate the users table"}]})


def test_team_and_user_instances_on_one_agent(bank, spy):
    bank.guidelines.add("Announce migrations in the team channel.", namespace="team",
                        when_to_use="When migrating a table")
    bank.guidelines.add("Alice prefers small batches when migrating.", namespace="alice",
                        when_to_use="When migrating a table")
    model = script(call("learn_from_critique", {"critique": "Always dry-run a migration first."},
                        "c1"), AIMessage(content="ok"))
    team = SkillbankMiddleware(bank, namespace="team", record=False)
    user = SkillbankMiddleware(bank, namespace="{user_id}", tools=True)
    assert team.name != user.name
    agent = create_agent(model, [], middleware=[team, user], context_schema=UserContext)
    out = agent.invoke({"messages": [{"role": "user", "content": "Migrate the users table"}]},
                       context=UserContext("alice"))
    system = system_text(model.seen[0])
    assert "team channel" in system and "small batches" in system
    assert system.count("<skillbank-memory>") == 2
    assert sorted(ns for _, ns in spy) == ["alice", "team"]
    assert set(out["skillbank_memory_ids"])
    # The tools of the user instance write to the user's namespace.
    assert any("dry-run" in h.record.text for h in
               bank.guidelines.search("dry-run a migration", namespace="alice"))
    assert [e.namespace for e in recorded(bank, namespace="*")] == ["alice"]


# -- 4. off the hot path -------------------------------------------------------------------------------

def test_recording_waits_in_the_background_not_in_the_turn(bank):
    gate = threading.Event()
    bank.background.submit(gate.wait, WAIT)  # hold the writer: nothing it is given can run
    middleware = SkillbankMiddleware(bank)
    agent = create_agent(script(AIMessage(content="Done.")), [], middleware=[middleware])
    out = agent.invoke({"messages": [{"role": "user", "content": "Migrate the users table"}],
                        "feedback": "Say how many rows were copied."})
    assert out["messages"][-1].content == "Done."  # the turn ended with the writer held
    assert bank.background.pending == 2 and bank.experiences.count() == 0
    gate.set()
    [experience] = recorded(bank)
    assert experience.feedback == "Say how many rows were copied."
    assert middleware.last_experience_id == experience.id
    assert any("rows" in h.record.text for h in bank.guidelines.search("rows copied migration"))


def test_distilling_happens_in_the_background_too(bank):
    gate = threading.Event()
    bank.background.submit(gate.wait, WAIT)
    middleware = SkillbankMiddleware(bank, distill=True)
    agent = create_agent(script(AIMessage(content="Copied.")), [], middleware=[middleware])
    agent.invoke({"messages": [{"role": "user", "content": "Migrate the users table"}],
                  "outcome": "failure",
                  "feedback": "You forgot to lock the table before copying rows; always lock it."})
    assert bank.experiences.count(kind="lesson") == 0  # nothing distilled in the turn
    gate.set()
    assert bank.flush(timeout=WAIT)
    assert bank.experiences.count(kind="lesson") >= 1
