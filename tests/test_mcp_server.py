"""The MCP server in process: real `mcp.Client` sessions, in the default (2026-07-28, direct
dispatch) mode and in `mode="legacy"` (JSON-RPC with the initialize handshake)."""

from __future__ import annotations

import hashlib
import json
import threading
import time
from pathlib import Path
from typing import Any

import anyio
import mcp_types as types
import pytest
from mcp import Client
from pydantic import BaseModel

from conftest import write_skill

MODES = ["auto", "legacy"]
SHARED_TOOLS = {"find_skills", "load_skill", "read_skill_resource", "save_skill", "memory_context",
                "record_experience", "recall_experiences", "learn_from_critique", "add_guideline",
                "search_guidelines", "rate_memory"}
TOOLS = SHARED_TOOLS | {"forget", "list_pending", "review_memory", "propose_skills"}
PROMPTS = {"start_task", "reflect", "review_pending", "clean_up"}
PNG = b"\x89PNG\r\n\x1a\n\x00\x00\x00\rIHDR" + bytes(range(64))


def make_bank(tmp: Path, **kw: Any):
    from skillbank import Skillbank
    from skillbank.embeddings import HashEmbedding

    shared = tmp / "shared-skills"
    write_skill(shared, "pdf-tables", "Extract tables and text from PDF files with pdfplumber",
                body="# Steps\n\n1. Open the PDF with pdfplumber.\n2. See references/guide.md.\n")
    refs = shared / "pdf-tables" / "references"
    refs.mkdir(exist_ok=True)
    (refs / "guide.md").write_text("# Guide\n\nUse page.extract_tables().\n")
    (shared / "pdf-tables" / "assets").mkdir(exist_ok=True)
    (shared / "pdf-tables" / "assets" / "logo.png").write_bytes(PNG)
    write_skill(shared, "git-bisect", "Find the commit that introduced a bug with git bisect")
    bank = Skillbank.open(tmp / "root", skill_roots=[shared], embedding_function=HashEmbedding(),
                          include_bundled=False, **kw)
    return bank


@pytest.fixture
def bank(tmp_path):
    bank = make_bank(tmp_path)
    yield bank
    bank.close()


@pytest.fixture
def server(bank):
    from skillbank.mcp_server import build_server

    return build_server(bank, trusted=True)


async def call(client: Client, name: str, args: dict[str, Any]) -> dict[str, Any]:
    result = await client.call_tool(name, args)
    assert not result.is_error, result.content[0].text
    assert result.structured_content is not None
    return result.structured_content


async def fails(client: Client, name: str, args: dict[str, Any]) -> str:
    result = await client.call_tool(name, args)
    assert result.is_error, result.structured_content
    text = result.content[0].text
    assert "Traceback" not in text and "File \"" not in text
    return text


# Tools --------------------------------------------------------------------------------------------
@pytest.mark.parametrize("mode", MODES)
async def test_tools_are_listed_with_input_and_output_schemas(server, mode):
    async with Client(server, mode=mode) as client:
        tools = {t.name: t for t in (await client.list_tools()).tools}
        assert set(tools) == TOOLS
        from skillbank.adapters._tools import tool_defs

        adapters = {d.name: d.description for d in tool_defs()}
        for tool in tools.values():
            assert tool.description and len(tool.description) > 40, tool.name
            # One wording for every face: MCP, LangChain and LlamaIndex read the same table.
            if tool.name in SHARED_TOOLS:
                assert tool.description == adapters[tool.name], tool.name
            assert tool.output_schema is not None, tool.name
            assert "ctx" not in tool.input_schema["properties"]
            assert "sampled" not in tool.input_schema["properties"]
        find = tools["find_skills"].input_schema
        assert find["required"] == ["task"] and find["properties"]["k"]["default"] == 5
        assert tools["find_skills"].annotations.read_only_hint is True
        assert tools["save_skill"].annotations.read_only_hint is False
        outcome = tools["record_experience"].input_schema["properties"]["outcome"]
        assert set(outcome["enum"]) == {"success", "failure", "partial", "unknown"}
        assert client.server_info is None or client.server_info.name == "skillbank"


@pytest.mark.parametrize("mode", MODES)
async def test_find_load_and_read_a_skill(server, mode):
    async with Client(server, mode=mode) as client:
        found = await call(client, "find_skills", {"task": "extract the tables from a PDF report"})
        assert found["skills"][0]["name"] == "pdf-tables"
        assert found["skills"][0]["uri"] == "skill://pdf-tables/SKILL.md"
        skill = await call(client, "load_skill", {"name": "pdf-tables"})
        assert "pdfplumber" in skill["body"] and skill["writable"] is False
        paths = {f["path"]: f for f in skill["files"]}
        assert set(paths) == {"references/guide.md", "assets/logo.png"}
        assert paths["assets/logo.png"]["sha256"] == hashlib.sha256(PNG).hexdigest()
        text = await call(client, "read_skill_resource", {"name": "pdf-tables", "path": "references/guide.md"})
        assert "extract_tables" in text["text"]
        nothing = await call(client, "find_skills", {"task": "zzzz qqqq", "k": 3})
        assert nothing["skills"] == [] and "No skill fits" in nothing["hint"]


@pytest.mark.parametrize("mode", MODES)
async def test_save_skill_creates_updates_and_overrides_read_only_copies(server, bank, mode):
    async with Client(server, mode=mode) as client:
        created = await call(client, "save_skill", {
            "name": "deploy-fly", "description": "Deploy a Python web app to fly.io",
            "body": "# Steps\n\n1. fly launch\n2. fly deploy\n"})
        assert created["action"] == "created" and created["uri"] == "skill://deploy-fly/SKILL.md"
        updated = await call(client, "save_skill", {
            "name": "deploy-fly", "description": "Deploy a Python web app to fly.io (with secrets)",
            "body": "# Steps\n\n1. fly secrets set\n2. fly deploy\n"})
        assert updated["action"] == "updated"
        assert "fly secrets" in bank.skills.load("deploy-fly").body
        found = await call(client, "find_skills", {"task": "deploy my python app on fly.io"})
        assert found["skills"][0]["name"] == "deploy-fly"
        own = await call(client, "save_skill", {"name": "pdf-tables", "description": "My PDF tables recipe",
                                                "body": "# Steps\n\nUse camelot.\n"})
        assert own["action"] == "created" and "read-only" in own["note"]
        mine = bank.skills.load("pdf-tables")
        assert mine.writable and "camelot" in mine.body  # the bank's own copy now wins
        bad = await fails(client, "save_skill", {"name": "Bad Name!", "description": "A skill",
                                                 "body": "body"})
        assert "name" in bad.lower()


@pytest.mark.parametrize("mode", MODES)
async def test_bad_arguments_come_back_as_fixable_tool_errors(server, mode):
    async with Client(server, mode=mode) as client:
        assert "no skill named 'nope'" in (msg := await fails(client, "load_skill", {"name": "nope"}))
        assert "find_skills" in msg
        assert "no skill named" in await fails(client, "read_skill_resource",
                                               {"name": "nope", "path": "x.md"})
        assert ".." in await fails(client, "read_skill_resource",
                                   {"name": "pdf-tables", "path": "../../etc/passwd"})
        assert "has no file" in await fails(client, "read_skill_resource",
                                            {"name": "pdf-tables", "path": "references/missing.md"})
        assert "binary" in await fails(client, "read_skill_resource",
                                       {"name": "pdf-tables", "path": "assets/logo.png"})
        assert "k" in await fails(client, "find_skills", {"task": "x", "k": 0})
        assert "task" in await fails(client, "find_skills", {})
        assert "outcome" in await fails(client, "record_experience", {"task": "t", "outcome": "great"})
        assert "unknown id" in await fails(client, "rate_memory", {"id": "zz-123", "helpful": True})
        assert "budget_tokens" in await fails(client, "memory_context", {"task": "t", "budget_tokens": 5})
        unknown = await client.call_tool("no_such_tool", {})
        assert unknown.is_error and "no_such_tool" in unknown.content[0].text


@pytest.mark.parametrize("mode", MODES)
async def test_experiences_record_recall_context_and_rate(server, mode):
    async with Client(server, mode=mode) as client:
        recorded = await call(client, "record_experience", {
            "task": "Deploy the Flask app to fly.io", "outcome": "failure",
            "steps": ["fly deploy", {"action": "fly logs", "observation": "app listens on 127.0.0.1"}],
            "feedback": "Bind the server to 0.0.0.0 so the proxy can reach it", "score": 0.2,
            "tags": ["deploy", "fly"], "when_to_use": "When deploying web apps to fly.io"})
        eid = recorded["id"]
        assert eid.startswith("exp-") and recorded["outcome"] == "failure"
        await call(client, "record_experience", {"task": "Write a haiku about autumn", "outcome": "success"})
        recalled = await call(client, "recall_experiences", {"task": "deploy a flask app on fly.io"})
        top = recalled["experiences"][0]
        assert top["id"] == eid and top["steps"] == ["fly deploy", "fly logs"]
        assert "0.0.0.0" in top["feedback"]
        only = await call(client, "recall_experiences", {"task": "deploy flask fly", "outcome": "success"})
        assert all(e["outcome"] == "success" for e in only["experiences"])
        ctx = await call(client, "memory_context", {"task": "deploy a flask app to fly.io",
                                                    "budget_tokens": 800})
        assert eid in ctx["ids"] and "<skillbank-memory>" in ctx["text"] and ctx["tokens"] <= 800
        rated = await call(client, "rate_memory", {"id": eid, "helpful": True})
        assert rated == {"id": eid, "kind": "experience", "helpful": True, "status": None,
                         "counted": True, "note": ""}
        rated = await call(client, "rate_memory", {"id": "skill:pdf-tables", "helpful": False})
        assert rated["kind"] == "skill"


@pytest.mark.parametrize("mode", MODES)
async def test_guidelines_learn_add_search_and_vote(server, mode):
    async with Client(server, mode=mode) as client:
        learned = await call(client, "learn_from_critique", {
            "critique": "Always add type hints to public functions. Great job otherwise!",
            "task": "Write a Python helper that parses dates"})
        assert learned["distilled_by"] == "rules" and learned["pending_review"] is False
        actions = {e["action"] for e in learned["entries"]}
        assert "added" in actions
        gid = next(e["guideline_id"] for e in learned["entries"] if e["action"] == "added")
        added = await call(client, "add_guideline", {"text": "Use parameterised SQL queries",
                                                     "topic": "sql", "when_to_use": "When writing SQL"})
        assert added["action"] == "added" and added["guideline_id"].startswith("gl-")
        again = await call(client, "add_guideline", {"text": "Use parameterised SQL queries", "topic": "sql"})
        assert again["action"] == "merged"
        found = await call(client, "search_guidelines", {"task": "write a python function with type hints"})
        assert found["guidelines"][0]["id"] == gid and found["guidelines"][0]["topic"] == "python"
        vote = await call(client, "rate_memory", {"id": gid, "helpful": True})
        assert vote["kind"] == "guideline" and vote["status"] == "active"
        assert "topic" in await fails(client, "add_guideline", {"text": "Be nice", "topic": "Not A Slug!"})


async def test_untrusted_clients_critiques_wait_for_approval(bank):
    from skillbank.mcp_server import build_server

    untrusted = build_server(bank, trusted=False)
    async with Client(untrusted) as client:
        learned = await call(client, "learn_from_critique", {
            "critique": "Never use print for logging; use the logging module.", "task": "Python service"})
        assert learned["pending_review"] is True and "approve" in learned["note"]
        assert {e["action"] for e in learned["entries"]} == {"pending"}
        added = await call(client, "add_guideline", {"text": "Always run the tests before committing"})
        assert added["action"] == "pending"
        found = await call(client, "search_guidelines", {"task": "python service logging"})
        assert found["guidelines"] == []  # pending rules do not apply yet


# Sampling -----------------------------------------------------------------------------------------
RULES_REPLY = json.dumps([
    {"text": "Quote every identifier in generated SQL.", "topic": "sql",
     "when_to_use": "When generating SQL for user tables", "actionable": True,
     "source_sentence": "the column names broke"},
    {"text": "nice formatting", "actionable": False}])


def sampler(reply: str, seen: list[str]):
    async def callback(context: Any, params: types.CreateMessageRequestParams) -> types.CreateMessageResult:
        seen.append(params.messages[0].content.text)
        return types.CreateMessageResult(role="assistant", model="fake-llm",
                                         content=types.TextContent(type="text", text=reply))

    return callback


@pytest.mark.parametrize("mode", MODES)
async def test_learn_from_critique_uses_the_clients_model_through_sampling(server, bank, mode):
    seen: list[str] = []
    async with Client(server, mode=mode, sampling_callback=sampler(RULES_REPLY, seen)) as client:
        learned = await call(client, "learn_from_critique", {
            "critique": "The column names broke because they were not quoted. Nice formatting though.",
            "task": "Generate a SQL report", "response": "SELECT order FROM t", "score": 0.4})
    assert len(seen) == 1 and "Generate a SQL report" in seen[0] and "Critique:" in seen[0]
    assert learned["distilled_by"] == "client_model"
    by_action = {e["action"]: e for e in learned["entries"]}
    assert by_action["added"]["text"] == "Quote every identifier in generated SQL."
    assert "ignored" in by_action
    rule = bank.guidelines.get(by_action["added"]["guideline_id"])
    assert rule.topic == "sql" and rule.when_to_use == "When generating SQL for user tables"


@pytest.mark.parametrize("mode", MODES)
async def test_an_unusable_sampling_reply_falls_back_to_the_rule_distiller(server, mode):
    seen: list[str] = []
    async with Client(server, mode=mode, sampling_callback=sampler("I cannot help with that.", seen)) as client:
        learned = await call(client, "learn_from_critique", {
            "critique": "Always close files with a context manager.", "task": "Python file handling"})
    assert seen and learned["distilled_by"] == "rules"
    assert learned["entries"][0]["action"] == "added"
    # Why, for the caller: the note was empty (hunt-sampling #4, session 36).
    assert "no usable rules (unparseable reply)" in learned["note"], learned["note"]


async def test_a_sampling_reply_that_never_comes_falls_back_to_the_rules(bank, monkeypatch):
    """A legacy session's sampling request waits at most SKILLBANK_MCP_SAMPLING_TIMEOUT: a reply
    the HTTP guard refused (over its body limit) never reached the waiting request, and
    learn_from_critique hung for good."""
    import anyio

    from skillbank.mcp_server import build_server

    monkeypatch.setenv("SKILLBANK_MCP_SAMPLING_TIMEOUT", "1")
    asked: list[str] = []

    async def never(context: Any, params: types.CreateMessageRequestParams) -> Any:
        asked.append("asked")
        await anyio.sleep(3600)

    async with Client(build_server(bank, trusted=True), mode="legacy",
                      sampling_callback=never) as client:
        with anyio.fail_after(60):
            learned = await call(client, "learn_from_critique", {
                "critique": "Always close files with a context manager.",
                "task": "Python file handling"})
    assert asked and learned["distilled_by"] == "rules"
    assert learned["entries"][0]["action"] == "added"
    assert "no reply within 1 s" in learned["note"], learned["note"]


def test_a_bad_sampling_timeout_stops_the_server_named(bank, monkeypatch):
    from skillbank.errors import InvalidInputError
    from skillbank.mcp_server import build_server

    monkeypatch.setenv("SKILLBANK_MCP_SAMPLING_TIMEOUT", "0")
    with pytest.raises(InvalidInputError, match="SKILLBANK_MCP_SAMPLING_TIMEOUT"):
        build_server(bank, trusted=True)


# Resources ----------------------------------------------------------------------------------------
@pytest.mark.parametrize("mode", MODES)
async def test_skill_files_are_resources_with_sizes_and_digests(server, tmp_path, mode):
    shared = tmp_path / "shared-skills"
    async with Client(server, mode=mode) as client:
        listed = {str(r.uri): r for r in (await client.list_resources()).resources}
        expected = {
            "skill://pdf-tables/SKILL.md": shared / "pdf-tables" / "SKILL.md",
            "skill://pdf-tables/references/guide.md": shared / "pdf-tables" / "references" / "guide.md",
            "skill://pdf-tables/assets/logo.png": shared / "pdf-tables" / "assets" / "logo.png",
            "skill://git-bisect/SKILL.md": shared / "git-bisect" / "SKILL.md",
        }
        for uri, path in expected.items():
            data = path.read_bytes()
            entry = listed[uri]
            assert entry.size == len(data)
            assert entry.meta["skillbank/digest"] == "sha256:" + hashlib.sha256(data).hexdigest()
            assert entry.annotations.last_modified
        main = listed["skill://pdf-tables/SKILL.md"]
        assert main.name == "pdf-tables" and main.mime_type == "text/markdown"
        assert main.description.startswith("Extract tables")
        assert "skillbank://stats" in listed
        read = (await client.read_resource("skill://pdf-tables/SKILL.md")).contents[0]
        assert read.text == expected["skill://pdf-tables/SKILL.md"].read_text()
        assert read.mime_type == "text/markdown"
        blob = (await client.read_resource("skill://pdf-tables/assets/logo.png")).contents[0]
        assert blob.mime_type == "image/png" and hashlib.sha256(
            __import__("base64").b64decode(blob.blob)).hexdigest() == hashlib.sha256(PNG).hexdigest()
        stats = json.loads((await client.read_resource("skillbank://stats")).contents[0].text)
        assert stats["skills"] == 2 and stats["server"]["caller_trusted"] is True
        templates = {t.uri_template for t in (await client.list_resource_templates()).resource_templates}
        assert {"skill://{name}/SKILL.md", "skill://{name}/{+path}",
                "skillbank://guidelines/{topic}"} <= templates
        from mcp.shared.exceptions import MCPError

        with pytest.raises(MCPError) as missing:
            await client.read_resource("skill://no-such-skill/SKILL.md")
        assert "no-such-skill" in str(missing.value)
        with pytest.raises(MCPError):
            await client.read_resource("skill://pdf-tables/../../etc/passwd")


async def test_resource_list_follows_the_files_and_guideline_topics(server, bank, tmp_path):
    async with Client(server) as client:
        before = {str(r.uri) for r in (await client.list_resources()).resources}
        write_skill(tmp_path / "shared-skills", "csv-clean", "Clean messy CSV files with pandas")
        bank.skills.sync()
        await call(client, "add_guideline", {"text": "Validate CSV headers before parsing", "topic": "data"})
        after = {str(r.uri) for r in (await client.list_resources()).resources}
        assert after - before == {"skill://csv-clean/SKILL.md", "skillbank://guidelines/data"}
        playbook = (await client.read_resource("skillbank://guidelines/data")).contents[0].text
        assert "Validate CSV headers" in playbook
        from mcp.shared.exceptions import MCPError

        with pytest.raises(MCPError) as unknown:
            await client.read_resource("skillbank://guidelines/nothing-here")
        # Where to look, said once: it read "…; resources/list shows the topics; resources/list
        # shows what is served" (hunt-curator #8, session 25).
        assert str(unknown.value).count("resources/list") == 1
        (rule,) = bank.guidelines.list(topic="data")
        bank.guidelines.retire(rule.id)
        with pytest.raises(MCPError) as retired:
            await client.read_resource("skillbank://guidelines/data")
        assert "no active guidelines on topic 'data'" in str(retired.value)
        assert str(retired.value).count("resources/list") == 1


class ListSkillsRequest(types.Request[types.PaginatedRequestParams | None, str]):
    method: str = "skills/list"
    params: types.PaginatedRequestParams | None = None


class GetSkillRequestParams(types.RequestParams):
    uri: str


class GetSkillRequest(types.Request[GetSkillRequestParams, str]):
    method: str = "skills/get"
    params: GetSkillRequestParams


class SkillsResult(BaseModel):
    skills: list[dict[str, Any]] | None = None
    skill: dict[str, Any] | None = None
    ttlMs: int
    cacheScope: str
    nextCursor: str | None = None


async def test_skills_list_is_paged_like_resources_list(server):
    """skills/list returned every manifest at once (1.1 MB on the corpus; docs hunt, s18)."""
    from mcp.shared.exceptions import MCPError

    server.page_size = 1
    async with Client(server) as client:
        seen, cursor = [], None
        while True:
            params = types.PaginatedRequestParams(cursor=cursor) if cursor else None
            page = await client.session.send_request(ListSkillsRequest(params=params),
                                                     SkillsResult)
            assert len(page.skills) <= 1
            seen += [s["uri"] for s in page.skills]
            cursor = page.nextCursor
            if cursor is None:
                break
        assert len(seen) == len(set(seen)) >= 2 and "skill://pdf-tables/SKILL.md" in seen
        with pytest.raises(MCPError, match="skills/list: the cursor is not one"):
            await client.session.send_request(ListSkillsRequest(
                params=types.PaginatedRequestParams(cursor="bogus")), SkillsResult)


async def test_skills_extension_lists_manifests_in_the_spec_form(server, tmp_path):
    from mcp.shared.exceptions import MCPError

    async with Client(server) as client:
        assert "io.modelcontextprotocol/skills" in (client.server_capabilities.extensions or {})
        listed = await client.session.send_request(ListSkillsRequest(), SkillsResult)
        entries = {s["uri"]: s for s in listed.skills}
        pdf = entries["skill://pdf-tables/SKILL.md"]
        assert pdf["frontmatter"]["name"] == "pdf-tables"
        assert pdf["frontmatter"]["description"].startswith("Extract tables")
        files = {r["uri"]: r for r in pdf["resources"]}
        logo = tmp_path / "shared-skills" / "pdf-tables" / "assets" / "logo.png"
        assert files["skill://pdf-tables/assets/logo.png"] == {
            "uri": "skill://pdf-tables/assets/logo.png", "size": len(PNG), "mimeType": "image/png",
            "digest": "sha256:" + hashlib.sha256(logo.read_bytes()).hexdigest()}
        assert "skill://pdf-tables/SKILL.md" in files
        got = await client.session.send_request(
            GetSkillRequest(params=GetSkillRequestParams(uri="skill://git-bisect/SKILL.md")), SkillsResult)
        assert got.skill["frontmatter"]["name"] == "git-bisect" and len(got.skill["resources"]) == 1
        with pytest.raises(MCPError) as unknown:
            await client.session.send_request(
                GetSkillRequest(params=GetSkillRequestParams(uri="skill://nope/SKILL.md")), SkillsResult)
        assert unknown.value.error.code == types.INVALID_PARAMS


# Prompts ------------------------------------------------------------------------------------------
@pytest.mark.parametrize("mode", MODES)
async def test_prompts_start_task_and_reflect(server, mode):
    async with Client(server, mode=mode) as client:
        await call(client, "add_guideline", {"text": "Write docstrings for public functions", "topic": "python"})
        prompts = {p.name: p for p in (await client.list_prompts()).prompts}
        assert set(prompts) == PROMPTS
        assert [a.name for a in prompts["reflect"].arguments] == ["task", "outcome", "feedback"]
        start = await client.get_prompt("start_task", {"task": "write python functions with docstrings"})
        text = start.messages[0].content.text
        assert "Write docstrings" in text and "rate_memory" in text and "load_skill" in text
        reflect = await client.get_prompt("reflect", {"task": "Parse dates", "outcome": "failure",
                                                      "feedback": "Handle time zones"})
        text = reflect.messages[0].content.text
        assert "record_experience" in text and "learn_from_critique" in text and "Handle time zones" in text
        from mcp.shared.exceptions import MCPError

        with pytest.raises(MCPError) as bad:
            await client.get_prompt("reflect", {"task": "x", "outcome": "meh"})
        # The cause survives (the SDK alone says only "Error rendering prompt reflect").
        assert bad.value.error.code == types.INVALID_PARAMS and "'meh'" in bad.value.error.message
        with pytest.raises(MCPError) as missing:
            await client.get_prompt("reflect", {"task": "x"})
        assert "outcome" in missing.value.error.message and missing.value.error.code == types.INVALID_PARAMS
        with pytest.raises(MCPError) as unknown:
            await client.get_prompt("reflekt", {})
        assert "reflect" in unknown.value.error.message


# Startup ------------------------------------------------------------------------------------------
async def test_initialize_and_listing_do_not_wait_for_the_bank(tmp_path):
    from skillbank.mcp_server import build_server
    from skillbank.mcp_server.loader import BankHandle

    release = threading.Event()

    def slow_open():
        release.wait(600)  # generous: the test sets it; never reached under load
        return make_bank(tmp_path, sync=False)

    handle = BankHandle(opener=slow_open, sync=True).start()
    server = build_server(handle, trusted=True)
    try:
        async with Client(server, mode="legacy") as client:
            assert len((await client.list_tools()).tools) == len(TOOLS)
            assert len((await client.list_prompts()).prompts) == len(PROMPTS)
            # Listed while the bank is still opening (it cannot finish before `release`).
            assert "open" not in handle.timings and not release.is_set()
            threading.Timer(0.3, release.set).start()
            found = await call(client, "find_skills", {"task": "extract PDF tables"})
            assert found["skills"][0]["name"] == "pdf-tables"
        handle.get("experiences", timeout=300)  # bounded, not a timing assertion
        assert set(handle.timings) >= {"open", "skills", "guidelines", "experiences"}
    finally:
        release.set()
        handle.close()


async def test_a_bank_that_cannot_open_is_reported_to_the_caller(tmp_path):
    from skillbank.errors import BusyError
    from skillbank.mcp_server import build_server
    from skillbank.mcp_server.loader import BankHandle

    def busy():
        raise BusyError("another skillbank process has the root open; use a Chroma server")

    server = build_server(BankHandle(opener=busy).start(), trusted=True)
    async with Client(server) as client:
        assert len((await client.list_tools()).tools) == len(TOOLS)
        message = await fails(client, "find_skills", {"task": "anything"})
        assert "another skillbank process" in message


async def test_edited_skill_files_show_up_without_restart(tmp_path):
    from skillbank.mcp_server import build_server
    from skillbank.mcp_server.loader import BankHandle

    bank = make_bank(tmp_path, sync=False)
    handle = BankHandle(bank, sync=True, watch=True).start()
    server = build_server(handle, trusted=True)
    try:
        async with Client(server) as client:
            assert "pdfplumber" in (await call(client, "load_skill", {"name": "pdf-tables"}))["body"]
            write_skill(tmp_path / "shared-skills", "pdf-tables", "Extract tables from PDFs",
                        body="# Steps\n\nUse camelot now.\n")
            deadline = time.monotonic() + 300  # generous: a loaded machine is slow
            version, written = 0, 0.0
            while time.monotonic() < deadline:
                if time.monotonic() - written > 5:  # again until seen: the watcher may have
                    version += 1                    # started after the previous write
                    write_skill(tmp_path / "shared-skills", "svg-icons",
                                f"Draw small SVG icons by hand (version {version})")
                    written = time.monotonic()
                found = await call(client, "find_skills", {"task": "draw an svg icon"})
                if found["skills"] and found["skills"][0]["name"] == "svg-icons":
                    break
                await anyio.sleep(0.2)
            else:
                pytest.fail("the new skill never showed up")
            assert "camelot" in (await call(client, "load_skill", {"name": "pdf-tables"}))["body"]
    finally:
        handle.close()


def test_building_a_server_leaves_logging_as_the_application_set_it(tmp_path):
    """With a root handler in place the SDK's logging setup (a rich Console, for a basicConfig
    that does nothing then) is skipped: rich is never imported; without one the SDK's own
    setup still runs."""
    import subprocess
    import sys

    code = """
import logging, sys
from skillbank.mcp_server.loader import BankHandle
from skillbank.mcp_server.server import build_server
configured = sys.argv[1] == "configured"
if configured:
    logging.getLogger().addHandler(logging.StreamHandler())
before = list(logging.getLogger().handlers)
build_server(BankHandle(opener=lambda: None), trusted=True)
build_server(BankHandle(opener=lambda: None), trusted=True)
from mcp.server.mcpserver import server as sdk
assert sdk.configure_logging.__name__ == "configure_logging"
if configured:
    assert "rich.console" not in sys.modules and logging.getLogger().handlers == before
else:
    assert "rich.console" in sys.modules and logging.getLogger().handlers
"""
    for case in ("configured", "bare"):
        done = subprocess.run([sys.executable, "-c", code, case], capture_output=True, text=True,
                              timeout=120, cwd=tmp_path)
        assert done.returncode == 0, (case, done.stderr[-2000:])
