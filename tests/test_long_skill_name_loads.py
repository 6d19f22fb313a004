"""A served skill whose name breaks the spec's 64 characters loads by the name the search
returned, through MCP (real client sessions) and the adapters' tools (hunt-routing #7,
session 28): MCP `find_skills` routed to a 76-character name that `load_skill` then refused
as a schema error. The bank runs in this process and as a client of another process."""

from __future__ import annotations

import json

import pytest
from mcp import Client

from conftest import write_skill
from owner_client import bank_for
from skillbank.errors import NotFoundError
from test_mcp_server import call

BOTH = pytest.mark.parametrize("remote", [False, True], ids=["in-process", "client-of-owner"])
SPEC_LONG = "bake-sourdough-bread-with-a-long-fermented-starter-and-a-crisp-crust-at-home"
VERY_LONG = "knit-" + "-".join(["wool"] * 60) + "-sweater"  # its folder is named "knit-sweater"


def library(tmp_path):
    folder = tmp_path / "skills"
    write_skill(folder, SPEC_LONG, "Bake sourdough bread, feed the starter, score the loaf.")
    (folder / SPEC_LONG / "notes.md").write_text("Feed the starter the night before.\n")
    write_skill(folder, "knit-sweater", "Knit a wool sweater, rib the cuffs, bind off.")
    text = (folder / "knit-sweater" / "SKILL.md").read_text()
    (folder / "knit-sweater" / "SKILL.md").write_text(
        text.replace("name: knit-sweater", f"name: {VERY_LONG}"))
    return folder


@BOTH
async def test_mcp_loads_what_find_skills_serves(tmp_path, remote):
    from skillbank.mcp_server import build_server

    assert len(SPEC_LONG) == 76 and len(VERY_LONG) > 200
    with bank_for(tmp_path, remote, skill_roots=(library(tmp_path),)) as bank:
        async with Client(build_server(bank, trusted=True)) as client:
            for task, name in [("bake a sourdough loaf", SPEC_LONG),
                               ("knit a wool sweater", VERY_LONG)]:
                found = await call(client, "find_skills", {"task": task})
                assert found["skills"][0]["name"] == name
                loaded = await call(client, "load_skill", {"name": name})
                assert loaded["name"] == name
            read = await call(client, "read_skill_resource",
                              {"name": SPEC_LONG, "path": "notes.md"})
            assert "night before" in read["text"]


@BOTH
def test_the_adapters_load_what_find_skills_serves(tmp_path, remote):
    """The LangChain/LlamaIndex tools took names up to 200 characters: a longer served name
    was refused the same way."""
    from skillbank.adapters._tools import run_tool

    with bank_for(tmp_path, remote, skill_roots=(library(tmp_path),)) as bank:
        found = json.loads(run_tool(bank, "find_skills", {"task": "knit a wool sweater"}))
        assert found["skills"][0]["name"] == VERY_LONG
        assert VERY_LONG in run_tool(bank, "load_skill", {"name": VERY_LONG})
        assert "night before" in run_tool(bank, "read_skill_resource",
                                          {"name": SPEC_LONG, "path": "notes.md"})
        with pytest.raises(NotFoundError) as unknown:  # not echoed whole (review, session 28)
            run_tool(bank, "load_skill", {"name": "x" * 60_000})
        assert "no skill named" in str(unknown.value) and len(str(unknown.value)) < 2_000
