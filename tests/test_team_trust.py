"""Per-principal trust on `skillbank server` (issue 24): a principal's own trust — its tokens-file
entry, its JWT's groups — decides whether its writes wait for a reviewer, with or without the
worker's `--trust`; `--trust` only makes callers without a principal (the static `--token`)
trusted, and never an untrusted principal.

Two real workers (without and with `--trust`) on a private PostgreSQL cluster and `chroma run`,
an OIDC issuer on loopback (tests/oidc_issuer.py), a hashed tokens file and a static token, all
through real MCP sessions.
"""

from __future__ import annotations

from typing import Any

from conftest import stop_process
from mcp_http import bearer_session, call, call_ok
from team_worker import start_server

STATIC = "static-worker-token"


async def _writes(url: str, token: str, word: str) -> tuple[str, bool, dict[str, Any]]:
    """(experience status, whether the rule is pending, the recorded experience)."""
    async with bearer_session(url, token, timeout=60) as client:
        exp = await call_ok(client, "record_experience", {
            "task": f"Rotate the {word} signing keys", "outcome": "success"})
        rule = await call_ok(client, "learn_from_critique", {
            "critique": f"Always announce a {word} key rotation in the ops channel.",
            "task": f"Rotate the {word} keys"})
    return exp["status"], bool(rule["pending_review"]), exp


async def test_a_principals_own_trust_decides_with_and_without_trust(
        tmp_path, issuer, chroma_server, postgres):
    from skillbank.mcp_server.identity import add_principal

    config = tmp_path / "auth.toml"
    config.write_text(issuer.config_toml(namespace_claim='"skillbank_namespace"'))
    tokens_file = tmp_path / "tokens.toml"
    carol = add_principal(tokens_file, "carol", namespace="carol", role="contributor")
    dave = add_principal(tokens_file, "dave", namespace="dave", role="contributor",
                         trusted=False)
    alice = issuer.token("alice", groups=["platform"])
    bot = issuer.token("bot", groups=["platform", "agents"])
    ci = issuer.token("ci", groups=["platform"], skillbank_namespace="team")  # writes the team's
    common = ("--auth-config", str(config), "--tokens", str(tokens_file), "--token", STATIC)

    plain, plain_url = start_server(tmp_path / "plain" / "root", chroma_server, postgres.url,
                                    *common)
    trusting = None
    try:
        trusting, trusting_url = start_server(tmp_path / "trusting" / "root", chroma_server,
                                              postgres.url, *common, "--trust")
        # Without --trust: trusted principals write active memory, untrusted ones pending.
        assert (await _writes(plain_url, alice, "Halvorsen"))[:2] == ("active", False)
        assert (await _writes(plain_url, carol, "Marrowvale"))[:2] == ("active", False)
        status, rule_pending, bots = await _writes(plain_url, bot, "Quillfeather")
        assert (status, rule_pending) == ("pending", True)
        assert (await _writes(plain_url, dave, "Tindersnap"))[:2] == ("pending", True)
        # ... and the static token (no principal of its own) stays untrusted.
        assert (await _writes(plain_url, STATIC, "Ashgrove"))[:2] == ("pending", True)

        # With --trust: untrusted principals stay untrusted; only the static token is trusted.
        assert (await _writes(trusting_url, bot, "Brindlecombe"))[:2] == ("pending", True)
        assert (await _writes(trusting_url, dave, "Cindervale"))[:2] == ("pending", True)
        assert (await _writes(trusting_url, alice, "Dunmarrow"))[:2] == ("active", False)
        assert (await _writes(trusting_url, STATIC, "Elderfen"))[:2] == ("active", False)

        # Untrusted input never changes trusted state: neither the untrusted agent nor the
        # static token of a worker without --trust approves the agent's pending experience.
        for token in (bot, STATIC):
            async with bearer_session(plain_url, token, timeout=60) as client:
                ok, refused = await call(client, "review_memory", {"id": bots["id"],
                                                                   "decision": "approve"})
                assert not ok and "Traceback" not in refused, refused
        assert (await _writes(plain_url, ci, "Jorvik"))[:2] == ("active", False)
        async with bearer_session(plain_url, bot, timeout=60) as agent:  # its vote is kept apart
            found = await call_ok(agent, "search_guidelines", {"task": "announce jorvik key "
                                                                       "rotation"})
            assert found["guidelines"], found
            voted = await call_ok(agent, "rate_memory", {"id": found["guidelines"][0]["id"],
                                                         "helpful": True})
            assert voted["counted"] is False, voted
        async with bearer_session(plain_url, alice, timeout=60) as on_a:
            ok, refused = await call(on_a, "forget", {"id": bots["id"]})
            assert not ok, refused  # a contributor forgets only in its own namespace
    finally:
        stop_process(plain)
        if trusting is not None:
            stop_process(trusting)
