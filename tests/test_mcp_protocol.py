"""The MCP server's protocol surface through real SDK clients (in process, both eras) and raw
stdio: honest annotations and titles, errors that say what to fix, resources/list pagination,
percent-encoded skill URIs, MIME types from content, flagged skill names, change notifications
and subscriptions, and an error reply for every malformed message."""

from __future__ import annotations

import json
import subprocess
import sys
import threading
import time
from pathlib import Path
from typing import Any

import anyio
import mcp_types as types
import pytest
from mcp import Client
from mcp.shared.exceptions import MCPError

from conftest import write_skill
from test_mcp_server import MODES, TOOLS, make_bank
from test_mcp_transports import base_env

READ_ONLY = {"find_skills", "load_skill", "read_skill_resource", "memory_context",
             "recall_experiences", "search_guidelines", "list_pending"}


@pytest.fixture
def bank(tmp_path):
    bank = make_bank(tmp_path)
    yield bank
    bank.close()


def server_over(bank: Any, *, trusted: bool = True) -> Any:
    from skillbank.mcp_server import build_server

    return build_server(bank, trusted=trusted)


# Annotations -------------------------------------------------------------------------------------
@pytest.mark.parametrize("trusted", [True, False])
async def test_every_tool_has_a_title_and_honest_hints(bank, trusted):
    async with Client(server_over(bank, trusted=trusted), mode="legacy") as client:
        tools = {t.name: t for t in (await client.list_tools()).tools}
    assert set(tools) == TOOLS
    for name, tool in tools.items():
        hints = tool.annotations
        assert tool.title and hints.title == tool.title, name
        assert hints.read_only_hint is (name in READ_ONLY), name
        assert hints.open_world_hint is False, name
        assert hints.idempotent_hint is not None and hints.destructive_hint is not None, name
    # rate_memory writes: it changes counters and (trusted) can retire a rule.
    assert tools["rate_memory"].annotations.read_only_hint is False
    assert tools["rate_memory"].annotations.destructive_hint is trusted
    assert tools["learn_from_critique"].annotations.destructive_hint is trusted
    save = tools["save_skill"].annotations
    assert save.destructive_hint is True and save.idempotent_hint is True  # it overwrites
    assert tools["forget"].annotations.destructive_hint is True
    record = tools["record_experience"].annotations
    assert record.destructive_hint is False and record.idempotent_hint is False


# Errors ------------------------------------------------------------------------------------------
@pytest.mark.parametrize("mode", MODES)
async def test_argument_errors_name_the_argument_and_the_valid_form(bank, mode):
    async with Client(server_over(bank), mode=mode) as client:
        for args, expected in [({"task": "x", "k": True}, "k must be a whole number (got true)"),
                               ({"task": "x", "k": 0}, "k must be at least 1"),
                               ({"k": 3}, "task is required")]:
            result = await client.call_tool("find_skills", args)
            text = result.content[0].text
            assert result.is_error and expected in text, text
            assert "find_skills(task, k=5, available_tools?)" in text
            assert "pydantic" not in text and "https://" not in text and "bank." not in text
        unknown = await client.call_tool("find_skill", {"task": "x"})
        assert unknown.is_error and "find_skills" in unknown.content[0].text


@pytest.mark.parametrize("mode", MODES)
async def test_whole_numbers_sent_as_floats_are_whole_numbers(bank, mode):
    """JSON Schema's integer counts 300.0 as a whole number, and some model clients send every
    number as a float: it was refused ("must be a whole number (got 300.0)")."""
    async with Client(server_over(bank), mode=mode) as client:
        block = await client.call_tool("memory_context", {"task": "x", "budget_tokens": 300.0})
        assert not block.is_error, block.content[0].text
        assert block.structured_content["budget_tokens"] == 300
        found = await client.call_tool("find_skills", {"task": "x", "k": 2.0})
        assert not found.is_error, found.content[0].text
        for bad, shown in [(2.5, "2.5"), ("3", "'3'"), (True, "true")]:
            result = await client.call_tool("find_skills", {"task": "x", "k": bad})
            assert result.is_error and f"k must be a whole number (got {shown})" in \
                result.content[0].text, result.content[0].text


@pytest.mark.parametrize("mode", MODES)
async def test_a_list_of_either_kind_is_refused_without_pydantic_names(bank, mode):
    """`steps` takes strings or step objects; a refused item named pydantic's branches
    ("steps.0.StepInput.action ...; steps.0.str ...")."""
    async with Client(server_over(bank), mode=mode) as client:
        result = await client.call_tool("record_experience", {
            "task": "Migrate the users table", "steps": [{"action": 5}, "ok", None]})
        text = result.content[0].text
        assert result.is_error, text
        assert "steps.0.action must be a string (got 5)" in text, text
        assert "steps.2 must be an object or a string (got None)" in text, text
        assert "StepInput" not in text and ".str " not in text, text


@pytest.mark.parametrize("mode", MODES)
async def test_unknown_tool_arguments_are_refused_by_name(bank, mode):
    """(#27) the SDK dropped arguments its schema does not name: a misspelt `kk` for `k` got an
    answer computed without it."""
    async with Client(server_over(bank), mode=mode) as client:
        result = await client.call_tool("find_skills", {"task": "x", "extra": 1, "kk": 2})
        text = result.content[0].text
        assert result.is_error, text
        assert "extra is not an argument of this tool (got 1)" in text
        assert "kk is not an argument of this tool" in text
        assert "find_skills(task, k=5, available_tools?)" in text
        fine = await client.call_tool("find_skills", {"task": "x", "k": 2})
        assert not fine.is_error


@pytest.mark.parametrize("mode", MODES)
async def test_initialize_declares_the_agent_skills_extension(bank, mode):
    """(#27) ext-skills "Capability Negotiation": `capabilities.extensions` names
    io.modelcontextprotocol/skills (an empty object: no directoryRead), on every era; the 2025
    handshake schema dropped it, so Inspector's `skills/list --verify` refused the server."""
    from skillbank.mcp_server import resources as res

    async with Client(server_over(bank), mode=mode) as client:
        caps = client.server_capabilities
        assert caps.extensions == {res.EXTENSION_ID: {}}, caps
        assert caps.resources is not None  # the extension requires the resources capability


@pytest.mark.parametrize("mode", MODES)
async def test_resource_reads_outside_a_skill_are_invalid_params(bank, mode):
    async with Client(server_over(bank), mode=mode) as client:
        for uri in ("skill://pdf-tables/../../etc/passwd", "skill://pdf-tables/%2e%2e/%2e%2e/x"):
            with pytest.raises(MCPError) as refused:
                await client.read_resource(uri)
            assert refused.value.error.code == types.INVALID_PARAMS
            assert "inside its folder" in refused.value.error.message


# Resources (#12) ---------------------------------------------------------------------------------
async def test_resources_list_pages_with_a_cursor(bank, monkeypatch, tmp_path):
    monkeypatch.setenv("SKILLBANK_MCP_PAGE_SIZE", "3")
    for number in range(5):
        write_skill(tmp_path / "shared-skills", f"extra-{number}", f"Extra skill number {number}")
    bank.skills.sync()
    async with Client(server_over(bank), mode="legacy") as client:
        seen: list[str] = []
        cursor = None
        pages = 0
        while True:
            page = await client.session.list_resources(
                params=types.PaginatedRequestParams(cursor=cursor) if cursor else None)
            assert len(page.resources) <= 3
            seen.extend(str(r.uri) for r in page.resources)
            pages += 1
            cursor = page.next_cursor
            if cursor is None:
                break
        with pytest.raises(MCPError) as bad:
            await client.session.list_resources(params=types.PaginatedRequestParams(cursor="zzz"))
        assert bad.value.error.code == types.INVALID_PARAMS
    assert len(seen) == len(set(seen)) and pages >= 4
    assert "skill://extra-4/SKILL.md" in seen and "skillbank://stats" in seen


async def test_a_skill_added_between_pages_shifts_nothing(bank, monkeypatch, tmp_path):
    """Cursors were plain offsets over a list computed again for each page: a skill added
    between pages listed one item twice (scale hunt, session 18). A listing's later pages come
    from the list its page one computed; one whose copy expired resumes after the last item
    listed, not at an offset."""
    from skillbank.mcp_server import server as server_module

    monkeypatch.setenv("SKILLBANK_MCP_PAGE_SIZE", "3")
    shared = tmp_path / "shared-skills"
    for number in range(6):
        write_skill(shared, f"extra-{number}", f"Extra skill number {number}")
    bank.skills.sync()
    for expired in (False, True):
        if expired:
            monkeypatch.setattr(server_module, "LISTING_SECONDS", 0.0)
        async with Client(server_over(bank), mode="legacy") as client:
            first = await client.session.list_resources()
            write_skill(shared, f"aaa-new-{expired}", "A skill added while a client lists")
            bank.skills.sync()  # sorts first: every later offset moves by one
            seen = [str(r.uri) for r in first.resources]
            cursor = first.next_cursor
            while cursor is not None:
                page = await client.session.list_resources(
                    params=types.PaginatedRequestParams(cursor=cursor))
                seen.extend(str(r.uri) for r in page.resources)
                cursor = page.next_cursor
            assert len(seen) == len(set(seen)), seen  # nothing twice
            assert "skill://extra-5/SKILL.md" in seen and "skillbank://stats" in seen


async def test_uris_are_percent_encoded_mime_types_follow_content_and_odd_names_are_flagged(
        bank, tmp_path):
    shared = tmp_path / "shared-skills"
    folder = write_skill(shared, "Data Cleaning", "Clean messy CSV data before analysis").parent
    (folder / "notes #1.md").write_text("# Notes\n\nSee the checklist.\n")
    (folder / "blob.md").write_bytes(b"\x00\x01\x02binary pretending to be markdown\xff")
    bank.skills.sync()
    async with Client(server_over(bank), mode="legacy") as client:
        listed = {str(r.uri): r for r in (await client.list_resources()).resources}
        main = listed["skill://Data%20Cleaning/SKILL.md"]
        assert main.meta and main.meta["skillbank/name_issues"]  # served, but flagged
        assert "skillbank/name_issues" not in (listed["skill://pdf-tables/SKILL.md"].meta or {})
        assert "skill://Data%20Cleaning/notes%20%231.md" in listed
        assert listed["skill://Data%20Cleaning/blob.md"].mime_type == "application/octet-stream"
        assert listed["skill://pdf-tables/assets/logo.png"].mime_type == "image/png"
        assert listed["skill://pdf-tables/references/guide.md"].mime_type == "text/markdown"
        notes = await client.read_resource("skill://Data%20Cleaning/notes%20%231.md")
        assert "checklist" in notes.contents[0].text
        blob = await client.read_resource("skill://Data%20Cleaning/blob.md")
        assert isinstance(blob.contents[0], types.BlobResourceContents)
        assert blob.contents[0].mime_type == "application/octet-stream"
        found = await client.call_tool("find_skills", {"task": "clean messy csv data"})
        assert found.structured_content["skills"][0]["uri"] == "skill://Data%20Cleaning/SKILL.md"


# Change notifications ----------------------------------------------------------------------------
def watched_server(tmp_path: Path, monkeypatch: Any) -> tuple[Any, Any]:
    from skillbank.mcp_server import build_server
    from skillbank.mcp_server.loader import BankHandle

    monkeypatch.setenv("SKILLBANK_MCP_POLL_SECONDS", "0.1")
    handle = BankHandle(make_bank(tmp_path, sync=False), sync=True, watch=True).start()
    return build_server(handle, trusted=True), handle


async def wait_for(condition: Any, what: str, timeout: float = 180) -> None:
    """Poll `condition` until true; the ceiling is generous (a loaded machine is slow)."""
    deadline = time.monotonic() + timeout
    while not condition():
        if time.monotonic() > deadline:
            pytest.fail(f"never saw {what}")
        await anyio.sleep(0.05)


async def test_handshake_clients_get_list_changes_and_updates_they_subscribed_to(tmp_path,
                                                                                monkeypatch):
    server, handle = watched_server(tmp_path, monkeypatch)
    seen: list[Any] = []

    async def on_message(message: Any) -> None:
        seen.append(getattr(message, "root", message))

    def methods() -> set[str]:
        return {getattr(m, "method", "") for m in seen}

    try:
        async with Client(server, mode="legacy", message_handler=on_message) as client:
            caps = client.server_capabilities
            assert caps.resources.list_changed is True and caps.resources.subscribe is True
            assert caps.tools.list_changed is False  # the tool list never changes
            await client.list_resources()
            await client.session.subscribe_resource("skill://pdf-tables/SKILL.md")
            await client.session.subscribe_resource("skillbank://guidelines/python")
            # The monitor's first look is the baseline: write only after it (an event, no sleep).
            await wait_for(lambda: server.monitor.view() is not None, "the monitor's first look")
            write_skill(tmp_path / "shared-skills", "svg-icons", "Draw small SVG icons by hand")
            await wait_for(lambda: "notifications/resources/list_changed" in methods(),
                           "resources/list_changed")
            write_skill(tmp_path / "shared-skills", "pdf-tables", "Extract tables from PDFs",
                        body="# Steps\n\nUse camelot now.\n")
            await wait_for(lambda: any(getattr(m, "method", "") == "notifications/resources/updated"
                                       and str(m.params.uri) == "skill://pdf-tables/SKILL.md"
                                       for m in seen), "the update of pdf-tables")
            # A topic appears (list change), then its playbook changes (an update).
            await client.call_tool("add_guideline", {"text": "Use pathlib for paths",
                                                     "topic": "python"})
            # Change the playbook only once the monitor has seen the topic (else both writes
            # may land between two polls: one list change, no update).
            await wait_for(lambda: "skillbank://guidelines/python" in (server.monitor.view() or {}),
                           "the python topic in the monitor's view")
            await client.call_tool("add_guideline", {"text": "Type-hint public functions",
                                                     "topic": "python"})
            await wait_for(lambda: any(getattr(m, "method", "") == "notifications/resources/updated"
                                       and str(m.params.uri) == "skillbank://guidelines/python"
                                       for m in seen), "the update of the python playbook")
            updated = {str(m.params.uri) for m in seen
                       if getattr(m, "method", "") == "notifications/resources/updated"}
            assert "skill://git-bisect/SKILL.md" not in updated  # only what was subscribed
    finally:
        server.monitor.stop()
        handle.close()


async def test_2026_clients_get_changes_on_a_listen_stream(tmp_path, monkeypatch):
    server, handle = watched_server(tmp_path, monkeypatch)
    events: list[Any] = []
    try:
        async with Client(server) as client:
            await client.list_resources()
            async with client.listen(resources_list_changed=True,
                                     resource_subscriptions=["skill://git-bisect/SKILL.md"]) as sub:
                async def collect() -> None:
                    async for event in sub:
                        events.append(event)

                async with anyio.create_task_group() as tg:
                    tg.start_soon(collect)
                    await wait_for(lambda: server.monitor.view() is not None,
                                   "the monitor's first look")
                    write_skill(tmp_path / "shared-skills", "git-bisect",
                                "Find the commit that introduced a bug, with git bisect run")
                    write_skill(tmp_path / "shared-skills", "svg-icons", "Draw SVG icons by hand")
                    await wait_for(lambda: {type(e).__name__ for e in events}
                                   >= {"ResourcesListChanged", "ResourceUpdated"},
                                   "a list change and an update on the listen stream")
                    tg.cancel_scope.cancel()
        assert any(getattr(e, "uri", None) == "skill://git-bisect/SKILL.md" for e in events)
    finally:
        server.monitor.stop()
        handle.close()


def notify_threads(exclude: set[Any]) -> list[threading.Thread]:
    return [t for t in threading.enumerate() if t.name == "skillbank-notify" and t not in exclude]


async def wait_until_gone(threads: list[threading.Thread], timeout: float = 30) -> None:
    deadline = time.monotonic() + timeout
    while any(t.is_alive() for t in threads) and time.monotonic() < deadline:
        await anyio.sleep(0.02)


@pytest.mark.parametrize("mode", MODES)
async def test_the_change_monitor_stops_when_the_last_session_ends(bank, mode):
    """The monitor's polling thread lives as long as some client is connected: once the last
    session ends it stops (it used to poll the bank every second for the rest of the process,
    one thread per server ever served), and the next session starts it again."""
    server = server_over(bank)
    before = set(threading.enumerate())
    async with Client(server, mode=mode) as client:
        await client.list_tools()
        started = notify_threads(before)
        assert len(started) == 1 and started[0].is_alive()
    await wait_until_gone(started)
    assert not any(t.is_alive() for t in started), "the change monitor outlived its session"

    async with Client(server, mode=mode) as first:
        await first.list_tools()
        async with Client(server, mode=mode) as second:
            await second.list_tools()
            running = [t for t in notify_threads(before) if t.is_alive()]
            assert len(running) == 1  # one monitor per server, whatever the number of clients
        await anyio.sleep(0.2)
        assert running[0].is_alive(), "a session that ended stopped the monitor of another"
        await first.list_resources()
    await wait_until_gone(running)
    assert not any(t.is_alive() for t in notify_threads(before))


# Malformed messages over raw stdio ----------------------------------------------------------------
def test_every_malformed_stdio_message_gets_an_error_reply(tmp_path):
    proc = subprocess.Popen(
        [sys.executable, "-m", "skillbank.mcp_server", "--root", str(tmp_path / "root"),
         "--no-bundled"],
        stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
        env=base_env(SKILLBANK_EMBEDDING="hash"))
    watchdog = threading.Timer(90, proc.kill)
    watchdog.start()
    init = {"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {
        "protocolVersion": "2025-11-25", "capabilities": {},
        "clientInfo": {"name": "raw", "version": "0"}}}
    lines = [
        json.dumps(init).encode(),
        b'{"jsonrpc": "2.0", "method": "notifications/initialized"}',
        b"{this is not json",                                                   # -> -32700
        b'{"jsonrpc": "2.0", "id": 3, "method": "tools/list", "params": {"x": "\\ud800"}}',
        json.dumps([{"jsonrpc": "2.0", "id": 4, "method": "tools/list"},
                    {"jsonrpc": "2.0", "id": 5, "method": "prompts/list"}]).encode(),
        b'{"jsonrpc": "2.0", "id": 6}',                                          # no method
        b'"just a string"',
        json.dumps({"jsonrpc": "2.0", "id": 7, "method": "resources/read",
                    "params": {"uri": "skill://x/../../etc/passwd"}}).encode(),
        json.dumps({"jsonrpc": "2.0", "id": 8, "method": "tools/call",
                    "params": {"name": "find_skills", "arguments": {"task": "x", "k": True}}}).encode(),
        json.dumps({"jsonrpc": "2.0", "id": 9, "method": "tools/list"}).encode(),
    ]
    replies: list[dict[str, Any]] = []
    try:
        assert proc.stdin is not None and proc.stdout is not None
        proc.stdin.write(b"\n".join(lines) + b"\n")
        proc.stdin.flush()
        while not {r.get("id") for r in replies} >= {1, 3, 4, 5, 6, 7, 8, 9}:
            line = proc.stdout.readline()
            if not line:
                break
            replies.append(json.loads(line))  # every reply is one JSON line
        proc.stdin.close()
        proc.stdin = None
        _, err = proc.communicate(timeout=30)
    finally:
        watchdog.cancel()
        if proc.poll() is None:
            proc.kill()
    err = err.decode(errors="replace") if isinstance(err, bytes) else str(err)
    by_id: dict[Any, list[dict[str, Any]]] = {}
    for reply in replies:
        by_id.setdefault(reply.get("id"), []).append(reply)
    nulls = [r["error"]["code"] for r in by_id.get(None, [])]
    assert sorted(nulls) == [-32700, -32600], (replies, err[-2000:])  # the junk line, the string
    assert by_id[3][0]["error"]["code"] == -32700 and "surrogate" in by_id[3][0]["error"]["message"]
    assert by_id[4][0]["error"]["code"] == -32600 and by_id[5][0]["error"]["code"] == -32600
    assert "batch" in by_id[4][0]["error"]["message"]
    assert by_id[6][0]["error"]["code"] == -32600 and "method" in by_id[6][0]["error"]["message"]
    assert by_id[7][0]["error"]["code"] == -32602
    assert by_id[8][0]["result"]["isError"] is True
    assert "k must be a whole number" in by_id[8][0]["result"]["content"][0]["text"]
    assert len(by_id[9][0]["result"]["tools"]) == len(TOOLS)  # the connection carried on
    assert len(by_id[1]) == 1  # answered early, and the SDK's own reply was not sent again
    for reply in replies:
        if "error" in reply:
            assert "pydantic" not in reply["error"]["message"]


# Early initialize ---------------------------------------------------------------------------------
async def test_the_early_initialize_reply_is_the_one_the_sdk_gives(bank):
    from mcp_types.version import HANDSHAKE_PROTOCOL_VERSIONS

    from skillbank.mcp_server import early

    assert early.HANDSHAKE_VERSIONS == tuple(HANDSHAKE_PROTOCOL_VERSIONS)
    async with Client(server_over(bank), mode="legacy") as client:
        sdk = {"capabilities": client.server_capabilities.model_dump(by_alias=True, exclude_none=True),
               "instructions": client.instructions,
               "serverInfo": client.server_info.model_dump(by_alias=True, exclude_none=True),
               "protocolVersion": client.protocol_version}
    request = {"jsonrpc": "2.0", "id": 7, "method": "initialize", "params": {
        "protocolVersion": sdk["protocolVersion"], "capabilities": {},
        "clientInfo": {"name": "t", "version": "1"}}}
    assert early.initialize_reply(request)["result"] == sdk
    for version in HANDSHAKE_PROTOCOL_VERSIONS:
        request["params"]["protocolVersion"] = version
        assert early.initialize_reply(request)["result"]["protocolVersion"] == version
    request["params"]["protocolVersion"] = "1999-01-01"  # unknown: the latest handshake version
    assert early.initialize_reply(request)["result"]["protocolVersion"] == HANDSHAKE_PROTOCOL_VERSIONS[-1]
    for broken in ({**request, "params": {"capabilities": {}}}, {**request, "id": None},
                   {**request, "method": "tools/list"}):
        assert early.initialize_reply(broken) is None  # left to the SDK, which says what is wrong


#: Put on the server's PYTHONPATH: the SDK's server package does not import until the flag file
#: exists, so whatever is answered before that was answered without the SDK.
HOLD_SDK = """
import os, sys, time

class _HoldSdk:
    def find_spec(self, name, path=None, target=None):
        if name == "mcp.server.mcpserver":
            sys.meta_path.remove(self)
            open(os.environ["HOLD_SDK_FLAG"] + ".held", "w").close()
            while not os.path.exists(os.environ["HOLD_SDK_FLAG"]):
                time.sleep(0.02)
        return None

sys.meta_path.insert(0, _HoldSdk())
"""


def _raw_server(tmp_path: Path, **env: str) -> subprocess.Popen:
    return subprocess.Popen(
        [sys.executable, "-m", "skillbank.mcp_server", "--root", str(tmp_path / "root"),
         "--no-bundled"],
        stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL,
        env=base_env(SKILLBANK_EMBEDDING="hash", **env))


def _send(proc: subprocess.Popen, *messages: dict[str, Any]) -> None:
    assert proc.stdin is not None
    proc.stdin.write(b"".join(json.dumps(m).encode() + b"\n" for m in messages))
    proc.stdin.flush()


def _reply(proc: subprocess.Popen) -> dict[str, Any]:
    assert proc.stdout is not None
    line = proc.stdout.readline()
    assert line, "the server closed the wire"
    return json.loads(line)


ENVELOPE = {"io.modelcontextprotocol/protocolVersion": "2026-07-28",
            "io.modelcontextprotocol/clientCapabilities": {},
            "io.modelcontextprotocol/clientInfo": {"name": "raw", "version": "0"}}
DISCOVER = {"jsonrpc": "2.0", "id": 1, "method": "server/discover", "params": {"_meta": ENVELOPE}}
INITIALIZE = {"jsonrpc": "2.0", "id": 2, "method": "initialize", "params": {
    "protocolVersion": "2025-11-25", "capabilities": {},
    "clientInfo": {"name": "raw", "version": "0"}}}


def _sdk_replies(tmp_path: Path, *requests: dict[str, Any], early: str = "0"
                 ) -> list[dict[str, Any]]:
    """What the server replies to each request, in order: by default the SDK alone (nothing
    answered early)."""
    proc = _raw_server(tmp_path, SKILLBANK_MCP_EARLY_INIT=early)
    watchdog = threading.Timer(90, proc.kill)
    watchdog.start()
    try:
        _send(proc, *requests)
        return [_reply(proc) for _ in requests]
    finally:
        watchdog.cancel()
        proc.kill()
        proc.wait()


def _held_server(tmp_path: Path) -> tuple[subprocess.Popen, Path]:
    site, flag = tmp_path / "site", tmp_path / "sdk-may-load"
    site.mkdir(parents=True)
    (site / "sitecustomize.py").write_text(HOLD_SDK)
    return _raw_server(tmp_path, PYTHONPATH=str(site), HOLD_SDK_FLAG=str(flag)), flag


@pytest.mark.slow  # stdio subprocesses
def test_a_2026_client_s_discover_probe_is_answered_before_the_sdk_loads(tmp_path):
    """mcp's own Client (mode="auto", its default) opens with `server/discover`, not
    `initialize`: the probe is answered while the SDK's server package cannot even import, with
    the SDK's own result, and the client's next (enveloped) request opens the SDK's 2026-era
    connection as if the SDK had answered the probe; an unsupported version is left to the SDK."""
    from mcp_types.version import MODERN_PROTOCOL_VERSIONS

    from skillbank.mcp_server import early

    assert early.MODERN_VERSIONS == tuple(MODERN_PROTOCOL_VERSIONS)
    unsupported = {**DISCOVER, "id": 5, "params": {"_meta": {
        **ENVELOPE, "io.modelcontextprotocol/protocolVersion": "2099-01-01"}}}
    assert early.discover_reply(unsupported) is None
    assert early.discover_reply({**DISCOVER, "params": {"_meta": {
        k: v for k, v in ENVELOPE.items() if "Capabilities" not in k}}}) is None
    (sdk_result,) = _sdk_replies(tmp_path / "sdk", DISCOVER)
    assert sdk_result == early.discover_reply(DISCOVER)

    proc, flag = _held_server(tmp_path / "held")
    watchdog = threading.Timer(90, proc.kill)
    watchdog.start()
    try:
        _send(proc, DISCOVER, INITIALIZE)
        assert _reply(proc) == sdk_result
        flag.touch()  # the SDK loads now
        # The probe went on to the SDK too: the connection is a 2026 one, as without the early
        # reply, so the SDK refuses a handshake after it (and its reply to the probe is dropped).
        refused = _reply(proc)
        assert refused["id"] == 2 and refused["error"]["code"] == -32022, refused
        _send(proc, {"jsonrpc": "2.0", "id": 3, "method": "tools/list",
                     "params": {"_meta": ENVELOPE}})
        listed = _reply(proc)
        assert listed["id"] == 3 and len(listed["result"]["tools"]) == len(TOOLS), listed
    finally:
        watchdog.cancel()
        proc.kill()
        proc.wait()
    assert (tmp_path / "held" / "sdk-may-load.held").exists()  # the SDK really was held


@pytest.mark.slow  # stdio subprocesses
@pytest.mark.parametrize("probe", [
    {**DISCOVER, "params": {"_meta": {**ENVELOPE, "io.modelcontextprotocol/clientCapabilities": "x"}}},
    {**DISCOVER, "params": {"_meta": {**ENVELOPE, "io.modelcontextprotocol/clientInfo": {"name": "x"}}}},
    {**DISCOVER, "params": {"_meta": {**ENVELOPE, "progressToken": 1.5}}},
    {**DISCOVER, "id": "\ud800"},
], ids=["capabilities", "client-info", "progress-token", "surrogate-id"])
def test_a_probe_the_sdk_refuses_gets_the_sdks_refusal_and_the_wire_carries_on(tmp_path, probe):
    ping = {"jsonrpc": "2.0", "id": 9, "method": "ping"}
    early_on = _sdk_replies(tmp_path / "early", probe, ping, early="1")
    assert early_on == _sdk_replies(tmp_path / "sdk", probe, ping)
    assert "error" in early_on[0] and early_on[1]["id"] == 9, early_on


@pytest.mark.slow  # a stdio subprocess
def test_initialize_is_answered_before_the_sdk_loads(tmp_path):
    from skillbank.mcp_server import early

    proc, flag = _held_server(tmp_path)
    watchdog = threading.Timer(90, proc.kill)
    watchdog.start()
    try:
        _send(proc, INITIALIZE)
        assert _reply(proc) == early.initialize_reply(INITIALIZE)
        flag.touch()
        _send(proc, {"jsonrpc": "2.0", "method": "notifications/initialized"},
              {"jsonrpc": "2.0", "id": 3, "method": "tools/list"})
        listed = _reply(proc)  # the SDK's own reply to `initialize` was not sent again
        assert listed["id"] == 3 and len(listed["result"]["tools"]) == len(TOOLS), listed
    finally:
        watchdog.cancel()
        proc.kill()
        proc.wait()
    assert (tmp_path / "sdk-may-load.held").exists()  # the SDK really was held


# Keyword-only mode -------------------------------------------------------------------------------
@pytest.mark.slow  # a stdio subprocess
async def test_without_a_model_tools_answer_by_keyword_and_say_so(tmp_path):
    """Offline, no model anywhere: the server starts, searches answer from keywords, results say
    `search_mode: "keyword"`, and stderr warns once."""
    from mcp import StdioServerParameters
    from mcp.client.stdio import stdio_client

    skills = tmp_path / "skills"
    write_skill(skills, "pdf-merge", "Merge several PDF files into one document")
    write_skill(skills, "docker-debug", "Debug a docker container that exits at start")
    # The environment names a folder without a model (an explicit --model-dir like that is
    # refused at start since #27); no model cache either.
    env = base_env(SKILLBANK_MODEL_DIR=str(tmp_path / "no-model-here"))
    env["HOME"] = str(tmp_path / "home")
    errlog = (tmp_path / "stderr.txt").open("w")
    params = StdioServerParameters(
        command=sys.executable,
        args=["-m", "skillbank.mcp_server", "--root", str(tmp_path / "root"), "--no-bundled",
              "--skills-dir", str(skills)],
        env=env, cwd=str(tmp_path))
    async with Client(stdio_client(params, errlog=errlog), read_timeout_seconds=120) as client:
        found = (await client.call_tool("find_skills", {"task": "merge pdf files"})).structured_content
        assert found["skills"][0]["name"] == "pdf-merge"
        assert found["search_mode"] == "keyword" and "Keyword search only" in found["hint"]
        recalled = await client.call_tool("recall_experiences", {"task": "merge pdf files"})
        assert not recalled.is_error and recalled.structured_content["search_mode"] == "keyword"
        await client.call_tool("find_skills", {"task": "debug a docker container"})
    errlog.close()
    log = (tmp_path / "stderr.txt").read_text()
    assert log.count("keyword only") == 1, log[-3000:]


@pytest.mark.parametrize("mode", MODES)
async def test_errors_name_tools_not_python_calls(bank, mode):
    import re

    python_call = re.compile(r"\b(bank\.[a-z_.]+|approve|reject|retire|sync|list|search)\([^()]*\)")
    async with Client(server_over(bank), mode=mode) as client:
        texts = []
        for name, args in [("rate_memory", {"id": "gl-doesnotexist", "helpful": True}),
                           ("forget", {"id": "gl-doesnotexist"}),
                           ("review_memory", {"id": "gl-doesnotexist", "decision": "approve"}),
                           ("rate_memory", {"id": "zz-1", "helpful": True}),
                           ("load_skill", {"name": "nope"})]:
            result = await client.call_tool(name, args)
            assert result.is_error, (name, result.structured_content)
            texts.append(result.content[0].text)
    for text in texts:
        assert not python_call.search(text), text
    assert any("search_guidelines" in t for t in texts[:3]), texts


def test_an_argument_named_like_a_branch_keeps_its_name():
    """Review: a misspelt extra argument "Task" was taken for a union branch and dropped."""
    from skillbank.mcp_server.messages import describe_errors

    assert describe_errors([{"type": "extra_forbidden", "loc": ("Task",), "input": "x"}]) == [
        "Task is not an argument of this tool (got 'x')"]
