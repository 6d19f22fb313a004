"""MCP `memory_context` says why its block is empty, or what it left out, in the adapters'
words (hunt-badinput #5, session 26).

Its `note` carried only what another process's owner does not serve, so an empty answer said
`note: ""` where the adapters' memory_context said "No relevant memory for this task." or
"... left out for the budget; call memory_context again with a larger budget_tokens". The
wording is the core's (`skillbank.tool_text.memory_note`). A real MCP client session, Chroma and
the offline MiniLM; in process and as a client of another process that owns the root.
"""

from __future__ import annotations

import pytest

from conftest import write_skill
from owner_client import bank_for

REMOTE = pytest.mark.parametrize("remote", [False, True], ids=["in-process", "client-of-owner"])
PDF = "build a PDF report from my CSV"


def _skills(tmp_path):
    folder = tmp_path / "skills"
    write_skill(folder, "pdf-report", "Build a PDF report from CSV data with charts. Use when "
                "asked for a PDF report.")
    write_skill(folder, "web-scrape", "Scrape a web page into markdown with a browser. Use when "
                "asked to scrape a website.", extra="requires:\n  tools: [WebFetch]\n")
    return (folder,)


@REMOTE
async def test_an_empty_answer_says_why(tmp_path, minilm, remote):
    """Fails before: each note was ""."""
    from mcp import Client

    from skillbank.adapters.langchain import SkillbankToolkit
    from skillbank.mcp_server import build_server
    from skillbank.tool_text import NO_MEMORY
    from test_mcp_server import call

    with bank_for(tmp_path, remote, minilm, skill_roots=_skills(tmp_path)) as bank:
        adapter = next(t for t in SkillbankToolkit(bank).get_tools()
                       if t.name == "memory_context")
        async with Client(build_server(bank, trusted=True)) as client:
            nothing = await call(client, "memory_context",
                                 {"task": "knit a wool sweater with ribbed cuffs"})
            tight = await call(client, "memory_context", {"task": PDF, "budget_tokens": 50})
            gated = await call(client, "memory_context", {"task": "scrape a website into "
                                                          "markdown", "available_tools": ["Read"]})
            served = await call(client, "memory_context", {"task": PDF})
        said = str(adapter.invoke({"task": PDF, "budget_tokens": 50}))
        owner = getattr(bank, "note", None) or ""  # what the owner process does not serve (the client's note)
    assert nothing["text"] == "" and nothing["note"] == f"{NO_MEMORY} {owner}".strip()
    assert tight["text"] == "" and tight["omitted"] >= 1
    assert tight["note"] == f"{said} {owner}".strip() and "larger budget_tokens" in said
    assert gated["text"] == "" and "web-scrape needs webfetch" in gated["note"]
    assert "pdf-report" in served["text"] and served["note"] == owner
