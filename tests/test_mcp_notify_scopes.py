"""Change notifications follow each client's scope (hunt-mcpmany #2, session 24).

The change monitor's poll thread ran with no scope, so it saw the guideline topics of the
server's own namespace only: a token's new topic was listed by `resources/list` but never
announced with `notifications/resources/list_changed`, and a change to a topic its session had
`resources/subscribe`d to never sent `notifications/resources/updated` (skill changes did).
Now each client hears of what its own scope serves: its namespace and the ones it reads, and
never another namespace's topics, also when it subscribes to another namespace's topic URI.

Checked on a real `skillbank serve --transport http --tokens FILE` with real MCP client
sessions, handshake-era (`resources/subscribe`) and 2026-07-28 (`subscriptions/listen`).
Absence is checked without sleeping: a later change every session hears (a shared skill's
update) ends each session's window, and the notifications of one session arrive in order.
"""

from __future__ import annotations

import time
import uuid
from contextlib import AsyncExitStack, asynccontextmanager
from typing import Any, AsyncIterator, Callable

import anyio
import pytest

from mcp_http import call_ok, serving_principals

LIST = "notifications/resources/list_changed"
UPDATED = "notifications/resources/updated"
TOPIC = "skillbank://guidelines/"
MARKER = "skill://notify-marker/SKILL.md"
#: who -> (namespace, role, reads)
PRINCIPALS = {"alice": ("alice", "contributor", []), "bob": ("bob", "contributor", []),
              "carol": ("carol", "reader", ["team"]), "tess": ("team", "contributor", [])}


@pytest.fixture(scope="module")
def served(tmp_path_factory: Any) -> Any:
    """(url, tokens by principal) of a `skillbank serve --transport http --tokens FILE`."""
    with serving_principals(tmp_path_factory.mktemp("notify-scopes"), PRINCIPALS,
                            SKILLBANK_MCP_POLL_SECONDS="0.2") as (url, tokens, _):
        yield url, tokens


@asynccontextmanager
async def sessions(url: str, tokens: dict[str, str], mode: str,
                   got: dict[str, list[Any]]) -> AsyncIterator[dict[str, Any]]:
    """A real MCP client per principal, each with its bearer token; handshake-era (`legacy`)
    notifications are appended to `got[who]` in the order they arrive."""
    import httpx2
    from mcp import Client
    from mcp.client.streamable_http import streamable_http_client

    def collector(who: str) -> Callable[[Any], Any]:
        async def collect(message: Any) -> None:
            got[who].append(getattr(message, "root", message))
        return collect

    async with AsyncExitStack() as stack:
        clients = {}
        for who in got:
            http = await stack.enter_async_context(httpx2.AsyncClient(
                headers={"Authorization": f"Bearer {tokens[who]}"}, timeout=120))
            clients[who] = await stack.enter_async_context(Client(
                streamable_http_client(url + "/mcp", http_client=http), mode=mode,
                message_handler=collector(who) if mode == "legacy" else None))
        yield clients


def kinds(messages: list[Any]) -> list[tuple[str, str]]:
    """(method, uri) of each notification: a list change has no uri."""
    out = []
    for m in messages:
        method = getattr(m, "method", "") or type(m).__name__
        params = getattr(m, "params", None)
        out.append((method, str(getattr(params, "uri", "") or getattr(m, "uri", "") or "")))
    return out


async def until(condition: Callable[[], bool], what: str, *, again: Any = None,
                seconds: float = 180) -> None:
    """Wait for `condition` (generous: a loaded machine); `again`, when given, is awaited
    every few seconds meanwhile (a change repeated until every scope has had its first
    look, which is only a baseline)."""
    deadline = time.monotonic() + seconds
    last = time.monotonic()
    while not condition():
        assert time.monotonic() < deadline, f"never saw {what}"
        if again is not None and time.monotonic() - last > 3:
            await again()
            last = time.monotonic()
        await anyio.sleep(0.05)


def heard(got: list[Any], method: str, uri: str = "", since: int = 0) -> bool:
    return (method, uri) in kinds(got[since:])


def marker_saver(client: Any, label: str) -> Callable[[], Any]:
    """Saves a new version of the skill every scope sees, at each call: its update ends each
    session's window for what it must not hear."""
    version = 0

    async def save_marker() -> None:
        nonlocal version
        version += 1
        await call_ok(client, "save_skill", {
            "name": "notify-marker", "description": "A skill every scope sees",
            "body": f"# Marker\n\n{label} {version}\n"})
    return save_marker


async def test_handshake_sessions_hear_their_own_scope_only(served):
    url, tokens = served
    mine, team = "mine" + uuid.uuid4().hex[:6], "shared" + uuid.uuid4().hex[:6]
    got: dict[str, list[Any]] = {who: [] for who in PRINCIPALS}
    async with sessions(url, tokens, "legacy", got) as c:
        save_marker = marker_saver(c["tess"], "version")

        for who, client in c.items():  # every one also tries the others' topics
            for uri in (MARKER, TOPIC + mine, TOPIC + team):
                await client.session.subscribe_resource(uri)
        await save_marker()
        await until(lambda: all(heard(got[w], UPDATED, MARKER) for w in got),
                    "every session's first look (a marker update)", again=save_marker)
        start = {who: len(got[who]) for who in got}

        # alice's own new topic: a list change, then an update of the topic she subscribed to
        await call_ok(c["alice"], "add_guideline", {"text": f"Always rotate the {mine} keys.",
                                                    "topic": mine})
        await until(lambda: heard(got["alice"], LIST, since=start["alice"]), "alice's list change")
        await call_ok(c["alice"], "add_guideline", {"text": f"Never log the {mine} tokens.",
                                                    "topic": mine})
        await until(lambda: heard(got["alice"], UPDATED, TOPIC + mine, start["alice"]),
                    "the update of alice's topic")

        # a team topic: carol reads the team namespace (and tess writes it), alice does not
        await call_ok(c["tess"], "add_guideline", {"text": f"Review the {team} runbook.",
                                                   "topic": team})
        await until(lambda: heard(got["carol"], LIST, since=start["carol"]), "carol's list change")
        await call_ok(c["tess"], "add_guideline", {"text": f"Page the {team} owner first.",
                                                   "topic": team})
        await until(lambda: heard(got["carol"], UPDATED, TOPIC + team, start["carol"]),
                    "the update of the team topic for carol")

        # the end of every session's window: a change all of them hear
        marks = {who: len(got[who]) for who in got}
        await save_marker()
        await until(lambda: all(heard(got[w], UPDATED, MARKER, marks[w]) for w in got),
                    "the closing marker update")
    seen = {who: [k for k in kinds(got[who][start[who]:]) if k != (UPDATED, MARKER)]
            for who in got}
    assert seen["alice"] == [(LIST, ""), (UPDATED, TOPIC + mine)], seen
    assert seen["carol"] == [(LIST, ""), (UPDATED, TOPIC + team)], seen
    assert seen["tess"] == [(LIST, ""), (UPDATED, TOPIC + team)], seen
    assert seen["bob"] == [], seen  # was subscribed to both topics: never told of either


async def test_listen_streams_hear_their_own_scope_only(served):
    """2026-07-28 clients: a `subscriptions/listen` stream runs in its caller's scope."""
    url, tokens = served
    mine = "listened" + uuid.uuid4().hex[:6]
    events: dict[str, list[Any]] = {"alice": [], "bob": [], "tess": []}
    async with sessions(url, tokens, "auto", {w: [] for w in events}) as c:
        async with AsyncExitStack() as stack, anyio.create_task_group() as group:
            for who in events:
                stream = await stack.enter_async_context(c[who].listen(
                    resources_list_changed=True, resource_subscriptions=[MARKER, TOPIC + mine]))

                async def collect(stream: Any = stream, into: list[Any] = events[who]) -> None:
                    async for event in stream:
                        into.append(event)
                group.start_soon(collect)
            save_marker = marker_saver(c["tess"], "listened")

            await save_marker()
            await until(lambda: all(heard(events[w], "ResourceUpdated", MARKER) for w in events),
                        "every stream's first look (a marker update)", again=save_marker)
            start = {who: len(events[who]) for who in events}
            await call_ok(c["alice"], "add_guideline", {"text": f"Archive the {mine} logs.",
                                                        "topic": mine})
            await until(lambda: heard(events["alice"], "ResourcesListChanged",
                                      since=start["alice"]), "alice's list change")
            await call_ok(c["alice"], "add_guideline", {"text": f"Encrypt the {mine} backups.",
                                                        "topic": mine})
            await until(lambda: heard(events["alice"], "ResourceUpdated", TOPIC + mine,
                                      start["alice"]), "the update of alice's topic")
            marks = {who: len(events[who]) for who in events}
            await save_marker()
            await until(lambda: all(heard(events[w], "ResourceUpdated", MARKER, marks[w])
                                    for w in events), "the closing marker update")
            group.cancel_scope.cancel()
    seen = {who: [k for k in kinds(events[who][start[who]:]) if k != ("ResourceUpdated", MARKER)]
            for who in events}
    assert seen["alice"] == [("ResourcesListChanged", ""), ("ResourceUpdated", TOPIC + mine)], seen
    assert seen["bob"] == [] and seen["tess"] == [], seen
