"""Over HTTP the change monitor polls only while a client can be notified (soak #6).

The SDK enters the server's lifespan once for an HTTP app's whole life, so the count of
connected clients never came back to 0: after the first request the monitor stat'ed every skill
file and rendered every playbook once a second for good (4.5% of a core on an idle server with
no session at all, growing with the library). Now over HTTP it runs while a handshake session
or a 2026-07-28 `subscriptions/listen` stream is open, and a later one starts it again; a
modern client's plain calls start nothing. Checked on a real `skillbank serve --transport http`
through its DEBUG log ("change monitor started" / "stopped").
"""

from __future__ import annotations

import time
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any, AsyncIterator

import anyio
import pytest

from mcp_http import call_ok, serving_http

TOKEN = "idle-monitor-token-1234567890"
STARTED, STOPPED = "change monitor started", "change monitor stopped"


@pytest.fixture
def served(tmp_path: Path) -> Any:
    """(url, log) of a `skillbank serve --transport http` on a new root, stopped at the end."""
    log = tmp_path / "serve.log"
    with serving_http(tmp_path / "root", log, "--token", TOKEN, "--trust", "--log-level",
                      "DEBUG", SKILLBANK_MCP_POLL_SECONDS="0.2") as url:
        yield url, log


@asynccontextmanager
async def client(url: str, mode: str) -> AsyncIterator[Any]:
    """A real MCP client over HTTP: `legacy` opens a handshake session, `auto` speaks
    2026-07-28 (one request at a time, no session)."""
    import httpx2
    from mcp import Client
    from mcp.client.streamable_http import streamable_http_client

    async with httpx2.AsyncClient(headers={"Authorization": f"Bearer {TOKEN}"},
                                  timeout=120) as http:
        async with Client(streamable_http_client(url + "/mcp", http_client=http),
                          mode=mode) as session:
            yield session


def said(log: Path, what: str) -> int:
    return log.read_text().count(what)


async def wait_said(log: Path, what: str, times: int) -> None:
    """Until the log says `what` `times` times (generous: a loaded machine)."""
    deadline = time.monotonic() + 120
    while said(log, what) < times:
        assert time.monotonic() < deadline, f"never said {what!r} x{times}: " + \
            log.read_text()[-3000:]
        await anyio.sleep(0.05)


async def test_the_monitor_runs_only_while_a_session_is_open(served):
    url, log = served
    async with client(url, "auto") as modern:  # plain calls: nobody to notify
        await call_ok(modern, "find_skills", {"task": "rotate the keys"})
    assert said(log, STARTED) == 0, log.read_text()[-3000:]

    for n in (1, 2):  # the second session starts it again
        async with client(url, "legacy") as session:
            await call_ok(session, "find_skills", {"task": "rotate the keys"})
            await wait_said(log, STARTED, n)
        await wait_said(log, STOPPED, n)  # was: polled on with no session, for good

    async with client(url, "auto") as modern:
        await call_ok(modern, "find_skills", {"task": "rotate the keys"})
    assert said(log, STARTED) == 2, log.read_text()[-3000:]


async def test_a_listen_stream_is_a_client_to_notify(served):
    """A 2026-07-28 client gets changes on its `subscriptions/listen` stream: the monitor runs
    while the stream is open, and stops when it closes."""
    url, log = served
    async with client(url, "auto") as modern:
        async with modern.listen(resources_list_changed=True):
            await wait_said(log, STARTED, 1)
        await wait_said(log, STOPPED, 1)
