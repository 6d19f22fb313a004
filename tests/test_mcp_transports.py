"""The MCP server as clients start it: stdio subprocesses (including the exact commands in
docs/mcp.md), streamable HTTP on a loopback port with its guard, and the MCP Inspector CLI as an
independent client."""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import sys
import threading
import time
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any, AsyncIterator

import httpx
import pytest
from mcp import Client, StdioServerParameters

from conftest import REPO, free_port, stop_process, write_skill

MODEL_DIR = REPO.parent / "shared" / "models" / "all-MiniLM-L6-v2"
BIN = Path(sys.executable).parent
TOOLS = {"find_skills", "load_skill", "read_skill_resource", "save_skill", "memory_context",
         "record_experience", "recall_experiences", "learn_from_critique", "add_guideline",
         "search_guidelines", "rate_memory", "forget", "list_pending", "review_memory",
         "propose_skills"}
PROMPTS = {"start_task", "reflect", "review_pending", "clean_up"}


def base_env(**extra: str) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items()
           if not k.startswith("SKILLBANK_") or k == "SKILLBANK_MODEL_DIR"}
    env["ANONYMIZED_TELEMETRY"] = "False"
    env.update(extra)
    return env


@pytest.fixture(scope="module")
def model_root(tmp_path_factory) -> Path:
    """One memory root for the real-model subprocesses: they run one after another, and only the
    first pays for embedding the bundled skills."""
    return tmp_path_factory.mktemp("model-root") / "root"


def model_env(root: Path) -> dict[str, str]:
    if not (MODEL_DIR / "onnx" / "model.onnx").is_file():
        pytest.skip("the offline MiniLM model is not at ../shared/models")
    return base_env(SKILLBANK_ROOT=str(root), SKILLBANK_MODEL_DIR=str(MODEL_DIR))


def shared_skills(tmp: Path) -> Path:
    folder = tmp / "team-skills"
    write_skill(folder, "pdf-tables", "Extract tables and text from PDF files with pdfplumber",
                body="# Steps\n\n1. Open with pdfplumber.\n2. See references/guide.md.\n")
    (folder / "pdf-tables" / "references").mkdir(exist_ok=True)
    (folder / "pdf-tables" / "references" / "guide.md").write_text("# Guide\n\nextract_tables()\n")
    return folder


# stdio --------------------------------------------------------------------------------------------
@pytest.mark.slow
async def test_stdio_subprocess_with_the_real_model(tmp_path, model_root):
    env = model_env(model_root)
    params = StdioServerParameters(
        command=sys.executable,
        args=["-m", "skillbank.mcp_server", "--skills-dir", str(shared_skills(tmp_path))],
        env=env, cwd=str(tmp_path))
    started = time.perf_counter()
    async with Client(params, read_timeout_seconds=120) as client:
        initialized = time.perf_counter() - started
        assert {t.name for t in (await client.list_tools()).tools} == TOOLS
        result = await client.call_tool("find_skills", {"task": "get the tables out of a PDF"})
        first = time.perf_counter() - started
        assert not result.is_error, result.content[0].text
        assert result.structured_content["skills"][0]["name"] == "pdf-tables"
        recorded = await client.call_tool("record_experience", {
            "task": "Extract the tables of an invoice PDF", "outcome": "success",
            "steps": ["pdfplumber open", "page.extract_tables()"]})
        assert not recorded.is_error, recorded.content[0].text
        ctx = await client.call_tool("memory_context", {"task": "extract tables from a PDF invoice"})
        assert recorded.structured_content["id"] in ctx.structured_content["ids"]
        uris = {str(r.uri) for r in (await client.list_resources()).resources}
        assert "skill://pdf-tables/references/guide.md" in uris
    print(f"\nstdio cold start: initialize {initialized:.2f} s, first find_skills {first:.2f} s")


def test_stdout_carries_only_protocol_messages():
    """Anything printed after startup (Python or C level) lands on stderr, not on the wire."""
    code = ("import os, sys\n"
            "from skillbank.mcp_server.runner import _claim_stdio\n"
            "stdin, stdout = _claim_stdio()\n"
            "print('stray print'); sys.stdout.flush(); os.write(1, b'stray C write\\n')\n"
            "stdout.write('{\"jsonrpc\": \"2.0\"}\\n'); stdout.flush()\n"
            "print('stdin now reads:', repr(sys.stdin.read()), file=sys.stderr)\n")
    done = subprocess.run([sys.executable, "-c", code], input="secret\n", capture_output=True,
                          text=True, timeout=60, env=base_env())
    assert done.returncode == 0, done.stderr
    assert done.stdout == '{"jsonrpc": "2.0"}\n'
    assert "stray print" in done.stderr and "stray C write" in done.stderr
    assert "stdin now reads: ''" in done.stderr


def test_stdio_server_answers_initialize_on_a_clean_stdout(tmp_path):
    """Raw JSON-RPC over the pipe: every stdout line is a protocol message."""
    proc = subprocess.Popen(
        [sys.executable, "-m", "skillbank.mcp_server", "--root", str(tmp_path / "root"),
         "--no-bundled", "--log-level", "DEBUG"],
        stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
        env=base_env(SKILLBANK_EMBEDDING="hash"))
    watchdog = threading.Timer(90, proc.kill)
    watchdog.start()
    replies: list[dict[str, Any]] = []
    try:
        messages = [
            {"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {
                "protocolVersion": "2025-11-25", "capabilities": {},
                "clientInfo": {"name": "raw", "version": "0"}}},
            {"jsonrpc": "2.0", "method": "notifications/initialized"},
            {"jsonrpc": "2.0", "id": 2, "method": "tools/call", "params": {
                "name": "find_skills", "arguments": {"task": "anything"}}},
        ]
        assert proc.stdin is not None and proc.stdout is not None
        proc.stdin.write("".join(json.dumps(m) + "\n" for m in messages))
        proc.stdin.flush()
        while not any(r.get("id") == 2 for r in replies):
            line = proc.stdout.readline()
            if not line:
                break
            replies.append(json.loads(line))  # every stdout line parses as JSON-RPC
        proc.stdin.close()
        proc.stdin = None  # communicate() must not flush the closed pipe
        rest, err = proc.communicate(timeout=30)
        replies.extend(json.loads(line) for line in rest.splitlines() if line.strip())
    finally:
        watchdog.cancel()
        if proc.poll() is None:
            proc.kill()
    assert {r.get("id") for r in replies} >= {1, 2}, (replies, err[-2000:])
    init = next(r for r in replies if r.get("id") == 1)
    assert init["result"]["serverInfo"]["name"] == "skillbank"
    call = next(r for r in replies if r.get("id") == 2)
    assert call["result"]["structuredContent"]["skills"] == []
    assert "DEBUG" in err  # logs went to stderr


def docs_servers() -> list[tuple[str, dict[str, Any]]]:
    text = (REPO / "docs" / "mcp.md").read_text()
    blocks = re.findall(r"```json\n(.*?)```", text, flags=re.S)
    assert len(blocks) >= 4
    found = []
    for block in blocks:
        config = json.loads(block)
        for key in ("mcpServers", "servers"):
            for name, server in config.get(key, {}).items():
                found.append((name, server))
    return found


def resolve_command(command: str) -> str:
    if command in ("python", "python3"):
        return sys.executable  # the interpreter skillbank is installed in
    local = BIN / command
    return str(local) if local.exists() else (shutil.which(command) or command)


@pytest.mark.slow
async def test_every_config_in_the_docs_starts_a_working_server(tmp_path, model_root):
    """Each distinct command in docs/mcp.md, started as written (with a temporary root), lists
    the tools; the first also answers find_skills with the real model. They run side by side."""
    import anyio

    servers = docs_servers()
    assert len(servers) >= 4
    commands: list[tuple[tuple[str, ...], dict[str, str]]] = []
    for name, server in servers:
        assert name == "skillbank" and server.get("type", "stdio") == "stdio"
        command = (server["command"], *server.get("args", []))
        if command not in [c for c, _ in commands]:
            commands.append((command, dict(server.get("env", {}))))
    assert ("skillbank", "serve") in [c for c, _ in commands]
    listed: dict[tuple[str, ...], set[str]] = {}

    async def check(index: int, command: tuple[str, ...], extra_env: dict[str, str]) -> None:
        root = model_root if index == 0 else tmp_path / f"root{index}"
        cwd = tmp_path / f"cwd{index}"
        (cwd / ".cursor" / "skills").mkdir(parents=True)  # the Cursor config names this folder
        env = {**model_env(root), **extra_env, "SKILLBANK_ROOT": str(root)}
        params = StdioServerParameters(command=resolve_command(command[0]), args=list(command[1:]),
                                       env=env, cwd=str(cwd))
        async with Client(params, read_timeout_seconds=120) as client:
            listed[command] = {t.name for t in (await client.list_tools()).tools}
            if index == 0:
                result = await client.call_tool("find_skills", {"task": "write a new SKILL.md skill"})
                assert not result.is_error, (command, result.content[0].text)
                assert result.structured_content["skills"][0]["name"] == "write-a-skill"

    async with anyio.create_task_group() as group:
        for index, (command, extra_env) in enumerate(commands):
            group.start_soon(check, index, command, extra_env)
    assert listed == {command: TOOLS for command, _ in commands}


# HTTP ---------------------------------------------------------------------------------------------
TOKEN = "test-token-0123456789"


#: The skill folder each HTTP server fixture serves, by its URL: an HTTP client is shown paths
#: relative to the root only (not the host's layout), so a test cannot read it off the stats.
SERVED_SKILLS: dict[str, Path] = {}


@pytest.fixture(scope="module")
def http_server(tmp_path_factory):
    tmp = tmp_path_factory.mktemp("http")
    port = free_port()
    log = (tmp / "server.log").open("w")
    team = shared_skills(tmp)
    proc = subprocess.Popen(
        [sys.executable, "-m", "skillbank.mcp_server", "--transport", "http", "--port", str(port),
         "--root", str(tmp / "root"), "--skills-dir", str(team), "--no-bundled",
         "--max-body-bytes", str(64 * 1024)],
        stdout=log, stderr=subprocess.STDOUT, env=base_env(SKILLBANK_EMBEDDING="hash",
                                                          SKILLBANK_TOKEN=TOKEN))
    url = f"http://127.0.0.1:{port}"
    deadline = time.time() + 300  # generous: start-up under load
    while time.time() < deadline:
        if proc.poll() is not None:
            pytest.fail("server exited: " + (tmp / "server.log").read_text()[-3000:])
        try:
            httpx.get(url + "/mcp", timeout=1)
            break
        except httpx.HTTPError:
            time.sleep(0.1)
    else:
        proc.kill()
        pytest.fail("HTTP server did not start within 60 s")
    SERVED_SKILLS[url] = team
    yield url
    stop_process(proc)
    log.close()


@asynccontextmanager
async def http_client(url: str, token: str = TOKEN, mode: str = "auto") -> AsyncIterator[Client]:
    import httpx2
    from mcp.client.streamable_http import streamable_http_client

    async with httpx2.AsyncClient(headers={"Authorization": f"Bearer {token}"},
                                  timeout=60) as http:
        async with Client(streamable_http_client(url + "/mcp", http_client=http), mode=mode) as client:
            yield client


@pytest.mark.parametrize("mode", ["auto", "legacy"])
async def test_http_lists_and_calls_every_tool(http_server, mode):
    async with http_client(http_server, mode=mode) as client:
        assert {t.name for t in (await client.list_tools()).tools} == TOOLS
        assert {p.name for p in (await client.list_prompts()).prompts} == PROMPTS

        async def ok(name: str, args: dict[str, Any]) -> dict[str, Any]:
            result = await client.call_tool(name, args)
            assert not result.is_error, (name, result.content[0].text)
            return result.structured_content

        found = await ok("find_skills", {"task": "extract tables from a PDF"})
        assert found["skills"][0]["name"] == "pdf-tables"
        assert "pdfplumber" in (await ok("load_skill", {"name": "pdf-tables"}))["body"]
        assert "extract_tables" in (await ok("read_skill_resource", {
            "name": "pdf-tables", "path": "references/guide.md"}))["text"]
        refused = await client.call_tool("save_skill", {
            "name": f"http-skill-{mode}", "description": "Made over HTTP", "body": "# Steps\n"})
        assert refused.is_error and "--trust" in refused.content[0].text  # untrusted: no skills
        recorded = await ok("record_experience", {"task": "Parse a CSV over HTTP",
                                                  "outcome": "partial", "feedback": "encoding was wrong"})
        eid = recorded["id"]
        # Untrusted: stored as pending, not recalled until a person approves it.
        assert recorded["status"] == "pending" and "approve" in recorded["note"]
        assert eid not in {e["id"] for e in (await ok("recall_experiences", {"task": "parse csv"}))["experiences"]}
        assert eid not in (await ok("memory_context", {"task": "parse a csv file"}))["ids"]
        rule = "Always state the file encoding." if mode == "auto" else "Always check the delimiter before parsing CSV files."
        learned = await ok("learn_from_critique", {"critique": rule, "task": "Parse CSV"})
        assert learned["pending_review"] is True  # HTTP clients are untrusted without --trust
        text = "Check the CSV header row first" if mode == "auto" else "Log every retry with its cause"
        added = await ok("add_guideline", {"text": text})
        assert added["action"] == "pending"
        assert (await ok("search_guidelines", {"task": "parse csv"}))["guidelines"] == []
        queue = await ok("list_pending", {})  # shown only to whoever may decide on it
        assert queue["items"] == [] and "trusted session" in queue["note"]
        bad = await client.call_tool("find_skills", {"task": "x", "k": 500})
        assert bad.is_error and "k" in bad.content[0].text
        missing = await client.call_tool("load_skill", {"name": "nope"})
        assert missing.is_error and "find_skills" in missing.content[0].text
        uris = {str(r.uri) for r in (await client.list_resources()).resources}
        assert {"skill://pdf-tables/SKILL.md", "skill://pdf-tables/references/guide.md",
                "skillbank://stats"} <= uris
        text = (await client.read_resource("skill://pdf-tables/references/guide.md")).contents[0].text
        assert "extract_tables" in text
        stats = json.loads((await client.read_resource("skillbank://stats")).contents[0].text)
        assert stats["server"]["caller_trusted"] is False
        prompt = await client.get_prompt("start_task", {"task": "parse a csv file"})
        assert "record_experience" in prompt.messages[0].content.text


@pytest.mark.parametrize("mode,expected", [("auto", "client_model"), ("legacy", "rules")])
async def test_http_sampling(http_server, mode, expected):
    """2026-07-28 sessions sample the client's model through the input-required flow; older
    sessions cannot be sent requests mid-call on JSON responses and use the rule distiller."""
    import httpx2
    import mcp_types as types
    from mcp.client.streamable_http import streamable_http_client

    reply = json.dumps([{"text": "Quote every identifier in generated SQL.", "topic": "sql",
                         "when_to_use": "When generating SQL", "actionable": True}])
    asked: list[str] = []

    async def sample(context: Any, params: Any) -> Any:
        asked.append(params.messages[0].content.text)
        return types.CreateMessageResult(role="assistant", model="fake",
                                         content=types.TextContent(type="text", text=reply))

    async with httpx2.AsyncClient(headers={"Authorization": f"Bearer {TOKEN}"}, timeout=60) as http:
        async with Client(streamable_http_client(http_server + "/mcp", http_client=http), mode=mode,
                          sampling_callback=sample) as client:
            result = await client.call_tool("learn_from_critique", {
                "critique": f"The columns were not quoted ({mode}).", "task": "Generate SQL"})
    assert not result.is_error, result.content[0].text
    assert result.structured_content["distilled_by"] == expected
    assert bool(asked) == (expected == "client_model")


def mcp_post(url: str, **kw: Any) -> httpx.Response:
    headers = {"Content-Type": "application/json", "Accept": "application/json, text/event-stream",
               **kw.pop("headers", {})}
    body = kw.pop("content", json.dumps({"jsonrpc": "2.0", "id": 1, "method": "ping"}))
    return httpx.post(url + "/mcp", headers=headers, content=body, timeout=120, **kw)


def test_http_requires_the_bearer_token_on_every_path(http_server):
    assert mcp_post(http_server).status_code == 401
    wrong = mcp_post(http_server, headers={"Authorization": "Bearer nope"})
    assert wrong.status_code == 401 and wrong.headers["www-authenticate"].startswith("Bearer")
    assert mcp_post(http_server, headers={"Authorization": TOKEN}).status_code == 401
    for path in ("/", "/mcp", "/health", "/anything/else"):
        assert httpx.get(http_server + path, timeout=120).status_code == 401
    good = mcp_post(http_server, headers={"Authorization": f"Bearer {TOKEN}"})
    assert good.status_code not in (401, 403, 413)


def test_http_refuses_foreign_origins(http_server):
    auth = {"Authorization": f"Bearer {TOKEN}"}
    for origin in ("http://evil.example", "https://localhost.evil.example", "null"):
        refused = mcp_post(http_server, headers={**auth, "Origin": origin})
        assert refused.status_code == 403, origin
    for origin in ("http://localhost:6274", "http://127.0.0.1:3000"):
        assert mcp_post(http_server, headers={**auth, "Origin": origin}).status_code != 403


def test_http_on_loopback_admits_every_local_origin_and_host_and_refuses_others(http_server):
    """One rule on every bind: on loopback the MCP SDK's own guard answered `http://localhost`,
    `https://localhost:5173` and a Host without a port with a plain-text 403/421, while
    `origin_allowed` (other binds) and docs/mcp.md let them in (hunt-mcphttp #3, session 36).
    A Host that is not this machine is still refused (DNS rebinding), with a JSON-RPC error."""
    auth = {"Authorization": f"Bearer {TOKEN}"}
    port = http_server.rsplit(":", 1)[1]
    hello = json.dumps({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {
        "protocolVersion": "2025-06-18", "capabilities": {},
        "clientInfo": {"name": "raw", "version": "1"}}})
    for origin in ("http://localhost", "http://127.0.0.1", "http://[::1]",
                   "https://localhost:5173", "https://127.0.0.1:8443", "http://localhost:5173"):
        answer = mcp_post(http_server, headers={**auth, "Origin": origin}, content=hello)
        assert answer.status_code == 200, (origin, answer.text)
    for host in ("localhost", "127.0.0.1", "[::1]", f"localhost:{port}", f"127.0.0.1:{port}"):
        answer = mcp_post(http_server, headers={**auth, "Host": host}, content=hello)
        assert answer.status_code == 200, (host, answer.text)
    for host in ("mcp.example.internal", f"evil.example:{port}", "localhost.evil.example"):
        refused = mcp_post(http_server, headers={**auth, "Host": host})
        assert refused.status_code == 421, host
        error = refused.json()["error"]
        assert refused.json()["jsonrpc"] == "2.0" and "answers only to this machine" in \
            error["message"], refused.text
    refused = mcp_post(http_server, headers={**auth, "Origin": "https://evil.example"})
    assert refused.status_code == 403 and "Origin" in refused.json()["error"]["message"]


def test_http_refuses_oversized_bodies(http_server):
    auth = {"Authorization": f"Bearer {TOKEN}"}
    big = json.dumps({"jsonrpc": "2.0", "id": 1, "method": "tools/call", "params": {
        "name": "learn_from_critique", "arguments": {"critique": "x" * 200_000}}})
    assert mcp_post(http_server, headers=auth, content=big).status_code == 413

    def chunks():
        for _ in range(100):
            yield b"x" * 4096

    streamed = httpx.post(http_server + "/mcp", content=chunks(), timeout=120,
                          headers={**auth, "Content-Type": "application/json"})
    assert streamed.status_code == 413


def test_binding_beyond_loopback_without_a_token_refuses_to_start(tmp_path):
    done = subprocess.run(
        [sys.executable, "-m", "skillbank.mcp_server", "--transport", "http", "--host", "0.0.0.0",
         "--root", str(tmp_path / "root")], capture_output=True, text=True, timeout=60,
        env=base_env())
    assert done.returncode == 2
    assert "token" in done.stderr and "0.0.0.0" in done.stderr and done.stdout == ""
    assert not (tmp_path / "root").exists()  # refused before touching anything


# An independent client ----------------------------------------------------------------------------
@pytest.mark.slow
def test_mcp_inspector_cli_lists_verifies_and_calls(tmp_path):
    """The MCP Inspector CLI (2.x, from .ci/node): tools/list --strict (tool-schema portability),
    skills/list --verify (SEP-2640 conformance and digests; refused before #27 because
    `initialize` did not declare the extension) and a tool call, all exit 0."""
    from node_tools import tool

    inspector = tool("mcp-inspector")
    server = [sys.executable, "-m", "skillbank.mcp_server", "--root", str(tmp_path / "root"),
              "--skills-dir", str(shared_skills(tmp_path)), "--no-bundled", "--no-watch"]
    env = base_env(SKILLBANK_EMBEDDING="hash")

    def inspect(*method: str) -> str:
        done = subprocess.run([inspector, "--cli", *server, "--method", *method],
                              capture_output=True, text=True, timeout=180, env=env, cwd=tmp_path)
        assert done.returncode == 0, (method, done.stdout[-2000:], done.stderr[-3000:])
        return done.stdout

    listed = json.loads(inspect("tools/list", "--strict"))
    assert {t["name"] for t in listed["tools"]} >= {"find_skills", "load_skill"}
    reports = [json.loads(line) for line in inspect("skills/list", "--verify").splitlines()
               if line.startswith("{")]
    assert reports and all(r["ok"] and r["outcome"] == "verified" for r in reports), reports
    assert "pdf-tables" in {r["name"] for r in reports}
    got = json.loads(inspect("skills/get", "--uri", "skill://pdf-tables/SKILL.md", "--verify"))
    assert got["ok"], got
    called = json.loads(inspect("tools/call", "--tool-name", "find_skills", "--tool-arg",
                                "task=extract tables from a PDF"))
    assert called.get("isError") in (None, False), called
    assert called["structuredContent"]["skills"][0]["name"] == "pdf-tables"


def test_an_explicit_model_dir_wins_and_a_missing_one_is_an_error(tmp_path):
    """(#27) `--model-dir /nonexistent` was ignored when SKILLBANK_MODEL_DIR was set."""
    from skillbank import onnx_model

    env_model = os.environ.get("SKILLBANK_MODEL_DIR") or str(tmp_path / "env-model")
    missing = tmp_path / "nonexistent"
    with pytest.MonkeyPatch.context() as mp:
        mp.setenv("SKILLBANK_MODEL_DIR", env_model)
        assert onnx_model.local_model_dir(missing) is None
    done = subprocess.run([sys.executable, "-m", "skillbank.mcp_server", "--root",
                           str(tmp_path / "root"), "--model-dir", str(missing)],
                          capture_output=True, text=True, timeout=60, stdin=subprocess.DEVNULL,
                          env=base_env(SKILLBANK_MODEL_DIR=env_model))
    assert done.returncode == 2, done.stderr
    assert f"--model-dir {missing}" in done.stderr and "no all-MiniLM-L6-v2 model" in done.stderr
    assert done.stdout == "" and "Traceback" not in done.stderr
    assert not (tmp_path / "root").exists()  # refused before touching anything


# The pieces behind the guard and the command line ------------------------------------------------
def test_origin_and_loopback_rules():
    from skillbank.mcp_server.http import origin_allowed
    from skillbank.mcp_server.options import is_loopback

    assert origin_allowed(None) and origin_allowed("")
    for ok in ("http://localhost", "http://localhost:6274", "https://127.0.0.1:8443",
               "http://[::1]:3000", "http://127.0.0.2"):
        assert origin_allowed(ok), ok
    for bad in ("null", "http://evil.example", "http://localhost.evil.example", "file://",
                "http://192.168.1.10:8765", "ftp://localhost", "not a url"):
        assert not origin_allowed(bad), bad
    from skillbank.mcp_server.http import host_allowed

    for ok in ("localhost", "localhost:8765", "127.0.0.1", "127.0.0.1:8765", "[::1]:8765", "[::1]"):
        assert host_allowed(ok), ok
    for bad in (None, "", "evil.example", "localhost.evil.example:8765", "10.0.0.1", "[::1",
                "evil.com@localhost", "evil.com\\@localhost", "localhost/evil", "local host"):
        assert not host_allowed(bad), bad
    assert is_loopback("127.0.0.1") and is_loopback("::1") and is_loopback("[::1]")
    assert is_loopback("localhost") and not is_loopback("0.0.0.0") and not is_loopback("example.com")


def test_options_from_argv_objects_and_mappings(monkeypatch, tmp_path):
    from skillbank.mcp_server.options import ServeOptions, parse_args
    from skillbank.mcp_server.runner import StartupError, check_options

    monkeypatch.chdir(tmp_path)  # --skills-dir folders must exist (relative: the cwd's)
    (tmp_path / "a").mkdir()
    (tmp_path / "b").mkdir()
    opts = parse_args(["--root", "/tmp/r", "--skills-dir", "a", "--skills-dir", "b",
                       "--transport", "http", "--port", "9000", "--trust"])
    assert opts.root == "/tmp/r" and opts.skills_dirs == ["a", "b"] and opts.port == 9000
    assert opts.transport == "http" and opts.trust and opts.watch and opts.include_bundled

    class FromCli:  # what a CLI might hand over: Paths, None for unset values
        root = Path("/tmp/x")
        skills_dirs = [Path("/s")]
        chroma_url = None
        transport = "stdio"

    coerced = ServeOptions.coerce(FromCli())
    assert coerced.root == "/tmp/x" and coerced.skills_dirs == ["/s"] and coerced.port == 8765
    assert ServeOptions.coerce({"host": "::1", "bogus": 1}).host == "::1"

    monkeypatch.delenv("SKILLBANK_TOKEN", raising=False)
    with pytest.raises(StartupError, match="token"):
        check_options(ServeOptions(transport="http", host="0.0.0.0"))
    assert check_options(ServeOptions(transport="http", host="127.0.0.1")) is None
    monkeypatch.setenv("SKILLBANK_TOKEN", "s3cret")
    assert check_options(ServeOptions(transport="http", host="0.0.0.0")) == "s3cret"
    assert check_options(ServeOptions(transport="stdio")) is None
    with pytest.raises(StartupError):
        check_options(ServeOptions(transport="sse"))


def test_importing_the_package_does_not_import_mcp():
    code = ("import sys, skillbank.mcp_server as m; "
            "assert callable(m.parse_args); "
            "print('mcp' in sys.modules, 'chromadb' in sys.modules)")
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60)
    assert done.stdout.strip() == "False False", done.stderr


def test_http_answers_every_malformed_message_with_a_json_rpc_error(http_server):
    auth = {"Authorization": f"Bearer {TOKEN}", "Content-Type": "application/json",
            "Accept": "application/json, text/event-stream", "MCP-Protocol-Version": "2025-11-25"}
    cases = [
        (b"{not json", -32700, None),
        (b'{"jsonrpc": "2.0", "id": 5, "method": "tools/list", "params": {"x": "\\ud800"}}',
         -32700, 5),
        (b'{"jsonrpc": "2.0", "id": 7}', -32600, 7),
        (b'{"jsonrpc": "1.0", "id": 8, "method": "tools/list"}', -32600, 8),
    ]
    for body, code, request_id in cases:
        reply = httpx.post(http_server + "/mcp", content=body, headers=auth, timeout=120)
        assert reply.status_code == 400, body
        error = reply.json()
        assert error["id"] == request_id and error["error"]["code"] == code, (body, error)
        assert "pydantic" not in error["error"]["message"] and "https://" not in error["error"]["message"]
    # (#27) a batch is answered per request, as on stdio: one error for each id, in an array
    batch = [{"jsonrpc": "2.0", "id": 6, "method": "tools/list"},
             {"jsonrpc": "2.0", "method": "notifications/initialized"},
             {"jsonrpc": "2.0", "id": "seven", "method": "prompts/list"}]
    reply = httpx.post(http_server + "/mcp", content=json.dumps(batch).encode(), headers=auth,
                       timeout=120)
    assert reply.status_code == 400
    errors = reply.json()
    assert isinstance(errors, list) and [e["id"] for e in errors] == [6, "seven"], errors
    assert all(e["error"]["code"] == -32600 and "batch" in e["error"]["message"] for e in errors)


async def test_http_clients_see_titles_and_honest_hints_and_get_change_notifications(http_server):
    async with http_client(http_server, mode="legacy") as client:
        tools = {t.name: t for t in (await client.list_tools()).tools}
        assert all(t.title for t in tools.values())
        assert tools["rate_memory"].annotations.read_only_hint is False
        assert tools["rate_memory"].annotations.destructive_hint is False  # untrusted: votes wait
        assert tools["save_skill"].annotations.destructive_hint is True
        stats = json.loads((await client.read_resource("skillbank://stats")).contents[0].text)
    assert "…/team-skills" in stats["skill_roots"]  # its name (outside the root), not the path
    assert not any(Path(r).is_absolute() for r in [stats["root"], *stats["skill_roots"]])
    team = SERVED_SKILLS[http_server]
    events: list[Any] = []
    async with http_client(http_server) as client:  # 2026-07-28: a subscriptions/listen stream
        async with client.listen(resources_list_changed=True,
                                 resource_subscriptions=["skill://csv-cleaning/SKILL.md"]) as sub:
            import anyio

            async def collect() -> None:
                async for event in sub:
                    events.append(type(event).__name__)

            async with anyio.create_task_group() as group:
                group.start_soon(collect)
                await anyio.sleep(1.5)
                write_skill(team, "csv-cleaning", "Clean messy CSV files before loading them")
                with anyio.fail_after(30):
                    while "ResourcesListChanged" not in events:
                        await anyio.sleep(0.1)
                write_skill(team, "csv-cleaning", "Clean messy CSV files before loading them",
                            body="# Steps\n\nCheck the encoding first.\n")
                with anyio.fail_after(30):
                    while "ResourceUpdated" not in events:
                        await anyio.sleep(0.1)
                group.cancel_scope.cancel()
