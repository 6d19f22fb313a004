"""The LangChain middleware passes the agent's tool names to skill search (#26): a skill whose
declared tools the agent lacks stays out of the memory context. A real `create_agent` run with a
scripted chat model, a real bank (hash embedding)."""

from __future__ import annotations

import pytest

pytest.importorskip("langchain.agents")

from langchain.agents import create_agent  # noqa: E402
from langchain_core.messages import AIMessage  # noqa: E402
from langchain_core.tools import tool  # noqa: E402

from scripted import Scripted, system_text  # noqa: E402
from skillbank.adapters.langchain import SkillbankMiddleware  # noqa: E402
from tool_gate import bank  # noqa: E402,F401 - the fixture


@tool
def bash(command: str) -> str:
    """Run a shell command."""
    return "ok"


@tool
def read_file(path: str) -> str:
    """Read a file."""
    return "text"


@pytest.mark.parametrize("tools, shown", [([bash, read_file], True), ([read_file], False)])
def test_context_leaves_out_skills_needing_tools_the_agent_lacks(bank, tools, shown):
    model = Scripted(messages=iter([AIMessage(content="done")]))
    agent = create_agent(model, tools, middleware=[SkillbankMiddleware(bank, record=False,
                                                                       raise_errors=True)])
    agent.invoke({"messages": [{"role": "user", "content": "clean up stale git branches"}]})
    assert ("git-branch-cleanup" in system_text(model.seen[0])) is shown


@pytest.mark.parametrize("tools, found", [([bash, read_file], True), ([read_file], False)])
def test_find_skills_called_by_the_agent_gates_on_its_tools(bank, tools, found):
    """Fails before: the gate reached the memory context only; the agent's own find_skills call
    (a tool call, outside the model call) listed the skill whatever tools the agent had."""
    import json

    from langchain_core.messages import ToolMessage

    from scripted import call

    model = Scripted(messages=iter([call("find_skills", {"task": "clean up stale git branches"},
                                         "c1"), AIMessage(content="done")]))
    agent = create_agent(model, tools, middleware=[SkillbankMiddleware(
        bank, record=False, raise_errors=True, tools=["find_skills"])])
    out = agent.invoke({"messages": [{"role": "user", "content": "tidy my repository"}]})
    answer = [m for m in out["messages"] if isinstance(m, ToolMessage)][0]
    names = [s["name"] for s in json.loads(answer.content)["skills"]]
    assert ("git-branch-cleanup" in names) is found


async def test_find_skills_gates_in_an_async_run_too(bank):
    import json

    from langchain_core.messages import ToolMessage

    from scripted import call

    model = Scripted(messages=iter([call("find_skills", {"task": "clean up stale git branches"},
                                         "c1"), AIMessage(content="done")]))
    agent = create_agent(model, [read_file], middleware=[SkillbankMiddleware(
        bank, record=False, raise_errors=True, tools=["find_skills"])])
    out = await agent.ainvoke({"messages": [{"role": "user", "content": "tidy my repository"}]})
    answer = [m for m in out["messages"] if isinstance(m, ToolMessage)][0]
    assert "git-branch-cleanup" not in [s["name"] for s in json.loads(answer.content)["skills"]]


@pytest.mark.parametrize("remote", [False, True], ids=["in-process", "client-of-owner"])
@pytest.mark.parametrize("tools, found", [([bash, read_file], True), ([read_file], False)])
def test_the_toolkit_alone_gates_on_the_tools_it_is_given(tmp_path, remote, tools, found):
    """An agent run without the middleware: `SkillbankToolkit(available_tools=...)` gates its
    find_skills as the middleware does. Fails before: the toolkit took no tool list (an unknown
    option), so such an agent was offered skills it could not follow (left from session 28)."""
    import json

    from langchain_core.messages import ToolMessage

    from conftest import write_skill
    from owner_client import bank_for
    from scripted import call
    from skillbank.adapters.langchain import SkillbankToolkit

    folder = tmp_path / "skills"
    write_skill(folder, "git-branch-cleanup", "Clean up stale git branches after merges",
                extra="allowed-tools: Bash(git:*)\n")
    with bank_for(tmp_path, remote, skill_roots=(folder,)) as shared:
        toolkit = SkillbankToolkit(shared, include=["find_skills"], available_tools=tools)
        model = Scripted(messages=iter([call("find_skills", {"task": "clean up stale git "
                                                                     "branches"}, "c1"),
                                        AIMessage(content="done")]))
        agent = create_agent(model, [*tools, *toolkit.get_tools()])
        out = agent.invoke({"messages": [{"role": "user", "content": "tidy my repository"}]})
    reply = json.loads([m for m in out["messages"] if isinstance(m, ToolMessage)][-1].content)
    assert ("git-branch-cleanup" in [s["name"] for s in reply["skills"]]) is found
    assert ("git-branch-cleanup" in reply.get("missing_tools", {})) is not found
