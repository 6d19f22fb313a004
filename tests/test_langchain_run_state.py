"""What `SkillbankMiddleware` keeps about a run is the run's own (hunt-agents #3 and #6,
session 29).

* The tool names `find_skills` gates on were an attribute of the middleware instance, the last
  model call's of any run: one instance serving two agents offered a skill needing bash to the
  agent without bash when the other agent's model call came between its model call and its
  tool call.
* ``state["skillbank_memory_ids"]`` promises the ids the model was shown; with a team and a
  personal instance holding the same rule, the personal copy was cut from the prompt but its id
  stayed in the state.

Real `create_agent` runs with a scripted model, in process and through a client of another
process that owns the root.
"""

from __future__ import annotations

import json
import re

import pytest

pytest.importorskip("langchain.agents")

from langchain.agents import create_agent  # noqa: E402
from langchain_core.messages import AIMessage, ToolMessage  # noqa: E402
from langgraph.checkpoint.memory import InMemorySaver  # noqa: E402

from conftest import write_skill  # noqa: E402
from owner_client import bank_for  # noqa: E402
from scripted import call, script, system_text  # noqa: E402
from skillbank.adapters.langchain import SkillbankMiddleware  # noqa: E402
from test_skill_tool_gate_langchain import bash, read_file  # noqa: E402 - the agent's tools

REMOTE = pytest.mark.parametrize("remote", [False, True], ids=["in-process", "client-of-owner"])


@REMOTE
def test_find_skills_gates_on_its_own_runs_tools_when_another_run_came_between(tmp_path,
                                                                              remote):
    """Agent A's model call, then agent B's whole run, then A's find_skills: no timing, the
    order is fixed by pausing A before its tools."""
    folder = tmp_path / "skills"
    write_skill(folder, "git-branch-cleanup", "Clean up stale git branches after merges",
                extra="allowed-tools: Bash(git:*)\n")
    with bank_for(tmp_path, remote, skill_roots=(folder,)) as bank:
        shared = SkillbankMiddleware(bank, record=False, raise_errors=True, tools=["find_skills"])
        ask = call("find_skills", {"task": "clean up stale git branches"}, "f1")
        without_bash = create_agent(script(ask, AIMessage(content="done")), [read_file],
                                    middleware=[shared], checkpointer=InMemorySaver(),
                                    interrupt_before=["tools"])
        with_bash = create_agent(script(ask, AIMessage(content="done")), [bash, read_file],
                                 middleware=[shared])
        request = {"messages": [{"role": "user", "content": "tidy my repository"}]}
        config = {"configurable": {"thread_id": "a"}}
        without_bash.invoke(request, config)  # its model called find_skills; paused
        out_b = with_bash.invoke(request)
        out_a = without_bash.invoke(None, config)

        def found(out):
            answer = [m for m in out["messages"] if isinstance(m, ToolMessage)][0]
            return [s["name"] for s in json.loads(answer.content)["skills"]]

        assert "git-branch-cleanup" in found(out_b)
        assert "git-branch-cleanup" not in found(out_a)


@REMOTE
def test_memory_ids_in_the_state_are_those_the_prompt_shows(tmp_path, remote):
    with bank_for(tmp_path, remote) as bank:
        ids = {}
        for namespace in ("team", "alice"):
            ids[namespace] = bank.guidelines.add(
                "Always take a backup before migrating a table.", topic="db",
                when_to_use="When migrating a table", namespace=namespace).guideline_id
        team = SkillbankMiddleware(bank, namespace="team", record=False)
        mine = SkillbankMiddleware(bank, namespace="{user_id}")
        model = script(AIMessage(content="Done."))
        agent = create_agent(model, tools=[], middleware=[team, mine])
        out = agent.invoke({"messages": [{"role": "user", "content": "Migrate the orders table"}]},
                           {"configurable": {"user_id": "alice"}})
        prompt = system_text(model.seen[0])
        assert f"[{ids['team']}]" in prompt and f"[{ids['alice']}]" not in prompt
        state_ids = out["skillbank_memory_ids"]
        assert ids["team"] in state_ids
        assert [i for i in state_ids if re.match(r"(gl|exp|lsn)-", i)
                and f"[{i}]" not in prompt] == []
