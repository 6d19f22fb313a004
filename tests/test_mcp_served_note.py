"""Two projects' MCP servers on one root (docs/mcp.md's Cursor setup: a per-project
`--skills-dir` on the shared default root): the second one's server is a client of the first,
which does not serve the second project's skills. The note saying so was only in a log message
and `stats`; a model saw its project's skills missing without a word. It is now on
`find_skills` and `memory_context` results."""

from __future__ import annotations

import warnings

import pytest
from mcp import Client

from conftest import write_skill
from owner_client import owner_process
from skillbank import Skillbank
from skillbank.embeddings import HashEmbedding


def _server(bank):
    from skillbank.mcp_server import build_server

    return build_server(bank, trusted=True)


async def test_a_second_projects_server_is_told_its_skills_are_not_served(tmp_path):
    root = tmp_path / "root"
    alpha, beta = tmp_path / "alpha" / "skills", tmp_path / "beta" / "skills"
    write_skill(alpha, "alpha-deploy", "Deploy alpha to staging with helm.")
    write_skill(beta, "beta-lint", "Lint the beta python code with ruff.")
    with owner_process(root, skill_roots=(alpha,)):
        bank = Skillbank.open(root, embedding_function=HashEmbedding(), include_bundled=False,
                              skill_roots=[beta])
        try:
            assert bank.is_remote
            with warnings.catch_warnings(record=True) as seen:
                warnings.simplefilter("always")
                async with Client(_server(bank)) as client:
                    found = await client.call_tool("find_skills",
                                                   {"task": "lint the beta python code with ruff"})
                    note = found.structured_content["note"]
                    assert str(beta.resolve()) in note and "not served" in note, note
                    block = await client.call_tool("memory_context",
                                                   {"task": "lint the beta code"})
                    # after why the block is what it is (hunt-badinput #5, session 26)
                    assert block.structured_content["note"].endswith(note), block
            # The note's log message (deprecated MCP logging) printed the SDK's
            # MCPDeprecationWarning on the server's stderr.
            assert not [w for w in seen if w.category.__name__ == "MCPDeprecationWarning"]
        finally:
            bank.close()


async def test_no_note_when_the_root_serves_what_was_asked(tmp_path):
    with Skillbank.open(tmp_path / "root", embedding_function=HashEmbedding(),
                        include_bundled=False) as bank:
        async with Client(_server(bank)) as client:
            found = await client.call_tool("find_skills", {"task": "anything"})
            assert found.structured_content["note"] == ""


async def test_propose_skills_with_sampling_on_a_second_server(tmp_path):
    """A second server (a client of the root's owner) whose MCP client offers sampling: the
    tool failed ("an LLMDrafter cannot be sent ..."); the owner drafts with its rules now."""
    from test_mcp_server import sampler

    root = tmp_path / "root"
    with owner_process(root):
        bank = Skillbank.open(root, embedding_function=HashEmbedding(), include_bundled=False)
        try:
            seen: list[str] = []
            async with Client(_server(bank), mode="legacy",
                              sampling_callback=sampler("not JSON", seen)) as client:
                for table in ("orders", "users", "invoices"):
                    await client.call_tool("record_experience", {
                        "task": f"Import the {table} CSV file into a database table",
                        "outcome": "success",
                        "when_to_use": "Loading CSV exports into a database"})
                result = await client.call_tool("propose_skills", {"min_support": 3})
                assert not result.is_error, result.content[0].text
                drafts = result.structured_content["drafts"]
                assert drafts and {d["drafted_by"] for d in drafts} == {"rules"}
        finally:
            bank.close()
