"""The agent as curator through its tools: nearest rules with ids, replaces=<id> (MCP, and the
framework-free tool set the LangChain and LlamaIndex adapters wrap)."""

from __future__ import annotations

import json

import pytest
from mcp import Client

from skillbank.adapters._tools import run_tool
from skillbank.errors import SkillbankError


@pytest.fixture
def bank(hash_bank):
    return hash_bank  # conftest: a temp root, the hash embedding, no bundled skills


def test_adapter_tools_show_nearest_ids_and_replace(bank):
    old = json.loads(run_tool(bank, "add_guideline", {"text": "Keep paragraphs short."}))
    new = json.loads(run_tool(bank, "add_guideline", {
        "text": "Keep paragraphs to three sentences at most.", "replaces": old["guideline_id"]}))
    assert new["action"] == "superseded" and new["superseded_id"] == old["guideline_id"]
    assert bank.guidelines.get(old["guideline_id"]).status == "superseded"
    near = json.loads(run_tool(bank, "add_guideline", {"text": "Split paragraphs that are long."}))
    assert any(n["id"] == new["guideline_id"] for n in near.get("nearest", []))
    with pytest.raises(SkillbankError, match="already superseded"):
        run_tool(bank, "add_guideline", {"text": "Keep paragraphs tiny.",
                                         "replaces": old["guideline_id"]})


async def test_mcp_add_guideline_replaces_and_untrusted_waits(bank):
    from skillbank.mcp_server import build_server

    async with Client(build_server(bank, trusted=True)) as client:
        first = (await client.call_tool("add_guideline", {"text": "Use tabs in Makefiles only."}))
        gid = first.structured_content["guideline_id"]
        second = await client.call_tool("add_guideline", {
            "text": "Use tabs in Makefiles and Go files.", "replaces": gid})
        assert not second.is_error and second.structured_content["superseded_id"] == gid
        bad = await client.call_tool("add_guideline", {"text": "Use spaces.", "replaces": gid})
        assert bad.is_error and "already superseded" in bad.content[0].text
        assert "Traceback" not in bad.content[0].text
    current = second.structured_content["guideline_id"]
    async with Client(build_server(bank, trusted=False)) as client:
        pending = await client.call_tool("add_guideline", {
            "text": "Use tabs only in Makefiles, spaces in Go.", "replaces": current})
        assert pending.structured_content["action"] == "pending"
    assert bank.guidelines.get(current).status == "active"  # until a reviewer approves
