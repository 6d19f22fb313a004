"""`skillbank://stats` says the caller's own trust (hunt-untrusted #5, session 27).

On a `--tokens` server every session's stats said `"trusted_clients": true`, the untrusted
tokens' too, whose writes wait for review and whose votes are not counted: a server with
principals is built trusting and each principal's scope decides, but stats reported the
server-wide flag. `server.caller_trusted` is now the session's own trust, as what its writes
do shows: tokens-file principals, the static `--token` (trusted only with `--trust`) and stdio.
Real `skillbank serve` processes and real MCP sessions; in process too, over a bank opened
here and over a client of another process that owns the root.
"""

from __future__ import annotations

import json
from typing import Any

import pytest

from mcp_http import bearer_session, call_ok
from owner_client import bank_for
from test_mcp_trust import stdio_session
from test_scope_faces import http_server

STATIC = "static-stats-token"


async def _caller_trusted(client: Any) -> bool:
    read = await client.read_resource("skillbank://stats")
    return json.loads(read.contents[0].text)["server"]["caller_trusted"]


async def _as(url: str, token: str, word: str) -> tuple[bool, str]:
    """(what stats says, what a write of this caller did: 'active' or 'pending')."""
    async with bearer_session(url, token, timeout=60) as client:
        said = await _caller_trusted(client)
        added = await call_ok(client, "add_guideline", {
            "text": f"Announce every {word} key rotation in the ops channel."})
    return said, added["action"] if added["action"] == "pending" else "active"


@pytest.mark.slow  # two server processes and a stdio session
async def test_stats_says_each_callers_own_trust(tmp_path):
    from skillbank.mcp_server.identity import add_principal

    tokens = tmp_path / "tokens.toml"
    carol = add_principal(tokens, "carol", namespace="carol", role="contributor")
    dave = add_principal(tokens, "dave", namespace="dave", role="contributor", trusted=False)
    rita = add_principal(tokens, "rita", namespace="rita", role="reviewer", trusted=False)
    for name in ("plain", "trusting"):
        (tmp_path / name).mkdir()

    plain = tmp_path / "plain" / "root"
    async with http_server(plain, tokens, "--token", STATIC) as url:
        assert await _as(url, carol, "Ashgrove") == (True, "active")
        assert await _as(url, dave, "Marrowvale") == (False, "pending")
        assert await _as(url, rita, "Tindersnap") == (False, "pending")
        assert await _as(url, STATIC, "Elderfen") == (False, "pending")
        async with stdio_session(plain) as local:  # the local user, a client of the server
            assert await _caller_trusted(local) is True

    async with http_server(tmp_path / "trusting" / "root", tokens, "--token", STATIC,
                           "--trust") as url:
        assert await _as(url, STATIC, "Cindervale") == (True, "active")
        assert await _as(url, dave, "Quillmoor") == (False, "pending")


@pytest.mark.parametrize("remote", [False, True], ids=["in-process", "client-of-owner"])
async def test_stats_in_process_follow_the_active_scope(tmp_path, remote):
    from mcp import Client

    from skillbank import Scope, scope as scopes
    from skillbank.mcp_server import build_server

    untrusted = Scope(principal="bot", namespace="team", role="contributor", trusted=False)
    with bank_for(tmp_path, remote) as bank:
        async with Client(build_server(bank, trusted=True)) as client:
            assert await _caller_trusted(client) is True
        with scopes.using(untrusted):  # the scope a guard sets for an untrusted principal
            async with Client(build_server(bank, trusted=True)) as client:
                assert await _caller_trusted(client) is False
        async with Client(build_server(bank, trusted=False)) as client:
            assert await _caller_trusted(client) is False
