"""MCP over streamable HTTP in tests, written once: wait for a server process a test started,
open a real client session with a bearer token, call a tool, the environment of a team worker.

Tests import it as `from mcp_http import ...`, as they import `conftest` and `workers`.
"""

from __future__ import annotations

import os
import subprocess
import time
from contextlib import asynccontextmanager, contextmanager
from pathlib import Path
from typing import Any, AsyncIterator, Iterator

import httpx
import pytest

from test_mcp_transports import base_env

REPO = Path(__file__).resolve().parents[1]


@contextmanager
def serving_http(root: Path, log: Path, *options: str, **env: str) -> Iterator[str]:
    """The url of a `skillbank serve --transport http` on `root` with `options` (a token or a
    tokens file) and the hash embedding, ready (/readyz 200) and stopped at the end."""
    import sys

    from conftest import free_port

    port = free_port()
    proc = subprocess.Popen(
        [sys.executable, "-m", "skillbank.cli", "serve", "--root", str(root), "--no-bundled",
         "--transport", "http", "--port", str(port), *options],
        stdout=subprocess.DEVNULL, stderr=log.open("w"),
        env=base_env(SKILLBANK_EMBEDDING="hash", **env))
    url = f"http://127.0.0.1:{port}"
    try:
        wait_until_serving(proc, url, log, probe="/readyz", status=200, seconds=300)
        yield url
    finally:
        proc.terminate()
        try:
            proc.wait(timeout=60)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()


@contextmanager
def serving_principals(where: Path, principals: dict[str, tuple[str, str, list[str]]],
                       **env: str) -> Iterator[tuple[str, dict[str, str], Path]]:
    """(url, tokens by principal, tokens file) of a `skillbank serve --transport http --tokens
    FILE` over `where/root`, with one token per principal: who -> (namespace, role, reads)."""
    from skillbank.mcp_server.identity import add_principal

    tokens_file = where / "tokens.toml"
    tokens = {who: add_principal(tokens_file, who, namespace=ns, role=role, reads=reads)
              for who, (ns, role, reads) in principals.items()}
    with serving_http(where / "root", where / "serve.log", "--tokens", str(tokens_file),
                      **env) as url:
        yield url, tokens, tokens_file


def wait_until_serving(proc: subprocess.Popen, url: str, log: Path, *, probe: str = "/mcp",
                       status: int | None = None, seconds: float = 300) -> None:
    """Return once `url + probe` answers (with `status`, if given); fail with the log's tail if
    the process exits first or nothing answers within `seconds` (generous: start-up under
    load). The caller stops the process."""
    deadline = time.time() + seconds
    while True:
        if proc.poll() is not None:
            pytest.fail("server exited: " + log.read_text()[-3000:])
        try:
            answer = httpx.get(url + probe, timeout=1)
            if status is None or answer.status_code == status:
                return
        except httpx.HTTPError:
            pass
        if time.time() > deadline:
            pytest.fail(f"server did not answer {probe} within {seconds:.0f} s: "
                        + log.read_text()[-3000:])
        time.sleep(0.1)


@asynccontextmanager
async def bearer_session(url: str, token: str, timeout: float = 120) -> AsyncIterator[Any]:
    """A real MCP client session to `url`/mcp sending `Authorization: Bearer <token>`."""
    import httpx2
    from mcp import Client
    from mcp.client.streamable_http import streamable_http_client

    async with httpx2.AsyncClient(headers={"Authorization": f"Bearer {token}"},
                                  timeout=timeout) as http:
        async with Client(streamable_http_client(url + "/mcp", http_client=http)) as client:
            yield client


async def call(client: Any, name: str, args: dict[str, Any]) -> tuple[bool, Any]:
    """(ok, structured result or the error text)."""
    result = await client.call_tool(name, args)
    if result.is_error:
        return False, result.content[0].text
    return True, result.structured_content


async def call_ok(client: Any, name: str, args: dict[str, Any]) -> dict[str, Any]:
    """The structured result of a call that must succeed (the error text if it does not)."""
    result = await client.call_tool(name, args)
    assert not result.is_error, (name, result.content[0].text)
    return result.structured_content


def team_env() -> dict[str, str]:
    """A team worker's environment: no inherited SKILLBANK_ settings (but the offline model),
    the hash embedding, this checkout importable."""
    return base_env(SKILLBANK_EMBEDDING="hash", PYTHONPATH=os.pathsep.join(
        filter(None, [str(REPO), os.environ.get("PYTHONPATH")])))
