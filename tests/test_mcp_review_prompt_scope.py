"""The `review_pending` prompt says what `list_pending` says of an empty queue
(hunt-mcp-longlived #4, session 31).

An untrusted HTTP session added a rule (`pending`); its `list_pending` said "Nothing this session
may review: pending items are shown only to whoever may decide on them …", but the
`review_pending` prompt told its model "Nothing in the memory waits for review. Tell the user
so." while 16 rules waited. Both now use one wording: "Nothing waits for review" only to a
session that may review, the `list_pending` sentence to any other (an untrusted server's
clients, an untrusted principal on a trusting server). Real MCP sessions over a bank opened here
and over a client of an owner process.
"""

from __future__ import annotations

import pytest
from mcp import Client

from owner_client import bank_for

MAY_NOT = "Nothing this session may review"


async def _prompt(client: Client) -> str:
    got = await client.get_prompt("review_pending", {})
    return got.messages[0].content.text


async def _note(client: Client) -> str:
    result = await client.call_tool("list_pending", {})
    assert not result.is_error, result.content[0].text
    return result.structured_content["note"]


@pytest.mark.parametrize("remote", [False, True], ids=["in-process", "client-of-owner"])
async def test_the_prompt_never_says_nothing_waits_to_a_session_that_may_not_review(
        tmp_path, remote):
    from skillbank import Scope, scope as scopes
    from skillbank.mcp_server import build_server
    from skillbank.mcp_server.identity import FACE

    # HTTP without --trust: the scope its guard sets for every client.
    visitor = Scope(principal="visitor", namespace="default", role="contributor",
                    trusted=False, face=FACE)
    # An untrusted principal of a tokens file: the server is built trusting, the scope decides.
    bot = Scope(principal="bot", namespace="default", role="contributor", trusted=False)
    with bank_for(tmp_path, remote) as bank:
        async with Client(build_server(bank, trusted=True)) as reviewer:
            assert await _note(reviewer) == "Nothing waits for review."
            assert await _prompt(reviewer) == "Nothing waits for review. Tell the user so."
        with scopes.using(visitor):
            async with Client(build_server(bank, trusted=False)) as untrusted:
                added = await untrusted.call_tool("add_guideline", {
                    "text": "Rotate the deploy keys every Monday."})
                assert added.structured_content["action"] == "pending"
                note = await _note(untrusted)
                assert note.startswith(MAY_NOT)
                # Before: "Nothing in the memory waits for review. Tell the user so."
                assert await _prompt(untrusted) == f"{note} Tell the user so."
        with scopes.using(bot):
            async with Client(build_server(bank, trusted=True)) as client:
                assert (await _note(client)).startswith(MAY_NOT)
                assert (await _prompt(client)).startswith(MAY_NOT)
        async with Client(build_server(bank, trusted=True)) as reviewer:
            assert "Rotate the deploy keys" in await _prompt(reviewer)
