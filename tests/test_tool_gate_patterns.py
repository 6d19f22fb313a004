"""The tool gate reads `allowed-tools` as Claude Code writes it, and as the spec means it.

What users met (docs hunt): corpus skill `daily-news-report` declares `mcp__chrome-devtools__*`;
an agent with every chrome-devtools tool was told it lacked a tool literally named that, the
skill was hidden and the answer was "No skill fits". And `allowed-tools` is pre-approval, not a
list of needs: `planning-with-files` (Read Write Edit Bash Glob Grep WebFetch WebSearch) was
hidden from an agent with Read, Write, Edit and Bash. memory_context left such skills out and
said nothing.
"""

from __future__ import annotations

from pathlib import Path

import pytest
from mcp import Client

from conftest import write_skill
from owner_client import bank_for
from skillbank.memories.skills.dependencies import declared, missing
from test_mcp_server import call

NEWS = "Task, WebFetch, Read, Write, Bash(mkdir*), Bash(date*), mcp__chrome-devtools__*"
PLANNING = "Read Write Edit Bash Glob Grep WebFetch WebSearch"
CHROME = ["Task", "WebFetch", "Read", "Write", "Bash", "mcp__chrome-devtools__navigate_page"]


def test_a_wildcard_is_matched_on_the_tool_name():
    need = declared({"allowed-tools": NEWS})
    assert missing(need, CHROME) == []
    assert missing(declared({"allowed-tools": "mcp__chrome-devtools__*"}),
                   ["mcp__other__navigate_page"]) == ["mcp__chrome-devtools__*"]
    # Claude Code's server-wide rule without a tool part
    assert missing(declared({"allowed-tools": "mcp__serena"}), ["mcp__serena__find_symbol"]) == []
    assert missing(declared({"requires": {"tools": ["mcp__gh__*"]}}), ["read"]) == ["mcp__gh__*"]


def test_pre_approved_tools_are_not_all_needed():
    # bare names: the agent needs one of them; with none, it is told all of them
    need = declared({"allowed-tools": PLANNING})
    assert missing(need, ["Read", "Write", "Edit", "Bash"]) == []
    assert missing(need, ["read_file"]) == sorted(PLANNING.lower().split())
    # a tool given with an argument pattern is needed: the skill runs those commands
    assert missing(declared({"allowed-tools": "Bash(git:*) Read"}), ["Read"]) == ["bash"]
    # an argument pattern may hold spaces: one entry, not three tools
    need = declared({"allowed-tools": "Bash(npm run test:*) Read"})
    assert need.tools == {"bash"} and need.approved == {"bash", "read"}
    # `requires` stays a list of needs
    assert missing(declared({"requires": {"tools": "jq yq"}}), ["jq"]) == ["yq"]


def _library(folder: Path) -> None:
    write_skill(folder, "daily-news-report",
                "Generate a daily news report by browsing news sites in Chrome",
                extra=f"allowed-tools: {NEWS}\n")
    write_skill(folder, "planning-with-files",
                "Plan a large coding task in markdown files: task plan, findings, progress",
                extra=f"allowed-tools: {PLANNING}\n")


@pytest.mark.parametrize("remote", [False, True], ids=["in-process", "client-of-owner"])
def test_search_and_context_in_process_and_through_a_client(tmp_path, remote):
    _library(tmp_path / "root" / "skills")  # the bank's own skills: the owner serves them too
    with bank_for(tmp_path, remote) as bank:
        news = "generate a daily news report by browsing news sites"
        hits = bank.skills.search(news, k=3, available_tools=CHROME)
        assert hits and hits[0].name == "daily-news-report" and hits.missing_tools == {}
        plan = "plan a large coding task in markdown files"
        hits = bank.skills.search(plan, k=3, available_tools=["Read", "Write", "Edit", "Bash"])
        assert hits and hits[0].name == "planning-with-files"
        # an agent that can use none of them: left out, and said so in the context too
        gated = bank.skills.search(plan, k=3, available_tools=["read_file"])
        assert "planning-with-files" not in [h.name for h in gated]
        assert "planning-with-files" in gated.missing_tools
        from skillbank.memories.skills.dependencies import agent_tools

        with agent_tools(["read_file"]):
            context = bank.context_for(plan)
        assert "planning-with-files" not in context.text
        assert "planning-with-files" in context.missing_tools
        assert bank.context_for(plan).missing_tools == {}


async def test_mcp_says_what_the_gate_left_out(tmp_path):
    from skillbank import Skillbank
    from skillbank.embeddings import HashEmbedding
    from skillbank.mcp_server import build_server

    _library(tmp_path / "skills")
    with Skillbank.open(tmp_path / "root", skill_roots=[tmp_path / "skills"],
                        embedding_function=HashEmbedding(), include_bundled=False) as bank:
        async with Client(build_server(bank, trusted=True)) as client:
            task = {"task": "plan a large coding task in markdown files"}
            found = await call(client, "find_skills", {**task, "available_tools": ["read_file"]})
            assert found["skills"] == [] and "planning-with-files" in found["missing_tools"]
            assert "No skill you can use fits" in found["hint"]
            context = await call(client, "memory_context",
                                 {**task, "available_tools": ["read_file"]})
            assert "planning-with-files" in context["missing_tools"]
            context = await call(client, "memory_context",
                                 {**task, "available_tools": ["Read", "Bash"]})
            assert "planning-with-files" in context["text"] and context["missing_tools"] == {}
