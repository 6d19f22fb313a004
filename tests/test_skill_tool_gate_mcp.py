"""MCP find_skills takes the caller's tool names (#26): skills needing tools it lacks are left
out and named; a bad list is a tool error, never a traceback. Real MCP client session."""

from __future__ import annotations

import pytest
from mcp import Client

from conftest import write_skill
from test_mcp_server import MODES, call, fails


@pytest.fixture
def server(tmp_path):
    from skillbank import Skillbank
    from skillbank.embeddings import HashEmbedding
    from skillbank.mcp_server import build_server

    folder = tmp_path / "skills"
    write_skill(folder, "git-bisect", "Find the commit that introduced a bug with git bisect",
                extra="allowed-tools: Bash(git:*) Read\n")
    bank = Skillbank.open(tmp_path / "root", skill_roots=[folder],
                          embedding_function=HashEmbedding(), include_bundled=False)
    yield build_server(bank, trusted=True)
    bank.close()


@pytest.mark.parametrize("mode", MODES)
async def test_find_skills_gates_on_the_callers_tools(server, mode):
    task = {"task": "find the commit that introduced this bug with git bisect"}
    async with Client(server, mode=mode) as client:
        assert (await call(client, "find_skills", task))["skills"][0]["name"] == "git-bisect"
        lacking = await call(client, "find_skills", {**task, "available_tools": ["Read"]})
        assert lacking["skills"] == [] and lacking["missing_tools"] == {"git-bisect": ["bash"]}
        having = await call(client, "find_skills", {**task, "available_tools": ["Bash", "Read"]})
        assert having["skills"][0]["name"] == "git-bisect" and having["missing_tools"] == {}
        assert "available_tools" in await fails(client, "find_skills",
                                                {**task, "available_tools": "Bash"})


@pytest.mark.parametrize("mode", MODES)
async def test_memory_context_gates_on_the_callers_tools(server, mode):
    """Fails before: memory_context took no tool names, so a skill needing bash reached the
    memory of a client that said it has none."""
    task = {"task": "find the commit that introduced this bug with git bisect"}
    async with Client(server, mode=mode) as client:
        assert "git-bisect" in (await call(client, "memory_context", task))["text"]
        lacking = await call(client, "memory_context", {**task, "available_tools": ["Read"]})
        assert "git-bisect" not in lacking["text"]
        having = await call(client, "memory_context",
                            {**task, "available_tools": ["Bash", "Read"]})
        assert "git-bisect" in having["text"]
        assert "available_tools" in await fails(client, "memory_context",
                                                {**task, "available_tools": "Bash"})
