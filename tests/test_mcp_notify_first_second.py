"""A change right after a client starts listening is notified (hunt-mcphttp #2, session 36).

The change monitor's first look at a client's scope was its baseline, taken one poll interval
after its thread started (or at a running thread's next tick, for a new principal's scope): a
skill saved in a session's first second was folded into it, no
`notifications/resources/list_changed` ever came, and the client's `resources/list` stayed
stale. Now the baseline is taken as the session or `subscriptions/listen` stream registers,
before its request is answered: any change after that is notified.

Real `skillbank serve --transport http --tokens FILE`, real MCP client sessions. The poll
interval is long (5 s) so that, without the fix, the change always lands before the scope's
first look; the notice is awaited, bounded, never slept for.
"""

from __future__ import annotations

import time
from contextlib import AsyncExitStack
from typing import Any, Callable

import anyio
import pytest

from mcp_http import call_ok, serving_principals

#: who -> (namespace, role, reads): eve's scope is nobody else's
PRINCIPALS = {"bob": ("bob", "contributor", ["team"]), "eve": ("eve", "contributor", [])}


@pytest.fixture(scope="module")
def served(tmp_path_factory: Any) -> Any:
    with serving_principals(tmp_path_factory.mktemp("notify-first"), PRINCIPALS,
                            SKILLBANK_MCP_POLL_SECONDS="5") as (url, tokens, _):
        yield url, tokens


async def session(stack: AsyncExitStack, url: str, token: str, mode: str,
                  handler: Callable[[Any], Any] | None = None) -> Any:
    import httpx2
    from mcp import Client
    from mcp.client.streamable_http import streamable_http_client

    http = await stack.enter_async_context(httpx2.AsyncClient(
        headers={"Authorization": f"Bearer {token}"}, timeout=120))
    return await stack.enter_async_context(Client(
        streamable_http_client(url + "/mcp", http_client=http), mode=mode,
        message_handler=handler))


async def until(condition: Callable[[], bool], what: str, seconds: float = 120) -> None:
    """Wait for `condition`, bounded (generous: a loaded machine)."""
    deadline = time.monotonic() + seconds
    while not condition():
        assert time.monotonic() < deadline, f"never saw {what}"
        await anyio.sleep(0.05)


async def save(client: Any, name: str) -> None:
    await call_ok(client, "save_skill", {"name": name, "description": f"The {name} skill",
                                         "body": f"# {name}\n\nDo it.\n"})


async def test_a_skill_saved_right_after_a_sessions_list_is_notified(served):
    url, tokens = served
    got: list[str] = []

    async def collect(message: Any) -> None:
        got.append(getattr(getattr(message, "root", message), "method", ""))

    async with AsyncExitStack() as stack:
        eve = await session(stack, url, tokens["eve"], "legacy", collect)
        bob = await session(stack, url, tokens["bob"], "legacy")
        listed = {str(r.uri) for r in (await eve.list_resources()).resources}
        await save(bob, "first-second")  # at once: before the thread's first look at eve's scope
        await until(lambda: "notifications/resources/list_changed" in got,
                    "eve's list change for a skill saved right after her resources/list")
        now = {str(r.uri) for r in (await eve.list_resources()).resources}
    assert "skill://first-second/SKILL.md" in now - listed


async def test_a_skill_saved_right_after_a_listen_stream_opens_is_notified(served):
    """A 2026-07-28 stream of a scope joining a thread that already polls another's."""
    url, tokens = served
    events: list[str] = []
    async with AsyncExitStack() as stack:
        bob = await session(stack, url, tokens["bob"], "legacy")  # the thread polls bob's scope
        eve = await session(stack, url, tokens["eve"], "auto")
        async with eve.listen(resources_list_changed=True) as stream, \
                anyio.create_task_group() as group:
            async def collect() -> None:
                async for event in stream:
                    events.append(type(event).__name__)
            group.start_soon(collect)
            await save(bob, "listened-at-once")
            await until(lambda: "ResourcesListChanged" in events,
                        "the list change on a stream opened just before the save")
            group.cancel_scope.cancel()
