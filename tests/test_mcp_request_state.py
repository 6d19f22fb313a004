"""A 2026-07-28 client's sampling retry may reach another process of the same memory
(hunt-sampling #2, session 36): two `skillbank serve --transport http` on one root, the first
round of `learn_from_critique` answered by one, the retry carrying the model's rules by the
other. The SDK's default key is the process's own, and the retry was refused ("Invalid or
expired requestState"): the critique was lost."""

from __future__ import annotations

import json
import stat
import uuid
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any, AsyncIterator

import anyio
import mcp_types as types

from mcp_http import serving_http

TOKEN = "tok-" + "s" * 40
RULES = json.dumps([{"text": "Quote every identifier in generated SQL.", "topic": "sql"}])


async def _model(context: Any, params: Any) -> types.CreateMessageResult:
    return types.CreateMessageResult(role="assistant", model="test",
                                     content=types.TextContent(type="text", text=RULES))


@asynccontextmanager
async def _client(url: str) -> AsyncIterator[Any]:
    """A current (2026-07-28) client that offers sampling."""
    import httpx2
    from mcp import Client
    from mcp.client.streamable_http import streamable_http_client

    async with httpx2.AsyncClient(headers={"Authorization": f"Bearer {TOKEN}"},
                                  timeout=120) as http:
        async with Client(streamable_http_client(url + "/mcp", http_client=http), mode="auto",
                          sampling_callback=_model) as client:
            yield client


ARGS = {"critique": "Quote identifiers in SQL.", "task": "write a SQL query"}


async def _retry_elsewhere(first_url: str, second_url: str) -> tuple[Any, Any]:
    """Round one of `learn_from_critique` on the first server, the retry with the model's
    reply on the second; (the retry's result, a search for the rule on the second)."""
    async with _client(first_url) as first:
        asked = await first.session.call_tool("learn_from_critique", ARGS,
                                              allow_input_required=True)
    assert isinstance(asked, types.InputRequiredResult), asked
    (key, request), = asked.input_requests.items()
    reply = await _model(None, request.params)
    async with _client(second_url) as second:
        done = await second.session.call_tool(
            "learn_from_critique", ARGS, input_responses={key: reply},
            request_state=asked.request_state, allow_input_required=True)
        rules = await second.call_tool("search_guidelines", {"task": "SQL identifiers"})
    return done, rules


def _learned(done: Any, rules: Any) -> None:
    assert not done.is_error, done.content
    assert done.structured_content["distilled_by"] == "client_model", done.structured_content
    texts = [g["text"] for g in rules.structured_content["guidelines"]]
    assert "Quote every identifier in generated SQL." in texts, texts


def test_a_sampling_retry_is_accepted_by_another_process_of_the_root(tmp_path: Path) -> None:
    root = tmp_path / "root"
    with serving_http(root, tmp_path / "one.log", "--trust", "--token", TOKEN) as one, \
            serving_http(root, tmp_path / "two.log", "--trust", "--token", TOKEN) as two:
        _learned(*anyio.run(_retry_elsewhere, one, two))
    key_file = root / ".request-state.key"
    assert stat.S_IMODE(key_file.stat().st_mode) == 0o600  # a secret: this user's only


async def test_a_sampling_retry_is_accepted_by_another_team_worker(
        tmp_path: Path, chroma_server: str, postgres: Any) -> None:
    """Two `skillbank server` workers of one deployment, each on its own root (two machines):
    the key is the deployment's, in PostgreSQL, and a root's key file plays no part."""
    import psycopg

    from conftest import stop_process
    from team_worker import start_server

    deployment = uuid.uuid4().hex[:12]
    workers = [start_server(tmp_path / f"root-{n}", chroma_server, postgres.url, "--token",
                            TOKEN, "--trust", deployment=deployment, log=tmp_path / f"w{n}.log")
               for n in range(2)]
    try:
        _learned(*await _retry_elsewhere(workers[0][1], workers[1][1]))
    finally:
        for proc, _ in workers:
            stop_process(proc)
    with psycopg.connect(postgres.url) as conn:
        kept = conn.execute("SELECT count(*) FROM sb_secrets WHERE deployment = %s",
                            (deployment,)).fetchone()
    assert kept == (1,)  # made once, by whichever worker asked first
    assert not list(tmp_path.glob("root-*/.request-state.key"))
