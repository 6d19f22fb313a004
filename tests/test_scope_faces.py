"""The scope matrix, face rows: MCP HTTP with two tokens, MCP stdio, LlamaIndex with
`{user_id}`, the memory browser — × search, recall, context, list, list_pending, get, rate,
forget, review. User A's items are never shown to user B nor changed by B, and every write
appears once in the audit log with its principal. (The core rows are in tests/test_scope.py.)

Plus the bad input of these faces: a world-readable or malformed tokens file, a token that maps
to no principal, a template naming an unknown field — a clear error, never a traceback.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any, AsyncIterator

import httpx
import pytest

from conftest import free_port, stop_process
from mcp_http import bearer_session, call, wait_until_serving
from test_mcp_transports import base_env

# Distinctive words of user A's memory: none may reach user B.
A_TASK = "Rotate the Zephyrwood signing keys for the billing cluster"
A_RULE = "Always escort the Quokkamere auditors through the vault"
A_PENDING = "Deploy the Brindlemoor hotfix straight to production"
A_WORDS = ("zephyrwood", "quokkamere", "brindlemoor")


def shows_a(payload: Any) -> list[str]:
    """Which of A's distinctive words a tool result (any JSON) contains (not counting the
    query it echoes back as `task`)."""
    if isinstance(payload, dict):
        payload = {k: v for k, v in payload.items() if k != "task"}
    text = json.dumps(payload, default=str).lower()
    return [w for w in A_WORDS if w in text]


def audit_rows(root: Path) -> list[dict[str, Any]]:
    rows: list[dict[str, Any]] = []
    for path in sorted((root / "audit").glob("*.jsonl")):
        rows += [json.loads(line) for line in path.read_text().splitlines()]
    return rows


# ------------------------------------------------------------------------------- MCP over HTTP


@asynccontextmanager
async def http_server(root: Path, tokens: Path, *extra: str) -> AsyncIterator[str]:
    port = free_port()
    log_path = root.parent / f"http-{port}.log"
    with log_path.open("w") as log:
        proc = subprocess.Popen(
            [sys.executable, "-m", "skillbank.mcp_server", "--transport", "http", "--port",
             str(port), "--root", str(root), "--no-bundled", "--tokens", str(tokens), *extra],
            stdout=log, stderr=subprocess.STDOUT, env=base_env(SKILLBANK_EMBEDDING="hash"))
        url = f"http://127.0.0.1:{port}"
        try:
            wait_until_serving(proc, url, log_path)
            yield url
        finally:
            stop_process(proc)


async def reads_hide_a(bob: Any) -> None:
    """B's search, recall, context and pending list, and the guideline resources (list and get:
    topics, one topic's rules), show none of A's words."""
    for row, (tool, args) in {
        "search": ("search_guidelines", {"task": "escort the auditors through the vault"}),
        "recall": ("recall_experiences", {"task": A_TASK}),
        "context": ("memory_context", {"task": A_TASK}),
        "list_pending": ("list_pending", {}),
    }.items():
        ok, result = await call(bob, tool, args)
        assert ok, (row, result)
        assert shows_a(result) == [], (row, result)
    listed = await bob.list_resources()
    for resource in listed.resources:
        if str(resource.uri).startswith("skillbank://guidelines/"):
            text = (await bob.read_resource(str(resource.uri))).contents[0].text
            assert shows_a(text) == [], resource.uri


async def changes_refused(bob: Any, a_ids: dict[str, str],
                          review: dict[str, Any]) -> list[tuple[str, str]]:
    """B's rate and forget of A's experience and rule, and `review`, each fail with a clear
    error (never a traceback); returns (row, error text) for the face's own checks."""
    errors = []
    for row, tool, args in [
        ("rate", "rate_memory", {"id": a_ids["exp"], "helpful": False}),
        ("rate", "rate_memory", {"id": a_ids["rule"], "helpful": False}),
        ("forget", "forget", {"id": a_ids["exp"]}),
        ("forget", "forget", {"id": a_ids["rule"]}),
        ("review", "review_memory", review),
    ]:
        ok, result = await call(bob, tool, args)
        assert not ok, (row, result)
        assert "Traceback" not in result
        errors.append((row, result))
    return errors


def issue_tokens(path: Path) -> dict[str, str]:
    from skillbank.mcp_server.identity import add_principal

    return {
        "alice": add_principal(path, "alice", namespace="alice", role="contributor"),
        "alice-bot": add_principal(path, "alice-bot", namespace="alice", role="contributor",
                                   trusted=False),
        "rita": add_principal(path, "rita", namespace="alice", role="reviewer"),
        "bob": add_principal(path, "bob", namespace="bob", role="reviewer"),
    }


@pytest.mark.slow  # a server process
async def test_mcp_http_two_tokens_scope_matrix(tmp_path):
    root = tmp_path / "root"
    tokens_file = tmp_path / "tokens.toml"
    tokens = issue_tokens(tokens_file)
    async with http_server(root, tokens_file) as url:
        async with bearer_session(url, tokens["alice"]) as alice:
            ok, exp = await call(alice, "record_experience", {
                "task": A_TASK, "outcome": "failure", "feedback": "Zephyrwood keys expired."})
            assert ok, exp
            ok, rule = await call(alice, "add_guideline", {"text": A_RULE})
            assert ok, rule
        async with bearer_session(url, tokens["alice-bot"]) as bot:
            ok, pending = await call(bot, "record_experience", {"task": A_PENDING,
                                                                "outcome": "success"})
            assert ok and pending["status"] == "pending", pending
        a_ids = {"exp": exp["id"], "rule": rule["guideline_id"], "pending": pending["id"]}

        async with bearer_session(url, tokens["bob"]) as bob:
            # Bob's own write, so his reads are not empty by construction.
            ok, mine = await call(bob, "record_experience", {
                "task": "Rotate the signing keys for the billing cluster", "outcome": "success"})
            assert ok, mine
            await reads_hide_a(bob)
            # A remote client is not shown the host's layout (its root, Chroma, skill folders).
            stats = (await bob.read_resource("skillbank://stats")).contents[0].text
            assert str(tmp_path) not in stats and json.loads(stats)["root"] == ".", stats
            ok, result = await call(bob, "recall_experiences", {"task": A_TASK})
            assert mine["id"] in json.dumps(result)  # he does see his own
            # rate, forget, review by id: "not found", nothing changed.
            for row, result in await changes_refused(bob, a_ids, review={
                    "id": a_ids["pending"], "decision": "approve"}):
                assert "not found" in result.lower() or "no " in result.lower(), (row, result)

        async with bearer_session(url, tokens["rita"]) as rita:  # A's reviewer: review works
            ok, result = await call(rita, "list_pending", {})
            assert ok and a_ids["pending"] in json.dumps(result), result
            ok, result = await call(rita, "review_memory", {"id": a_ids["pending"],
                                                            "decision": "approve"})
            assert ok, result
        async with bearer_session(url, tokens["alice"]) as alice:  # untouched by Bob
            ok, result = await call(alice, "recall_experiences", {"task": A_TASK})
            assert ok and a_ids["exp"] in json.dumps(result)
            ok, result = await call(alice, "search_guidelines",
                                    {"task": "escort the auditors through the vault"})
            assert ok and a_ids["rule"] in json.dumps(result)

    # Audit: every write once, with its principal; Bob's refused attempts changed nothing.
    rows = audit_rows(root)
    writes = [(r["principal"], r["action"], r["id"]) for r in rows]
    assert writes.count(("alice", "record", a_ids["exp"])) == 1
    assert writes.count(("alice", "add", a_ids["rule"])) == 1
    assert writes.count(("alice-bot", "record", a_ids["pending"])) == 1
    assert writes.count(("bob", "record", mine["id"])) == 1
    assert writes.count(("rita", "approve", a_ids["pending"])) == 1
    assert not [w for w in writes if w[0] == "bob" and w[2] in a_ids.values()]
    assert {r["face"] for r in rows} == {"mcp-http"}


# ----------------------------------------------------------------------- bad input: tokens file


def start_server(root: Path, tokens: Path) -> subprocess.CompletedProcess:
    return subprocess.run(
        [sys.executable, "-m", "skillbank.mcp_server", "--transport", "http", "--port",
         str(free_port()), "--root", str(root), "--no-bundled", "--tokens", str(tokens)],
        capture_output=True, text=True, timeout=120, env=base_env(SKILLBANK_EMBEDDING="hash"))


@pytest.mark.slow  # server processes (each refuses to start)
@pytest.mark.parametrize("problem", ["world-readable", "group-readable", "not-toml",
                                     "no-hash", "bad-role", "unknown-key", "missing"])
def test_a_bad_tokens_file_is_refused_at_start_up(tmp_path, problem):
    from skillbank.mcp_server.identity import add_principal

    path = tmp_path / "tokens.toml"
    add_principal(path, "alice", namespace="alice", role="contributor")
    text = path.read_text()
    expected = {
        "world-readable": "can be read or written by others (mode 0604)",
        "group-readable": "can be read or written by its group (mode 0640)",
        "not-toml": "is not valid TOML",
        "no-hash": "sha256 must be the token's SHA-256",
        "bad-role": "role 'boss' is not one of reader, contributor, reviewer, admin",
        "unknown-key": "unknown keys token",
        "missing": "does not exist",
    }[problem]
    if problem == "world-readable":
        path.chmod(0o604)
    elif problem == "group-readable":
        path.chmod(0o640)
    elif problem == "not-toml":
        path.write_text(text + "\n[principals.bob\n")
    elif problem == "no-hash":
        path.write_text(text.replace('sha256 = "', 'sha256 = "zz'))
    elif problem == "bad-role":
        path.write_text(text.replace('"contributor"', '"boss"'))
    elif problem == "unknown-key":
        path.write_text(text + 'token = "sbk_plain"\n')
    elif problem == "missing":
        path.unlink()
    done = start_server(tmp_path / "root", path)
    assert done.returncode == 2, done.stderr
    assert expected in done.stderr and str(path) in done.stderr, done.stderr
    assert "Traceback" not in done.stderr


def test_tokens_file_parsing_names_each_problem(tmp_path):
    from skillbank.mcp_server.identity import TokensFile, TokensFileError, add_principal

    path = tmp_path / "tokens.json"
    token = add_principal(path, "alice", namespace="alice", role="reviewer", reads=["team"])
    assert oct(path.stat().st_mode & 0o777) == oct(0o600)
    stored = path.read_text()
    assert token not in stored and json.loads(stored)["principals"]["alice"]["reads"] == ["team"]
    tokens = TokensFile(path)
    scope = tokens.lookup(token).scope()
    assert (scope.principal, scope.namespace, scope.reads, scope.role.value, scope.face) == (
        "alice", "alice", ("team",), "reviewer", "mcp-http")
    assert tokens.lookup("sbk_not-a-token") is None
    with pytest.raises(TokensFileError, match="already in"):
        add_principal(path, "alice", namespace="alice", role="reader")
    with pytest.raises(TokensFileError, match="invalid namespace"):
        add_principal(path, "bob", namespace="", role="reader")
    with pytest.raises(TokensFileError, match="role 'owner'"):
        add_principal(path, "bob", namespace="bob", role="owner")
    second = add_principal(path, "bob", namespace="bob", role="reader")
    assert TokensFile(path).lookup(second).namespace == "bob"  # a running server re-reads it
    assert tokens.lookup(second) is not None
    data = json.loads(path.read_text())
    data["principals"]["carol"] = dict(data["principals"]["bob"])  # the same hash twice
    path.write_text(json.dumps(data))
    with pytest.raises(TokensFileError, match="same token hash"):
        TokensFile(path)
    assert tokens.lookup(second) is not None  # a broken edit keeps the last good version


@pytest.mark.slow  # a server process
async def test_unknown_and_static_tokens_over_http(tmp_path):
    tokens_file = tmp_path / "tokens.toml"
    tokens = issue_tokens(tokens_file)
    body = {"jsonrpc": "2.0", "id": 1, "method": "tools/list"}
    headers = {"Accept": "application/json, text/event-stream"}
    async with http_server(tmp_path / "root", tokens_file, "--token", "static-admin") as url:
        for sent, wanted in (("Bearer sbk_nobody", "maps to no principal"),
                             ("", "missing bearer token")):
            answer = httpx.post(url + "/mcp", json=body, timeout=30,
                                headers={**headers, **({"Authorization": sent} if sent else {})})
            assert answer.status_code == 401, answer.text
            assert wanted in answer.json()["error"]["message"]
            assert "Traceback" not in answer.text
        async with bearer_session(url, "static-admin") as admin:  # the single static token still works
            ok, result = await call(admin, "record_experience", {"task": "Static token task",
                                                                 "outcome": "success"})
            assert ok, result
        async with bearer_session(url, tokens["bob"]) as bob:
            ok, result = await call(bob, "recall_experiences", {"task": "Static token task"})
            assert ok and result["experiences"] == [], result


def test_cli_tokens_add_list_remove(cli_root, tmp_path):
    from typer.testing import CliRunner

    from skillbank.cli import app
    from skillbank.mcp_server.identity import TokensFile

    runner = CliRunner()
    added = runner.invoke(app, ["--json", "tokens", "add", "alice", "--namespace", "alice",
                                "--role", "reviewer", "--reads", "team"])
    assert added.exit_code == 0, added.output
    issued = json.loads(added.stdout)
    path = Path(issued["file"])
    assert path == cli_root / "tokens.toml" and issued["token"] not in path.read_text()
    assert TokensFile(path).lookup(issued["token"]).reads == ("team",)
    listed = runner.invoke(app, ["--json", "tokens", "list"])
    assert [r["name"] for r in json.loads(listed.stdout)] == ["alice"]
    assert issued["token"] not in listed.stdout
    bad = runner.invoke(app, ["tokens", "add", "bob", "--namespace", "bob", "--role", "boss"])
    assert bad.exit_code == 2 and "role 'boss'" in bad.stderr and "Traceback" not in bad.output
    path.chmod(0o644)
    bad = runner.invoke(app, ["tokens", "list"])
    assert bad.exit_code == 2 and "chmod 600" in bad.stderr
    path.chmod(0o600)
    gone = runner.invoke(app, ["tokens", "remove", "alice"])
    assert gone.exit_code == 0 and TokensFile(path).lookup(issued["token"]) is None
    missing = runner.invoke(app, ["tokens", "remove", "alice"])
    assert missing.exit_code == 3 and "no principal 'alice'" in missing.stderr


# ------------------------------------------------------------------- LlamaIndex with {user_id}


async def _run_as(bank: Any, user: str | None, replies: list, *, session: str) -> tuple[list, Any]:
    """One real FunctionAgent run with the {user_id} tool spec and memory block; `user` goes in
    the workflow's Context store (None: not set)."""
    from llama_index.core.agent.workflow import FunctionAgent
    from llama_index.core.memory import Memory
    from llama_index.core.workflow import Context
    from scripted_llama import scripted

    from skillbank.adapters.llamaindex import SkillbankMemoryBlock, SkillbankToolSpec

    llm, seen = scripted(replies)
    block = SkillbankMemoryBlock(bank, namespace="{user_id}", background=False)
    memory = Memory.from_defaults(session_id=session, memory_blocks=[block])
    agent = FunctionAgent(tools=SkillbankToolSpec(bank, include="all",
                                                  namespace="{user_id}").to_tool_list(),
                          llm=llm, system_prompt="You are a helpful agent.")
    ctx = Context(agent)
    if user is not None:
        await ctx.store.set("user_id", user)
    await agent.run(user_msg="Rotate the signing keys for the billing cluster", ctx=ctx,
                    memory=memory)
    return seen, block


def _tool_outputs(seen: list) -> dict[str, str]:
    """What each tool answered, by tool call id, as the LLM saw it last."""
    out: dict[str, str] = {}
    for message in seen[-1]:
        if message.role.value == "tool":
            out[message.additional_kwargs.get("tool_call_id", "")] = message.content or ""
    return out


@pytest.mark.slow  # real FunctionAgent runs
async def test_llamaindex_user_id_scope_matrix(tmp_path):
    from llama_index.core.base.llms.types import ChatMessage
    from scripted_llama import tool_call

    from skillbank import Skillbank
    from skillbank.adapters.llamaindex import SkillbankRetriever
    from skillbank.embeddings import HashEmbedding

    root = tmp_path / "root"
    bank = Skillbank.open(root, embedding_function=HashEmbedding(), include_bundled=False)
    try:
        # Alice's run writes her memory through the tools.
        seen, _ = await _run_as(bank, "alice", [
            tool_call("record_experience", {"task": A_TASK, "outcome": "failure",
                                             "feedback": "Zephyrwood keys expired."}, "a1"),
            tool_call("add_guideline", {"text": A_RULE}, "a2"),
            ChatMessage(role="assistant", content="Noted."),
        ], session="alice-1")
        outputs = _tool_outputs(seen)
        a_exp = json.loads(outputs["a1"])["id"]
        a_rule = json.loads(outputs["a2"])["guideline_id"]
        # Bob's run: every read and the rating of Alice's id, inside the agent.
        seen, block = await _run_as(bank, "bob", [
            tool_call("recall_experiences", {"task": A_TASK}, "b1"),
            tool_call("search_guidelines", {"task": "escort the auditors through the vault"},
                       "b2"),
            tool_call("memory_context", {"task": A_TASK}, "b3"),
            tool_call("rate_memory", {"id": a_exp, "helpful": False}, "b4"),
            tool_call("rate_memory", {"id": a_rule, "helpful": False}, "b5"),
            tool_call("record_experience", {"task": "Rotate the signing keys",
                                             "outcome": "success"}, "b6"),
            ChatMessage(role="assistant", content="Done."),
        ], session="bob-1")
        outputs = _tool_outputs(seen)
        for cid, row in (("b1", "recall"), ("b2", "search"), ("b3", "context")):
            assert shows_a(outputs[cid]) == [], (row, outputs[cid])
        for cid in ("b4", "b5"):  # rate by id: not found, nothing changed
            assert "not found" in outputs[cid].lower() or "no " in outputs[cid].lower(), outputs
        system = "\n".join(m.content or "" for m in seen[0] if m.role.value == "system")
        assert shows_a(system) == []  # the memory block's context for Bob
        b_exp = json.loads(outputs["b6"])["id"]
        # The retriever, filled from the same Context in a workflow step, and with no value.
        from workflows import Context, Workflow, step
        from workflows.events import StartEvent, StopEvent

        class Retrieve(Workflow):
            @step
            async def go(self, ctx: Context, ev: StartEvent) -> StopEvent:
                found = {}
                for kind in ("experiences", "guidelines"):
                    nodes = await SkillbankRetriever(bank, kind=kind, namespace="{user_id}"
                                                     ).aretrieve(A_TASK + " " + A_RULE)
                    found[kind] = [n.node.node_id for n in nodes]
                return StopEvent(result=found)

        flow = Retrieve()
        ctx = Context(flow)
        await ctx.store.set("user_id", "bob")
        found = await flow.run(ctx=ctx)
        assert a_exp not in found["experiences"] and a_rule not in found["guidelines"]
        assert b_exp in found["experiences"]
        ctx = Context(flow)
        await ctx.store.set("user_id", "alice")
        found = await flow.run(ctx=ctx)
        assert a_exp in found["experiences"] and a_rule in found["guidelines"]
        # Alice's items are untouched by Bob.
        from skillbank.scope import narrowed, using

        with using(narrowed("alice")):
            assert bank.experiences.get(a_exp).usage.failures == 0
            assert bank.guidelines.get(a_rule).harmful == 0
        bank.flush()
    finally:
        bank.close()
    rows = [(r["principal"], r["action"], r["id"]) for r in audit_rows(root)]
    assert rows.count(("alice", "record", a_exp)) == 1
    assert rows.count(("alice", "add", a_rule)) == 1
    assert rows.count(("bob", "record", b_exp)) == 1
    assert not [r for r in rows if r[0] == "bob" and r[2] in (a_exp, a_rule)]


@pytest.mark.slow  # a real FunctionAgent run
async def test_llamaindex_template_without_a_value_warns_and_uses_no_memory(tmp_path, caplog):
    import logging

    from llama_index.core.base.llms.types import ChatMessage
    from scripted_llama import tool_call

    from skillbank import Skillbank
    from skillbank.embeddings import HashEmbedding

    bank = Skillbank.open(tmp_path / "root", embedding_function=HashEmbedding(),
                          include_bundled=False)
    try:
        with caplog.at_level(logging.WARNING, logger="skillbank"):
            seen, block = await _run_as(bank, None, [
                tool_call("record_experience", {"task": "Rotate keys", "outcome": "success"},
                           "c1"),
                ChatMessage(role="assistant", content="Done."),
            ], session="nobody")
            assert await block.arecord_run(seen and [], outcome="success") is None
        warned = [r.getMessage() for r in caplog.records]
        assert any("skillbank namespace failed; the agent goes on without it: namespace "
                   "template '{user_id}' needs 'user_id'" in w for w in warned), warned
        output = _tool_outputs(seen)["c1"]
        assert "needs 'user_id'" in output and "Traceback" not in output
        assert bank.experiences.list("*", limit=10) == []  # nothing in any namespace
        assert "{user_id}" not in json.dumps([r for r in audit_rows(tmp_path / "root")])
    finally:
        bank.close()


@pytest.mark.parametrize("template", ["{user.id}", "{0}", "{}", "{user_id!r}", "{user[0]}",
                                      "{user_id:>8}", "{unclosed"])
def test_a_template_naming_an_unknown_field_is_a_clear_error(hash_bank, template):
    from skillbank.adapters.langchain import SkillbankMiddleware
    from skillbank.adapters.llamaindex import (SkillbankMemoryBlock, SkillbankRetriever,
                                               SkillbankToolSpec)
    from skillbank.errors import InvalidInputError

    for build in (lambda: SkillbankToolSpec(hash_bank, namespace=template),
                  lambda: SkillbankRetriever(hash_bank, namespace=template),
                  lambda: SkillbankMemoryBlock(hash_bank, namespace=template),
                  lambda: SkillbankMiddleware(hash_bank, namespace=template)):
        with pytest.raises(InvalidInputError, match="namespace template") as caught:
            build()
        assert template.split("!")[0].split(":")[0].split("[")[0].rstrip("}") in str(caught.value)


# ----------------------------------------------------------------------------------- MCP stdio


@asynccontextmanager
async def stdio_session(root: Path, namespace: str) -> AsyncIterator[Any]:
    from mcp import Client, StdioServerParameters

    params = StdioServerParameters(
        command=sys.executable, args=["-m", "skillbank.mcp_server", "--root", str(root),
                                      "--no-bundled", "--namespace", namespace],
        env=base_env(SKILLBANK_EMBEDDING="hash"), cwd=str(root.parent))
    async with Client(params, read_timeout_seconds=120) as client:
        yield client


@pytest.mark.slow  # two server processes on one root: the second is a client of the first
async def test_mcp_stdio_scope_matrix(tmp_path):
    root = tmp_path / "root"
    async with stdio_session(root, "alice") as alice:
        ok, exp = await call(alice, "record_experience", {
            "task": A_TASK, "outcome": "failure", "feedback": "Zephyrwood keys expired."})
        assert ok, exp
        ok, rule = await call(alice, "add_guideline", {"text": A_RULE})
        assert ok, rule
        ok, pending = await call(alice, "learn_from_critique", {
            "critique": "Always escort the Quokkamere auditors out of the building too."})
        assert ok, pending
        a_ids = {"exp": exp["id"], "rule": rule["guideline_id"]}
        async with stdio_session(root, "bob") as bob:  # a client of alice's process
            ok, mine = await call(bob, "record_experience", {
                "task": "Rotate the signing keys for the billing cluster", "outcome": "success"})
            assert ok, mine
            await reads_hide_a(bob)
            await changes_refused(bob, a_ids, review={"id": a_ids["rule"], "decision": "reject"})
        ok, result = await call(alice, "recall_experiences", {"task": A_TASK})
        assert ok and a_ids["exp"] in json.dumps(result)
        ok, result = await call(alice, "search_guidelines",
                                {"task": "escort the auditors through the vault"})
        assert ok and a_ids["rule"] in json.dumps(result)
    rows = [(r["namespace"], r["action"], r["id"], r["face"]) for r in audit_rows(root)]
    assert rows.count(("alice", "record", a_ids["exp"], "mcp-stdio")) == 1
    assert rows.count(("alice", "add", a_ids["rule"], "mcp-stdio")) == 1
    assert rows.count(("bob", "record", mine["id"], "mcp-stdio")) == 1
    assert not [r for r in rows if r[0] == "bob" and r[2] in a_ids.values()]


# ------------------------------------------------------------------------------ memory browser


def test_memory_browser_scope_matrix(tmp_path):
    from starlette.testclient import TestClient

    from skillbank import Skillbank
    from skillbank.embeddings import HashEmbedding
    from skillbank.local_scope import local_session_scope
    from skillbank.scope import Scope, using
    from skillbank.ui import Guard, create_app

    root = tmp_path / "root"
    bank = Skillbank.open(root, embedding_function=HashEmbedding(), include_bundled=False)
    try:
        alice = local_session_scope("alice", "test")
        with using(alice):
            a_exp = bank.experiences.record(task=A_TASK, outcome="failure",
                                            feedback="Zephyrwood keys expired.")
            a_rule = bank.guidelines.add(A_RULE, topic="audits").guideline_id
        with using(Scope(principal="alice-bot", namespace="alice", role="contributor",
                         trusted=False, face="test")):
            a_pending = bank.experiences.record(task=A_PENDING, outcome="success", trusted=False)
        with using(local_session_scope("bob", "test")):
            b_exp = bank.experiences.record(task="Rotate the signing keys for the billing cluster",
                                            outcome="success")
        base = "http://127.0.0.1:8766"
        app = create_app(bank, Guard(), local_session_scope("bob", "ui"))
        c = TestClient(app, base_url=base)
        csrf = app.state.guard.csrf
        same = {"origin": base}
        query = "Rotate the signing keys for the billing cluster"  # none of A's words
        pages = {
            "list": ["/guidelines", "/guidelines?status=all", "/experiences",
                     "/experiences?kind=lesson", "/audit"],
            "list_pending": ["/experiences", "/guidelines?status=pending"],
            "search": [f"/experiences?q={query}", "/skills?q=auditors"],
        }
        for row, urls in pages.items():
            for url in urls:
                page = c.get(url)
                assert page.status_code == 200, (row, url)
                assert shows_a(page.text) == [] and a_exp not in page.text, (row, url)
        assert b_exp in c.get(f"/experiences?q={query}").text  # Bob sees his own
        page = c.post("/context", data={"csrf": csrf, "task": query, "budget": "1500"},
                      headers=same)
        assert page.status_code == 200 and shows_a(page.text) == [], "context"
        for url in (f"/experiences/{a_exp}", f"/guidelines/{a_rule}",
                    f"/experiences/{a_pending}"):  # get: not found, and nothing of it shown
            page = c.get(url)
            assert page.status_code == 404 and shows_a(page.text) == [], url
        for row, url, data in [
            ("rate", "/rate", {"id": a_exp, "helpful": "0"}),
            ("rate", "/rate", {"id": a_rule, "helpful": "0"}),
            ("forget", f"/experiences/{a_exp}/forget", {}),
            ("forget", f"/guidelines/{a_rule}/forget", {}),
            ("review", f"/experiences/{a_pending}/approve", {}),
            ("review", f"/guidelines/{a_rule}/retire", {}),
        ]:
            page = c.post(url, data={"csrf": csrf, **data}, headers=same,
                          follow_redirects=False)
            assert page.status_code in (403, 404), (row, url, page.status_code)
            assert "Traceback" not in page.text
        done = c.post("/rate", data={"csrf": csrf, "id": b_exp, "helpful": "1"}, headers=same,
                      follow_redirects=False)
        assert done.status_code == 303
        with using(alice):  # untouched
            assert bank.experiences.get(a_exp).usage.failures == 0
            assert bank.guidelines.get(a_rule).status == "active"
            assert bank.experiences.get(a_pending).status == "pending"
    finally:
        bank.close()
    rows = [(r["principal"], r["face"], r["action"], r["id"]) for r in audit_rows(root)]
    assert [r for r in rows if r[1] == "ui"] == [(rows[0][0], "ui", "vote", b_exp)]
    assert not [r for r in rows if r[1] == "ui" and r[3] in (a_exp, a_rule, a_pending)]
