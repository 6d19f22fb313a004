"""A revoked or narrowed principal hears nothing more than it may read now (hunt-team #1, session 25).

The guard checks a bearer token on each request, but what outlives a request kept the scope it
started with: after `skillbank tokens remove dave`, dave's open 2026-07-28 `subscriptions/listen`
stream (and a handshake-era session's stream, after `resources/subscribe`) went on receiving
list changes and updates with the topic names of the team namespace dave no longer reads; an
edit narrowing a principal's `reads` was likewise ignored by its open streams.

Checked on a real `skillbank serve --transport http --tokens FILE` with real MCP clients: the
removed principal's listen stream is ended, a removed principal's session hears nothing more,
and a narrowed principal hears no more of the namespace taken from it, while a member still
reading the team hears every change (which also ends the window for what the others must not
hear: one delivery round serves them all).
"""

from __future__ import annotations

import dataclasses
import uuid
from contextlib import AsyncExitStack
from typing import Any

import anyio
import pytest

from mcp_http import call_ok, serving_principals
from test_mcp_notify_scopes import LIST, MARKER, TOPIC, UPDATED, heard, kinds, marker_saver, \
    sessions, until

#: who -> (namespace, role, reads)
PRINCIPALS = {"tess": ("team", "contributor", []), "carol": ("carol", "reader", ["team"]),
              "dave": ("dave", "contributor", ["team"]), "nina": ("nina", "reader", ["team"]),
              "erin": ("erin", "contributor", ["team"]), "fran": ("fran", "reader", ["team"]),
              "gina": ("gina", "reader", ["team"]), "hana": ("hana", "reader", ["team"])}


@pytest.fixture(scope="module")
def served(tmp_path_factory: Any) -> Any:
    """(url, tokens by principal, tokens file) of a `skillbank serve --tokens FILE`."""
    with serving_principals(tmp_path_factory.mktemp("revoked-streams"), PRINCIPALS,
                            SKILLBANK_MCP_POLL_SECONDS="0.2") as serving:
        yield serving


def narrow(tokens_file: Any, who: str) -> None:
    """Edit the tokens file as an admin would: `who` keeps its token, reads no more."""
    from skillbank.fsutil import atomic_write
    from skillbank.mcp_server.identity import read_for_change, render

    current = read_for_change(tokens_file)
    current[who] = dataclasses.replace(current[who], reads=())
    atomic_write(tokens_file, render(list(current.values()), as_json=False), mode=0o600)


def revoke(tokens_file: Any, who: str) -> None:
    from skillbank.mcp_server.identity import remove_principal

    remove_principal(tokens_file, who)


async def test_listen_streams_of_removed_and_narrowed_principals(served):
    url, tokens, tokens_file = served
    team = "listened" + uuid.uuid4().hex[:6]
    who = ("tess", "carol", "dave", "nina")
    events: dict[str, list[Any]] = {w: [] for w in who}
    ended: set[str] = set()
    async with sessions(url, tokens, "auto", {w: [] for w in who}) as c:
        async with AsyncExitStack() as stack, anyio.create_task_group() as group:
            for w in who:
                stream = await stack.enter_async_context(c[w].listen(
                    resources_list_changed=True, resource_subscriptions=[MARKER, TOPIC + team]))

                async def collect(stream: Any = stream, w: str = w) -> None:
                    async for event in stream:
                        events[w].append(event)
                    ended.add(w)
                group.start_soon(collect)
            save_marker = marker_saver(c["tess"], "revoked")
            await save_marker()
            await until(lambda: all(heard(events[w], "ResourceUpdated", MARKER) for w in who),
                        "every stream's first look (a marker update)", again=save_marker)

            revoke(tokens_file, "dave")
            narrow(tokens_file, "nina")
            start = {w: len(events[w]) for w in who}
            await until(lambda: "dave" in ended, "the end of the removed principal's stream")

            await call_ok(c["tess"], "add_guideline", {"text": f"Rotate the {team} keys.",
                                                       "topic": team})
            await until(lambda: heard(events["carol"], "ResourcesListChanged",
                                      since=start["carol"]), "carol's list change")
            await call_ok(c["tess"], "add_guideline", {"text": f"Page the {team} owner.",
                                                       "topic": team})
            await until(lambda: heard(events["carol"], "ResourceUpdated", TOPIC + team,
                                      start["carol"]), "the update of the team topic for carol")
            marks = {w: len(events[w]) for w in who}
            await save_marker()
            await until(lambda: all(heard(events[w], "ResourceUpdated", MARKER, marks[w])
                                    for w in ("tess", "carol", "nina")), "the closing marker")
            group.cancel_scope.cancel()
    seen = {w: [k for k in kinds(events[w][start[w]:]) if k != ("ResourceUpdated", MARKER)]
            for w in who}
    assert seen["carol"] == [("ResourcesListChanged", ""), ("ResourceUpdated", TOPIC + team)], seen
    assert seen["dave"] == [] and "tess" not in ended and "carol" not in ended, (seen, ended)
    assert kinds(events["dave"][start["dave"]:]) == [], events["dave"]  # not even the marker
    assert seen["nina"] == [] and "nina" not in ended, (seen, ended)  # still hears her own


async def test_handshake_sessions_of_removed_and_narrowed_principals(served):
    url, tokens, tokens_file = served
    team = "shaken" + uuid.uuid4().hex[:6]
    who = ("tess", "carol", "erin", "fran")
    got: dict[str, list[Any]] = {w: [] for w in who}
    async with sessions(url, tokens, "legacy", got) as c:
        save_marker = marker_saver(c["tess"], "shaken")
        for w in who:
            for uri in (MARKER, TOPIC + team):
                await c[w].session.subscribe_resource(uri)
        await save_marker()
        await until(lambda: all(heard(got[w], UPDATED, MARKER) for w in who),
                    "every session's first look (a marker update)", again=save_marker)

        revoke(tokens_file, "erin")
        narrow(tokens_file, "fran")
        start = {w: len(got[w]) for w in who}
        await call_ok(c["tess"], "add_guideline", {"text": f"Review the {team} runbook.",
                                                   "topic": team})
        await until(lambda: heard(got["carol"], LIST, since=start["carol"]), "carol's list change")
        await call_ok(c["tess"], "add_guideline", {"text": f"Drain the {team} queue.",
                                                   "topic": team})
        await until(lambda: heard(got["carol"], UPDATED, TOPIC + team, start["carol"]),
                    "the update of the team topic for carol")
        marks = {w: len(got[w]) for w in who}
        await save_marker()
        await until(lambda: all(heard(got[w], UPDATED, MARKER, marks[w])
                                for w in ("tess", "carol", "fran")), "the closing marker")
        seen = {w: [k for k in kinds(got[w][start[w]:]) if k != (UPDATED, MARKER)] for w in who}
        assert seen["carol"] == [(LIST, ""), (UPDATED, TOPIC + team)], seen
        assert kinds(got["erin"][start["erin"]:]) == [], got["erin"]  # nothing, not even the marker
        assert seen["fran"] == [], seen


async def tokens_file_away(tokens_file: Any, how: str = "moved") -> None:
    """The tokens file gone (a non-atomic replace) or empty (an editor saving in place) for a
    few polls, then back with the same tokens."""
    away = tokens_file.with_name(tokens_file.name + ".away")
    kept = tokens_file.read_bytes()
    if how == "moved":
        tokens_file.rename(away)
    else:
        tokens_file.write_bytes(b"")
    try:
        await anyio.sleep(1.5)  # several 0.2 s polls see no principal
    finally:
        if how == "moved":
            away.rename(tokens_file)
        else:
            tokens_file.write_bytes(kept)


@pytest.mark.parametrize("how", ["moved", "truncated"])
async def test_a_session_outlives_a_moment_without_the_tokens_file(served, how):
    """Review F4, session 25: one poll without the file dropped every handshake session's
    subscriptions for good (the session stayed open and heard nothing more once the file was
    back); an empty file (truncated by an in-place save) did the same (review, session 26).
    Now it is muted meanwhile, not dropped. Fails before: gina heard no update."""
    url, tokens, tokens_file = served
    team = "away" + uuid.uuid4().hex[:6]
    got: dict[str, list[Any]] = {w: [] for w in ("tess", "gina")}
    async with sessions(url, tokens, "legacy", got) as c:
        save_marker = marker_saver(c["tess"], "away")
        for uri in (MARKER, TOPIC + team):
            await c["gina"].session.subscribe_resource(uri)
        await save_marker()
        await until(lambda: heard(got["gina"], UPDATED, MARKER), "gina's first look",
                    again=save_marker)
        await tokens_file_away(tokens_file, how)
        start = len(got["gina"])

        async def add_rule() -> None:
            await call_ok(c["tess"], "add_guideline", {
                "text": f"Label the {team} tickets {uuid.uuid4().hex[:4]}.", "topic": team})
        await add_rule()
        await until(lambda: heard(got["gina"], UPDATED, TOPIC + team, start),
                    "gina hearing the team topic again", again=add_rule, seconds=60)


async def test_a_listen_stream_outlives_a_moment_without_the_tokens_file(served):
    """The same for a 2026-07-28 listen stream: it was ended as if its caller were revoked."""
    url, tokens, tokens_file = served
    team = "gone" + uuid.uuid4().hex[:6]
    events: list[Any] = []
    ended = anyio.Event()
    async with sessions(url, tokens, "auto", {"tess": [], "hana": []}) as c:
        async with c["hana"].listen(resources_list_changed=True,
                                    resource_subscriptions=[MARKER, TOPIC + team]) as stream, \
                anyio.create_task_group() as group:
            async def collect() -> None:
                async for event in stream:
                    events.append(event)
                ended.set()
            group.start_soon(collect)
            save_marker = marker_saver(c["tess"], "gone")
            await save_marker()
            await until(lambda: heard(events, "ResourceUpdated", MARKER), "hana's first look",
                        again=save_marker)
            await tokens_file_away(tokens_file)
            start = len(events)

            async def add_rule() -> None:
                await call_ok(c["tess"], "add_guideline", {
                    "text": f"Tag the {team} alerts {uuid.uuid4().hex[:4]}.", "topic": team})
            await add_rule()
            await until(lambda: heard(events, "ResourceUpdated", TOPIC + team, start)
                        or ended.is_set(), "hana hearing the team topic again", again=add_rule,
                        seconds=60)
            assert not ended.is_set(), "the stream was ended while the tokens file was away"
            group.cancel_scope.cancel()


async def test_a_team_workers_listen_stream_ends_when_its_token_is_removed(
        tmp_path, chroma_server, postgres):
    """The same on a `skillbank server` team worker (its identity: the tokens file beside OIDC)."""
    from conftest import stop_process
    from mcp_http import bearer_session
    from skillbank.mcp_server.identity import add_principal
    from team_worker import start_server

    tokens_file = tmp_path / "tokens.toml"
    tess = add_principal(tokens_file, "tess", namespace="team", role="contributor")
    dave = add_principal(tokens_file, "dave", namespace="dave", role="contributor",
                         reads=["team"])
    topic = "worker" + uuid.uuid4().hex[:6]
    proc, url = start_server(tmp_path / "root", chroma_server, postgres.url, "--tokens",
                             str(tokens_file), "--trust")
    events: list[Any] = []
    ended = anyio.Event()
    try:
        async with bearer_session(url, tess) as writer, bearer_session(url, dave) as reader, \
                reader.listen(resources_list_changed=True,
                              resource_subscriptions=[TOPIC + topic]) as stream, \
                anyio.create_task_group() as group:
            async def collect() -> None:
                async for event in stream:
                    events.append(event)
                ended.set()
            group.start_soon(collect)
            rules = 0

            async def add_rule() -> None:
                nonlocal rules
                rules += 1
                await call_ok(writer, "add_guideline", {
                    "text": f"Check the {topic} owner before step {rules}.", "topic": topic})
            await add_rule()
            await until(lambda: heard(events, "ResourceUpdated", TOPIC + topic),
                        "dave hearing the team topic", again=add_rule)
            revoke(tokens_file, "dave")
            await until(ended.is_set, "the end of dave's stream")
            group.cancel_scope.cancel()
    finally:
        stop_process(proc)
