"""Trigger evals and the tool gate (hunt-evalgate #1-#5, session 37).

#1: `skills eval` skipped in silence the eval file of a skill shadowed by a same-named one, or
nested inside another skill's folder: "No skill keeps trigger evals", exit 0 with
`--fail-on-miss`. #2: `missing_tools` named gated skills that do not fit the request (a skill's
cosine against chance alone passed), more than k of them. #3: `allowed-tools: Bash(git:*)Read`
was one tool "bash(git:*)read": the skill was hidden from every agent and validate called it
valid. #4: an eval query with no letter or digit was a miss, not a bad entry. #5: the LangChain
toolkit took a blank tool name that every other face refuses.

Real parts: Chroma, the offline MiniLM where routing is judged, the real CLI, a real owner
process for the client path.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from typer.testing import CliRunner

from conftest import write_skill
from owner_client import bank_for, owner_process
from skillbank.cli import app
from skillbank.errors import InvalidInputError
from skillbank.memories.skills.dependencies import declared
from skillbank.memories.skills.skill_file import SkillDocument, validate_skill

REMOTE = pytest.mark.parametrize("remote", [False, True], ids=["in-process", "client-of-owner"])


def _evals(folder: Path, *queries: str) -> None:
    (folder / "evals").mkdir()
    (folder / "evals" / "trigger_evals.json").write_text(
        json.dumps([{"query": q, "should_trigger": True} for q in queries]))


def run(*args, code=0):
    result = CliRunner().invoke(app, ["--no-bundled", *map(str, args)])
    assert result.exit_code == code, (args, result.stdout, result.stderr, result.exception)
    return result


# --- #1: a shadowed or nested skill's evals are an error row -------------------------------

@pytest.fixture
def unserved(cli_root, tmp_path, monkeypatch) -> Path:
    """A vendor folder whose `pdf` is shadowed by the root's own and whose `2d-games` is nested
    inside the `games` skill's folder; both keep evals that would miss."""
    vendor = tmp_path / "vendor"
    write_skill(cli_root / "skills", "pdf", "Merge, split and fill PDF forms with qpdf.")
    _evals(write_skill(vendor, "pdf", "Work with PDF files: merge, split, extract text.").parent,
           "bake a chocolate cake")
    write_skill(vendor, "games", "Game development overview.")
    _evals(write_skill(vendor / "games", "2d-games", "Build 2D platformer games.").parent,
           "file my taxes")
    monkeypatch.setenv("SKILLBANK_SKILL_ROOTS", str(vendor))
    return vendor


def _check_unserved(vendor: Path) -> None:
    out = json.loads(run("--json", "skills", "eval", code=2).stdout)
    assert out["skills"] == []
    rows = {e["skill"]: e for e in out["errors"]}
    assert sorted(rows) == ["2d-games", "pdf"]
    assert rows["pdf"]["file"] == str(vendor / "pdf" / "evals" / "trigger_evals.json")
    assert "not run" in rows["pdf"]["error"] and "which wins" in rows["pdf"]["error"]
    assert str(vendor / "games" / "SKILL.md") in rows["2d-games"]["error"]
    run("skills", "eval", "--fail-on-miss", code=2)


def test_eval_names_shadowed_and_nested_skills(unserved):
    """Fails before: `{"skills": [], "errors": []}`, exit 0."""
    _check_unserved(unserved)


def test_eval_names_them_through_a_client_of_the_owner(unserved, cli_root):
    with owner_process(cli_root, (unserved,)):
        _check_unserved(unserved)


# --- #4: a query with nothing to route on is a bad entry ----------------------------------

def test_an_unroutable_eval_query_is_a_bad_entry(cli_root):
    """Fails before: two "missed ... -> nothing fits" rows and exit 1 with --fail-on-miss."""
    _evals(write_skill(cli_root / "skills", "pdf-merge", "Merge and split PDF files.").parent,
           "merge these two PDFs", "📄➕📄", "\u200b")
    result = run("skills", "eval", "pdf-merge", "--fail-on-miss", code=2)
    error = " ".join(result.stderr.split())
    assert "2 bad entries" in error and "item 2" in error and "item 3" in error
    assert "no letters or digits" in error


# --- #3: text glued to a closing parenthesis declares nothing, with a warning ---------------

def test_text_after_a_closing_parenthesis_declares_nothing():
    """Fails before: one tool "bash(git:*)read" and no warning."""
    need = declared({"allowed-tools": "Bash(git:*)Read"})
    assert not need and "right after a closing parenthesis" in need.warnings[0]
    listed = declared({"allowed-tools": ["Bash(git:*)Read", "Write"]})
    assert listed.approved == {"write"} and len(listed.warnings) == 1
    assert declared({"allowed-tools": "Bash(git:*), Read"}).tools == {"bash"}
    assert not declared({"allowed-tools": "Bash(git:*) Read(x)"}).warnings
    doc = SkillDocument({"name": "x", "description": "d", "allowed-tools": "Bash(git:*)Read"}, "")
    assert [(f.severity, f.code) for f in validate_skill(doc, folder_name="x")] == [
        ("warning", "tool-gate-unread")]


@REMOTE
def test_a_glued_entry_hides_the_skill_from_no_agent(tmp_path, remote):
    """Fails before: nothing served and missing_tools {"git-push": ["bash(git:*)read"]}."""
    folder = tmp_path / "skills"
    write_skill(folder, "git-push", "Commit and push changes with git to the remote.",
                extra="allowed-tools: Bash(git:*)Read\n")
    with bank_for(tmp_path, remote, skill_roots=(folder,)) as bank:
        hits = bank.skills.search("commit and push my changes with git",
                                  available_tools=["Bash", "Read", "Write", "Edit"])
        assert [h.name for h in hits] == ["git-push"] and hits.missing_tools == {}


# --- #2: missing_tools names only gated skills that would have been served -----------------

RUBE = "requires:\n  mcp: [rube]\n"
UNRELATED = {
    "semrush-automation": "Automate SEO analysis with SEMrush: research keywords, analyze "
                          "domain organic rankings, audit backlinks, through the Composio "
                          "SEMrush integration.",
    "page-x-automation": "Automate Page X tasks via Rube MCP (Composio). Always search tools "
                         "first for current schemas.",
    "snowflake-automation": "Automate Snowflake data warehouse operations: list databases, "
                            "schemas, and tables, execute SQL statements via the Composio MCP "
                            "integration.",
    "prismic-automation": "Automate headless CMS operations in Prismic: query documents, search "
                          "content, retrieve custom types through the Composio integration.",
    "eventbrite-automation": "Automate Eventbrite event management, attendee tracking, "
                             "organization discovery, and category browsing.",
    "apollo-automation": "Automate Apollo.io lead generation: search organizations, discover "
                         "contacts, enrich prospect data through the Composio MCP integration.",
}


@REMOTE
def test_missing_tools_names_no_unrelated_gated_skill(tmp_path, minilm, remote):
    """Fails before: the Rube skills for SEMrush, Page X ... were named for a Notion request."""
    folder = tmp_path / "skills"
    for name, description in UNRELATED.items():
        write_skill(folder, name, description, extra=RUBE)
    write_skill(folder, "notion-pages", "Automate Notion pages and databases with the Notion "
                "API: create pages, query databases. Use when asked to automate Notion.",
                extra=RUBE)
    write_skill(folder, "notion-template-business", "Build and sell Notion templates as a "
                "business: template design, pricing, marketplaces.")
    with bank_for(tmp_path, remote, minilm, skill_roots=(folder,)) as bank:
        task = "automate notion pages and databases"
        assert bank.skills.search(task)[0].name == "notion-pages"  # it fits; the others do not
        hits = bank.skills.search(task, k=5, available_tools=["Read", "Write", "Bash"])
        assert hits.missing_tools == {"notion-pages": ["mcp:rube"]}
        assert len(bank.skills.search("automate my work", k=1, available_tools=["Read"])
                   .missing_tools) <= 1  # at most k named


# --- #5: every face refuses a blank tool name ----------------------------------------------

@REMOTE
def test_the_langchain_toolkit_refuses_a_blank_tool_name(tmp_path, remote):
    """Fails before: `["  "]` and `["Bash", "  "]` were taken, gating out every declaring skill."""
    from skillbank.adapters.langchain import SkillbankToolkit
    from skillbank.memories.skills.dependencies import agent_tools

    folder = tmp_path / "skills"
    write_skill(folder, "git-push", "Commit and push changes with git to the remote.",
                extra="allowed-tools: Bash(git:*) Read\n")
    with bank_for(tmp_path, remote, skill_roots=(folder,)) as bank:
        for tools in (["  "], ["Bash", "  "]):
            with pytest.raises(InvalidInputError, match="empty tool name"):
                SkillbankToolkit(bank, available_tools=tools, include="all")
            with pytest.raises(InvalidInputError, match="empty tool name"), agent_tools(tools):
                bank.context_for("commit and push my changes")
        tools = {t.name: t for t in SkillbankToolkit(bank, available_tools=["Bash"],
                                                     include="all").get_tools()}
        answer = json.loads(tools["find_skills"].invoke({"task": "commit and push with git"}))
        assert [s["name"] for s in answer["skills"]] == ["git-push"]
