"""Walks as users do (session 7): the memory API through a client of another process that owns
the root — here `name in bank.skills` (the API's membership test), which a client bank did not
support (TypeError), so every face that used it failed when it was not the owner: the
LangChain / LlamaIndex `save_skill` tool, and an MCP server's `load_skill` and `save_skill`
started while a CLI command, a Python process or another server held the root.
"""

from __future__ import annotations

import sys

import pytest
from mcp import Client, StdioServerParameters
from mcp.client.stdio import stdio_client

from owner_client import client_of_owner, owner_process
from test_mcp_transports import base_env


@pytest.mark.slow  # a second process owns the root
def test_membership_tests_through_a_client(tmp_path):
    root = tmp_path / "root"
    with client_of_owner(root) as bank:
        bank.skills.save("csv-import", "Import CSV files into a database table.", "# Steps\n")
        eid = bank.experiences.record(task="Import the orders CSV", outcome="success")
        gid = bank.guidelines.add("Never put SQL in f-strings.").guideline_id
        assert "csv-import" in bank.skills and "no-such-skill" not in bank.skills
        assert eid in bank.experiences and "exp-000000000000" not in bank.experiences
        assert gid in bank.guidelines and "gl-000000000000" not in bank.guidelines
        # As the caller: an id outside its scope is not there, as in the owner process.
        from skillbank import Scope

        bob = bank.scoped(Scope(principal="bob", namespace="bob", role="contributor"))
        assert eid not in bob.experiences and gid not in bob.guidelines

        from skillbank.adapters.langchain import skillbank_tools

        tools = {t.name: t for t in skillbank_tools(bank, include="all")}
        reply = tools["save_skill"].invoke({"name": "csv-import", "description":
                                            "Import CSV files into a table, header first.",
                                            "body": "# Steps\n\n1. Read the header.\n"})
        assert '"updated"' in reply, reply


@pytest.mark.slow  # an owner process and an MCP server process
async def test_an_mcp_server_that_is_a_client_loads_and_saves_skills(tmp_path):
    root = tmp_path / "root"
    with owner_process(root):
        params = StdioServerParameters(command=sys.executable,
                                       args=["-m", "skillbank.mcp_server", "--root", str(root),
                                             "--no-bundled"],
                                       env=base_env(SKILLBANK_EMBEDDING="hash"))
        errlog = (tmp_path / "stderr.txt").open("w")
        async with Client(stdio_client(params, errlog=errlog), read_timeout_seconds=120) as client:
            saved = await client.call_tool("save_skill", {
                "name": "csv-import", "description": "Import CSV files into a database table.",
                "body": "# Steps\n\n1. Read the header.\n"})
            assert not saved.is_error, saved.content[0].text
            loaded = await client.call_tool("load_skill", {"name": "csv-import"})
            assert not loaded.is_error, loaded.content[0].text
            assert "Read the header" in loaded.structured_content["body"]
            missing = await client.call_tool("load_skill", {"name": "no-such-skill"})
            assert missing.is_error and "TypeError" not in missing.content[0].text
        errlog.close()
        # The owner embeds; a client server does not try to (its progress callback cannot
        # cross the wire, so it used to log a false "keyword search only" error).
        log = (tmp_path / "stderr.txt").read_text()
        assert "embedding the skills failed" not in log, log[-3000:]


@pytest.mark.slow  # a second process owns the root
def test_a_rule_of_emoji_alone_is_refused_through_a_client(tmp_path):
    from skillbank.errors import InvalidInputError

    root = tmp_path / "root"
    with client_of_owner(root) as bank:
        for text in ("🔥🚀🎉" * 10, "!!! ??? ...", "👍"):
            with pytest.raises(InvalidInputError, match="no words"):
                bank.guidelines.add(text)
        entries = bank.guidelines.learn("🔥🚀🎉" * 10).entries  # nothing to keep, and why
        assert [(e.action, e.guideline_id) for e in entries] == [("ignored", None)]
        assert "no words" in entries[0].detail  # it was an empty report (hunt-badinput #3)
        assert bank.guidelines.list(status=None) == []
        assert bank.guidelines.add("Use ✅ in the release checklist.").action == "added"
