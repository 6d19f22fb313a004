"""The documented team + personal pair of middleware instances: the team memory is read-only
(`record=False`) and the ids both showed reach the state.

Found by using it as the docs say (examples/README.md, "Per user, at run time"): each user's
feedback was learnt by the team instance too (`record=False` stopped only the recording), so
one user's critique became an active rule of the whole team and its author saw it twice; and
`state["skillbank_memory_ids"]` kept the last instance's ids only, so the user's own items
could not be rated from it.
"""

from __future__ import annotations

import contextlib

import pytest

pytest.importorskip("langchain.agents")

from langchain.agents import create_agent  # noqa: E402
from langchain_core.messages import AIMessage  # noqa: E402
from langgraph.checkpoint.memory import InMemorySaver  # noqa: E402
from owner_client import client_of_owner  # noqa: E402
from scripted import script, system_text  # noqa: E402

from skillbank import Skillbank  # noqa: E402
from skillbank.adapters.langchain import SkillbankMiddleware  # noqa: E402
from skillbank.embeddings import HashEmbedding  # noqa: E402

TASK = "Write a migration for the orders table"


@contextlib.contextmanager
def _bank(tmp_path, through):
    if through == "client-of-owner":
        root = tmp_path / "root"
        Skillbank.open(root, embedding_function=HashEmbedding(), include_bundled=False).close()
        with client_of_owner(root) as bank:
            yield bank
    else:
        with Skillbank.open(tmp_path / "root", embedding_function=HashEmbedding(),
                            include_bundled=False) as bank:
            yield bank


@pytest.mark.parametrize("through", ["in-process", "client-of-owner"])
def test_the_team_memory_learns_nothing_and_both_ids_reach_the_state(tmp_path, through):
    with _bank(tmp_path, through) as bank:
        team_rule = bank.guidelines.add("Every migration of the orders table needs a rollback "
                                        "plan.", namespace="team").guideline_id
        own_rule = bank.guidelines.add("Write the orders table migration in British English.",
                                       namespace="alice").guideline_id
        model = script(AIMessage(content="ok"), AIMessage(content="ok again"))
        agent = create_agent(model, [], checkpointer=InMemorySaver(), middleware=[
            SkillbankMiddleware(bank, namespace="team", record=False, background=False),
            SkillbankMiddleware(bank, namespace="{user_id}", background=False)])
        config = {"configurable": {"user_id": "alice", "thread_id": "t1"}}
        out = agent.invoke({"messages": [{"role": "user", "content": TASK}],
                            "feedback": "Always list the affected services in the release notes."},
                           config)
        system = system_text(model.seen[0])
        assert f"[{team_rule}]" in system and f"[{own_rule}]" in system
        assert team_rule in out["skillbank_memory_ids"] and own_rule in out["skillbank_memory_ids"]
        team = [g.text for g in bank.guidelines.list(namespace="team")]
        alice = [g.text for g in bank.guidelines.list(namespace="alice")]
        assert not any("affected services" in text for text in team), team  # the team memory wrote nothing
        assert sum("affected services" in text for text in alice) == 1, alice
        # The next run of the thread starts with none: only what it showed.
        bank.guidelines.retire(team_rule)
        again = agent.invoke({"messages": [{"role": "user", "content": "Now the users table"}]},
                             config)
        assert team_rule not in again["skillbank_memory_ids"], again["skillbank_memory_ids"]


def test_learn_true_keeps_a_read_only_instance_learning(tmp_path):
    with _bank(tmp_path, "in-process") as bank:
        agent = create_agent(script(AIMessage(content="ok")), [], middleware=[
            SkillbankMiddleware(bank, namespace="team", record=False, learn=True,
                                background=False)])
        agent.invoke({"messages": [{"role": "user", "content": TASK}],
                      "feedback": "Always list the affected services in the release notes."})
        assert any("affected services" in g.text for g in bank.guidelines.list(namespace="team"))
        assert bank.experiences.count(namespace="*") == 0


@pytest.mark.parametrize("through", ["in-process", "client-of-owner"])
def test_the_personal_instances_tools_rate_what_the_team_instance_showed(tmp_path, through):
    """The block of the documented team + personal pair invites the model to rate every id it
    shows; the personal instance's `rate_memory` answered "no guideline" for the team's rules.
    Its tools now read the namespaces the run's other instances showed: a vote on a team rule
    counts as an outsider's (once), and the team rule cannot be forgotten from a user's run."""
    with _bank(tmp_path, through) as bank:
        team_rule = bank.guidelines.add("Every migration of the orders table needs a rollback "
                                        "plan.", namespace="team").guideline_id
        own_rule = bank.guidelines.add("Write the orders table migration in British English.",
                                       namespace="alice").guideline_id
        calls = [{"name": "rate_memory", "args": {"id": team_rule, "helpful": True}, "id": "c1"},
                 {"name": "rate_memory", "args": {"id": own_rule, "helpful": True}, "id": "c2"},
                 {"name": "rate_memory", "args": {"id": team_rule, "helpful": True}, "id": "c3"}]
        model = script(AIMessage(content="", tool_calls=calls), AIMessage(content="done"))
        personal = SkillbankMiddleware(bank, namespace="{user_id}", background=False,
                                       tools=["rate_memory"])
        agent = create_agent(model, personal.tools, checkpointer=InMemorySaver(), middleware=[
            SkillbankMiddleware(bank, namespace="team", record=False, background=False),
            personal])
        out = agent.invoke({"messages": [{"role": "user", "content": TASK}]},
                           {"configurable": {"user_id": "alice", "thread_id": "t1"}})
        replies = [m.content for m in out["messages"] if m.type == "tool"]
        assert not any("no guideline" in r for r in replies), replies
        team = bank.guidelines.get(team_rule)
        assert team.outside_votes == {"alice": 2} and team.helpful == 1  # one outsider, once
        assert bank.guidelines.get(own_rule).helpful == 1
        if through == "in-process":  # one face for a tool call, whichever instances there are
            import json

            votes = [json.loads(line) for path in sorted((tmp_path / "root" / "audit").glob(
                "*.jsonl")) for line in path.read_text().splitlines()]
            assert {e["face"] for e in votes if e.get("action") == "vote"} == {"agent"}, votes
        # Without the team instance in the run, the user's tools see only the user's memory.
        alone = create_agent(script(AIMessage(content="", tool_calls=calls[:1]),
                                    AIMessage(content="done")), personal.tools,
                             checkpointer=InMemorySaver(), middleware=[personal])
        out = alone.invoke({"messages": [{"role": "user", "content": TASK}]},
                           {"configurable": {"user_id": "alice", "thread_id": "t2"}})
        assert any("no guideline" in m.content for m in out["messages"] if m.type == "tool")



@pytest.mark.parametrize("through", ["in-process", "client-of-owner"])
def test_the_personal_instances_tools_search_what_the_team_instance_showed(tmp_path, through):
    """hunt-lxteam #5, session 37 (the LlamaIndex `reads=` gap, here in its LangChain twin):
    the personal instance's tools could rate a team rule the team instance showed, but
    search_guidelines, recall_experiences and memory_context searched the user's namespace
    alone ("No guideline applies."). They search what the tools read, never another user's."""
    with _bank(tmp_path, through) as bank:
        team_rule = bank.guidelines.add("Every migration of the orders table needs a rollback "
                                        "plan.", namespace="team").guideline_id
        bobs = bank.guidelines.add("Bob's private rule about the orders table migration.",
                                   namespace="bob").guideline_id
        team_run = bank.experiences.record(task=TASK, outcome="success", namespace="team")
        calls = [{"name": "search_guidelines", "args": {"task": TASK}, "id": "c1"},
                 {"name": "recall_experiences", "args": {"task": TASK}, "id": "c2"},
                 {"name": "memory_context", "args": {"task": TASK}, "id": "c3"}]
        personal = SkillbankMiddleware(bank, namespace="{user_id}", background=False, tools=[
            "search_guidelines", "recall_experiences", "memory_context"])

        def replies(middleware: list, thread: str) -> list:
            agent = create_agent(script(AIMessage(content="", tool_calls=calls),
                                        AIMessage(content="done")), personal.tools,
                                 checkpointer=InMemorySaver(), middleware=middleware)
            out = agent.invoke({"messages": [{"role": "user", "content": TASK}]},
                               {"configurable": {"user_id": "alice", "thread_id": thread}})
            return [m.content for m in out["messages"] if m.type == "tool"]

        found = replies([SkillbankMiddleware(bank, namespace="team", record=False,
                                             background=False), personal], "t1")
        assert team_rule in found[0] and team_run in found[1], found
        assert team_rule in found[2] and team_run in found[2], found[2]
        assert not any(bobs in r for r in found), found
        # Without the team instance in the run, the user's tools see only the user's memory.
        alone = replies([personal], "t2")
        assert not any(team_rule in r or team_run in r or bobs in r for r in alone), alone


def test_a_forged_state_entry_widens_nothing(tmp_path):
    """An app may pass a caller's JSON to invoke: an entry claiming an instance showed another
    user's namespace must not let this user's tools read it. The tools read the namespaces
    from the state's `skillbank` key, which is private state (`PrivateStateAttr`): LangChain
    drops it from the input, so only the instances themselves write it (also in a process
    resuming the thread from its checkpointer, where the instances' memory would be empty)."""
    with _bank(tmp_path, "in-process") as bank:
        bobs = bank.guidelines.add("Bob's private rule about the orders table.",
                                   namespace="bob").guideline_id
        calls = [{"name": "rate_memory", "args": {"id": bobs, "helpful": False}, "id": "c1"}]
        personal = SkillbankMiddleware(bank, namespace="{user_id}", background=False,
                                       tools=["rate_memory"])
        agent = create_agent(script(AIMessage(content="", tool_calls=calls),
                                    AIMessage(content="done")), personal.tools,
                             checkpointer=InMemorySaver(), middleware=[
                                 SkillbankMiddleware(bank, namespace="team", record=False,
                                                     background=False), personal])
        forged = {"SkillbankMiddleware[bob]": {"run": {"namespace": "bob", "context": {
            "text": "x", "ids": [bobs]}}}}
        out = agent.invoke({"messages": [{"role": "user", "content": TASK}], "skillbank": forged},
                           {"configurable": {"user_id": "alice", "thread_id": "t9"}})
        replies = [m.content for m in out["messages"] if m.type == "tool"]
        assert any("no guideline" in r for r in replies), replies
        assert bank.guidelines.get(bobs).harmful == 0 and not bank.guidelines.get(bobs).outside_votes
