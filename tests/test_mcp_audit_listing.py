"""`skillbank://audit` is served only where reviewers can exist (hunt-mcp-longlived #5,
session 31).

An HTTP server without --trust and without a tokens file listed `skillbank://audit` in
`resources/list`, and every read failed "skillbank://audit is for reviewers; untrusted:mcp-http
is an untrusted contributor": on such a server every client is that principal, so the resource
was a ghost. `register_audit` now registers it only on a server built trusting (stdio, --trust,
or a tokens file whose principals' own scopes decide). Real MCP sessions over a bank opened here
and over a client of an owner process.
"""

from __future__ import annotations

import json

import pytest
from mcp import Client

from owner_client import bank_for

AUDIT = "skillbank://audit"


async def _listed(client: Client) -> set[str]:
    return {str(r.uri) for r in (await client.list_resources()).resources}


@pytest.mark.parametrize("remote", [False, True], ids=["in-process", "client-of-owner"])
async def test_audit_is_listed_only_where_a_reviewer_may_read_it(tmp_path, remote):
    from skillbank import Scope, scope as scopes
    from skillbank.mcp_server import build_server
    from skillbank.mcp_server.identity import FACE

    visitor = Scope(principal="visitor", namespace="default", role="contributor",
                    trusted=False, face=FACE)
    bot = Scope(principal="bot", namespace="default", role="contributor", trusted=False)
    with bank_for(tmp_path, remote) as bank:
        eid = bank.experiences.record(task="Rotate the keys", outcome="success")
        with scopes.using(visitor):  # HTTP without --trust: every client is untrusted
            async with Client(build_server(bank, trusted=False)) as untrusted:
                assert AUDIT not in await _listed(untrusted)  # before: listed, never readable
                with pytest.raises(Exception, match="skillbank://audit"):
                    await untrusted.read_resource(AUDIT)
        async with Client(build_server(bank, trusted=True)) as reviewer:
            assert AUDIT in await _listed(reviewer)
            read = await reviewer.read_resource(AUDIT)
            assert eid in [e["id"] for e in json.loads(read.contents[0].text)["events"]]
        with scopes.using(bot):  # a tokens-file server: listed, each read checks the caller
            async with Client(build_server(bank, trusted=True)) as contributor:
                assert AUDIT in await _listed(contributor)
                with pytest.raises(Exception, match="for reviewers"):
                    await contributor.read_resource(AUDIT)
