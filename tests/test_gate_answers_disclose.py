"""What the faces say when the tool gate or the budget left the fitting memory out
(hunt-disclose #1-#3, session 25).

#1: the adapters' find_skills said "No skill fits this task" when the fitting skill was left out
by the tool gate, and dropped missing_tools; MCP's find_skills named it. One wording from the
core (`tool_text.skill_search_note`) for both, and the adapters' reply carries missing_tools.
#2: the adapters' memory_context answered "No relevant memory for this task." when the relevant
items were only over the budget (or gated out): a model never retried with a larger budget.
#3: missing_tools named every gated skill of the candidate pool, a git skill for a scraping
request; now only a skill whose score reaches the bar a served answer must reach.

Real parts: a real `create_agent` run (scripted chat model), a real LlamaIndex `FunctionAgent`,
a real MCP client session, Chroma and the offline MiniLM; in process and as a client of another
process that owns the root.
"""

from __future__ import annotations

import json

import pytest

from conftest import write_skill
from owner_client import bank_for

REMOTE = pytest.mark.parametrize("remote", [False, True], ids=["in-process", "client-of-owner"])
SCRAPE = "scrape a website into markdown"


def _skills(tmp_path):
    """A scraping skill that needs WebFetch, and gated skills unrelated to scraping."""
    folder = tmp_path / "skills"
    write_skill(folder, "web-scrape", "Scrape a web page into markdown with a browser. Use when "
                "asked to scrape a website.", extra="requires:\n  tools: [WebFetch]\n")
    write_skill(folder, "git-release", "Tag and publish a git release with a changelog. Use when "
                "cutting a release.", extra="allowed-tools: Bash(git:*) Read\n")
    write_skill(folder, "deploy-fly", "Deploy an app to Fly.io with flyctl. Use when asked to "
                "deploy to Fly.", extra="allowed-tools: Bash(flyctl:*)\n")
    write_skill(folder, "pdf-report", "Build a PDF report from CSV data with charts. Use when "
                "asked for a PDF report.")
    return (folder,)


@REMOTE
def test_missing_tools_names_only_the_skill_that_fits(tmp_path, minilm, remote):
    """#3. Fails before: git-release and deploy-fly were named for a scraping request."""
    with bank_for(tmp_path, remote, minilm, skill_roots=_skills(tmp_path)) as bank:
        assert [h.name for h in bank.skills.search(SCRAPE)][0] == "web-scrape"  # it fits
        hits = bank.skills.search(SCRAPE, available_tools=["Read"])
        assert list(hits) == [] and hits.missing_tools == {"web-scrape": ["webfetch"]}
        fly = bank.skills.search("deploy my app to Fly.io", available_tools=["Read"])
        assert fly.missing_tools == {"deploy-fly": ["bash"]}
        served = bank.skills.search("deploy my app to Fly.io", available_tools=["Bash"])
        assert served[0].name == "deploy-fly" and "web-scrape" not in served.missing_tools


@REMOTE
def test_langchain_find_skills_names_the_gated_skill(tmp_path, minilm, remote):
    """#1, LangChain. Fails before: the reply was {"skills": [], "note": "No skill fits ..."}."""
    pytest.importorskip("langchain.agents")
    from langchain.agents import create_agent
    from langchain_core.messages import AIMessage, ToolMessage
    from langchain_core.tools import tool

    from scripted import Scripted, call
    from skillbank.adapters.langchain import SkillbankMiddleware
    from skillbank.tool_text import skill_search_note

    @tool
    def read_file(path: str) -> str:
        """Read a file."""
        return "text"

    with bank_for(tmp_path, remote, minilm, skill_roots=_skills(tmp_path)) as bank:
        model = Scripted(messages=iter([call("find_skills", {"task": SCRAPE}, "c1"),
                                        AIMessage(content="done")]))
        agent = create_agent(model, [read_file], middleware=[SkillbankMiddleware(
            bank, record=False, raise_errors=True, tools=["find_skills"])])
        out = agent.invoke({"messages": [{"role": "user", "content": SCRAPE}]})
        answer = json.loads([m for m in out["messages"] if isinstance(m, ToolMessage)][0].content)
    assert answer["skills"] == [] and answer["missing_tools"] == {"web-scrape": ["webfetch"]}
    assert answer["note"] == skill_search_note(False, answer["missing_tools"])
    assert "need tools you lack" in answer["note"]


@REMOTE
async def test_llamaindex_find_skills_says_what_mcp_says(tmp_path, minilm, remote):
    """#1, LlamaIndex and MCP: the same call gets the same answer on both faces."""
    pytest.importorskip("llama_index.core")
    from llama_index.core.agent.workflow import FunctionAgent
    from llama_index.core.base.llms.types import ChatMessage
    from llama_index.core.tools import FunctionTool
    from mcp import Client

    from scripted_llama import scripted, tool_call
    from skillbank.adapters.llamaindex import SkillbankToolSpec
    from skillbank.mcp_server import build_server
    from test_mcp_server import call as mcp_call

    def read_file(path: str) -> str:
        """Read a file."""
        return "text"

    with bank_for(tmp_path, remote, minilm, skill_roots=_skills(tmp_path)) as bank:
        tools = [FunctionTool.from_defaults(read_file)]
        llm, _ = scripted([tool_call("find_skills", {"task": SCRAPE}, "t1"),
                           ChatMessage(role="assistant", content="done")])
        spec = SkillbankToolSpec(bank, include=["find_skills"], available_tools=tools)
        handler = FunctionAgent(tools=[*tools, *spec.to_tool_list()], llm=llm).run(user_msg=SCRAPE)
        results = {}
        async for event in handler.stream_events():
            if type(event).__name__ == "ToolCallResult":
                results[event.tool_id] = event.tool_output
        await handler
        answer = json.loads(str(results["t1"].content))
        async with Client(build_server(bank, trusted=True)) as client:
            mcp = await mcp_call(client, "find_skills", {"task": SCRAPE,
                                                         "available_tools": ["read_file"]})
    assert answer["missing_tools"] == mcp["missing_tools"] == {"web-scrape": ["webfetch"]}
    assert answer["note"] in mcp["hint"] and "need tools you lack" in answer["note"]


@REMOTE
def test_memory_context_says_what_the_budget_and_the_gate_left_out(tmp_path, minilm, remote):
    """#2. Fails before: both answers were "No relevant memory for this task."."""
    pytest.importorskip("llama_index.core")
    from skillbank.adapters.llamaindex import SkillbankToolSpec
    from skillbank.tool_text import NO_MEMORY

    with bank_for(tmp_path, remote, minilm, skill_roots=_skills(tmp_path)) as bank:
        tight = SkillbankToolSpec(bank, include=["memory_context"]).to_tool_list()[0]
        over = str(tight.call(task="build a PDF report from my CSV", budget_tokens=50).content)
        assert "pdf-report" in str(tight.call(task="build a PDF report from my CSV").content)
        gated = SkillbankToolSpec(bank, include=["memory_context"], available_tools=["Read"])
        lacking = str(gated.to_tool_list()[0].call(task=SCRAPE).content)
        unrelated = str(tight.call(task="what is the capital of Mongolia").content)
    assert over != NO_MEMORY and "left out for the budget" in over
    assert "larger budget_tokens" in over
    assert lacking != NO_MEMORY and "web-scrape needs webfetch" in lacking
    assert "git-release" not in lacking
    assert unrelated == NO_MEMORY


@REMOTE
def test_memory_context_with_some_items_says_what_the_budget_left_out(tmp_path, minilm, remote):
    """Left from #2: a block that showed some items and dropped others for the budget was
    answered with its text alone, so a model never knew to ask for more. Fails before."""
    from skillbank.adapters.langchain import SkillbankToolkit

    task = "build a PDF report from my CSV"
    with bank_for(tmp_path, remote, minilm, skill_roots=_skills(tmp_path)) as bank:
        for rule in ("Always label both axes of every chart in a PDF report.",
                     "Put the data source and its date under each chart in a PDF report.",
                     "Keep PDF report tables to at most eight columns."):
            bank.guidelines.add(rule, topic="reports")
        budget = next(b for b in range(50, 2000, 10)
                      if (c := bank.context_for(task, budget_tokens=b)).text and c.omitted)
        ctx = bank.context_for(task, budget_tokens=budget)
        tool = next(t for t in SkillbankToolkit(bank).get_tools() if t.name == "memory_context")
        answer = str(tool.invoke({"task": task, "budget_tokens": budget}))
    assert answer.startswith(ctx.text)
    assert f"left out for the budget of {budget} tokens" in answer
    assert "larger budget_tokens" in answer
