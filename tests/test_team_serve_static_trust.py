"""`skillbank serve --transport http --tokens FILE --token T` and the static token's trust
(#24 review): the same rule as a team worker's (tests/test_team_trust.py). A principal from
the tokens file is as trusted as its entry says; a request carrying only the static `--token`
has no principal of its own, so it is trusted only with `--trust` — before, the tokens file
made the whole server trusting, and the static token wrote active memory (and could approve
pending items) in the local user's admin scope without `--trust`. Real `skillbank serve`
processes on embedded roots, real MCP sessions.
"""

from __future__ import annotations

from mcp_http import bearer_session, call, call_ok
from test_scope_faces import http_server

STATIC = "static-serve-token"


async def _writes(url: str, token: str, word: str) -> tuple[str, bool, dict]:
    async with bearer_session(url, token, timeout=60) as client:
        exp = await call_ok(client, "record_experience", {
            "task": f"Rotate the {word} signing keys", "outcome": "success"})
        rule = await call_ok(client, "learn_from_critique", {
            "critique": f"Always announce a {word} key rotation in the ops channel.",
            "task": f"Rotate the {word} keys"})
    return exp["status"], bool(rule["pending_review"]), exp


async def test_the_static_token_is_trusted_only_with_trust(tmp_path):
    from skillbank.mcp_server.identity import add_principal

    tokens = tmp_path / "tokens.toml"
    carol = add_principal(tokens, "carol", namespace="carol", role="contributor")
    dave = add_principal(tokens, "dave", namespace="dave", role="contributor", trusted=False)
    for name in ("plain", "trusting"):
        (tmp_path / name).mkdir()

    async with http_server(tmp_path / "plain" / "root", tokens, "--token", STATIC) as url:
        assert (await _writes(url, STATIC, "Ashgrove"))[:2] == ("pending", True)
        assert (await _writes(url, carol, "Marrowvale"))[:2] == ("active", False)
        status, pending, daves = await _writes(url, dave, "Tindersnap")
        assert (status, pending) == ("pending", True)
        async with bearer_session(url, STATIC, timeout=60) as client:  # untrusted: no approval
            ok, refused = await call(client, "review_memory", {"id": daves["id"],
                                                               "decision": "approve"})
            assert not ok and "Traceback" not in refused, refused

    async with http_server(tmp_path / "trusting" / "root", tokens, "--token", STATIC,
                           "--trust") as url:
        assert (await _writes(url, STATIC, "Elderfen"))[:2] == ("active", False)
        assert (await _writes(url, dave, "Cindervale"))[:2] == ("pending", True)
