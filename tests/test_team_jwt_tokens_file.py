"""OIDC/JWT beside the hashed tokens file, and the edges of a JWT's verification (hunt-oidc,
session 26).

- A principal removed from the tokens file (or whose `reads` an edit narrows) kept reading and
  writing for up to 60 s once OIDC was on: every admitted verdict was cached, tokens-file ones
  too (#4). Without OIDC a removal took effect at once; now with it as well.
- A JWT whose principal is a tokens-file principal's name acted as that principal and
  overwrote its skill (#7): it is refused, naming the clash.
- A JWT whose header `alg` does not fit its `kid`'s key type was an unauthenticated HTTP 500
  with a traceback (#1): a 401 saying why.
- A token expired within the documented 30 s of clock skew got the SDK's bare
  "Authentication required" (#2): it is admitted, as PyJWT admits it.
- `Authorization: Bearer  <token>` (two spaces) got a bare 401 with OIDC on while a worker
  without OIDC took it (#10): taken, as without OIDC.

A test issuer on loopback (tests/oidc_issuer.py), a real tokens file, and a real worker process
over a private PostgreSQL cluster and `chroma run`, with real MCP sessions.
"""

from __future__ import annotations

import base64
import dataclasses
import json
import time
from pathlib import Path
from typing import Any

import httpx
import pytest

from conftest import stop_process
from mcp_http import bearer_session, call
from oidc_issuer import Issuer
from team_worker import start_server

pytest.importorskip("psycopg")

TEAM_TASK = "Restore the Quorvane replica from the nightly backup"


def narrow_reads(tokens_file: Path, name: str) -> None:
    """Rewrite `name`'s entry without its `reads`, as an admin edits the file."""
    from skillbank.fsutil import atomic_write
    from skillbank.mcp_server.identity import read_for_change, render

    current = read_for_change(tokens_file)
    current[name] = dataclasses.replace(current[name], reads=())
    atomic_write(tokens_file, render(list(current.values()), as_json=False), mode=0o600)


def mismatched(issuer: Issuer, alg: str) -> str:
    """A token whose header names `alg` but the issuer's RSA key id (no valid signature)."""
    def part(value: dict[str, Any]) -> str:
        return base64.urlsafe_b64encode(json.dumps(value).encode()).rstrip(b"=").decode()

    claims = {"iss": issuer.url, "aud": "skillbank", "sub": "mallory",
              "exp": int(time.time()) + 600}
    return f"{part({'alg': alg, 'kid': issuer.kid, 'typ': 'at+jwt'})}.{part(claims)}.AAAA"


def post(url: str, authorization: str) -> httpx.Response:
    return httpx.post(url + "/mcp", json={"jsonrpc": "2.0", "id": 1, "method": "ping"},
                      headers={"Authorization": authorization,
                               "Accept": "application/json, text/event-stream"}, timeout=60)


# ------------------------------------------------------------------------- the verifier alone


async def test_a_tokens_file_edit_takes_effect_at_once_beside_oidc(issuer, tmp_path):
    from skillbank.mcp_server.identity import TokensFile, add_principal, remove_principal
    from skillbank.team.auth import Admitted, Refusal, TeamIdentity, load_oidc

    config = tmp_path / "auth.toml"
    config.write_text(issuer.config_toml())
    tokens_file = tmp_path / "tokens.toml"
    dave = add_principal(tokens_file, "dave", namespace="dave", role="contributor")
    gina = add_principal(tokens_file, "gina", namespace="gina", role="reader", reads=["team"])
    identity = TeamIdentity(oidc=load_oidc(config, {}), tokens=TokensFile(tokens_file))
    for _ in range(2):  # the guard's question, then the SDK's
        assert isinstance(await identity.acheck_token(dave), Admitted)
        assert (await identity.acheck_token(gina)).scope.reads == ("team",)
    remove_principal(tokens_file, "dave")
    narrow_reads(tokens_file, "gina")
    refused = await identity.acheck_token(dave)
    assert isinstance(refused, Refusal) and "unknown bearer token" in refused.reason, refused
    assert (await identity.acheck_token(gina)).scope.reads == ()


async def test_a_jwt_named_like_a_tokens_file_principal_is_refused(issuer, tmp_path):
    from skillbank.mcp_server.identity import TokensFile, add_principal
    from skillbank.team.auth import Admitted, Refusal, TeamIdentity, load_oidc

    config = tmp_path / "auth.toml"
    config.write_text(issuer.config_toml(namespace_claim='"skillbank_namespace"'))
    tokens_file = tmp_path / "tokens.toml"
    add_principal(tokens_file, "erin", namespace="ops-erin", role="contributor")
    identity = TeamIdentity(oidc=load_oidc(config, {}), tokens=TokensFile(tokens_file))
    # A namespace claim of its own does not make the name another identity's.
    token = issuer.token("erin", groups=["platform"], skillbank_namespace="erin-idp")
    for verdict in (identity.check_token(token), await identity.acheck_token(token)):
        assert isinstance(verdict, Refusal) and verdict.status == 401, verdict
        assert "'erin'" in verdict.reason and "tokens file" in verdict.reason, verdict.reason
    frank = issuer.token("frank", groups=["platform"])
    assert isinstance(await identity.acheck_token(frank), Admitted)  # cached from now on
    add_principal(tokens_file, "frank", namespace="frank-ops", role="reader")
    assert isinstance(await identity.acheck_token(frank), Refusal)  # at once, cache or not


@pytest.mark.parametrize("gone", ["moved", "truncated"])
async def test_the_name_stays_reserved_while_the_tokens_file_is_away(issuer, tmp_path, gone):
    """Review, session 26: while the file was missing (a non-atomic replace) or empty (an
    editor saving in place), the file named no principal, so a JWT named `erin` was admitted
    as erin. Fails before."""
    from skillbank.mcp_server.identity import TokensFile, add_principal
    from skillbank.team.auth import Refusal, TeamIdentity, load_oidc

    config = tmp_path / "auth.toml"
    config.write_text(issuer.config_toml())
    tokens_file = tmp_path / "tokens.toml"
    add_principal(tokens_file, "erin", namespace="erin", role="contributor")
    identity = TeamIdentity(oidc=load_oidc(config, {}), tokens=TokensFile(tokens_file))
    token = issuer.token("erin", groups=["platform"])
    assert isinstance(await identity.acheck_token(token), Refusal)
    kept = tokens_file.read_bytes()
    if gone == "moved":
        tokens_file.rename(tmp_path / "tokens.toml.tmp")
    else:
        tokens_file.write_bytes(b"")
    verdict = await identity.acheck_token(token)
    assert isinstance(verdict, Refusal) and "'erin'" in verdict.reason, verdict
    tokens_file.write_bytes(kept)
    assert isinstance(await identity.acheck_token(token), Refusal)


@pytest.mark.parametrize("alg", ["ES256", "EdDSA"])
def test_a_jwt_whose_alg_does_not_fit_its_key_is_a_401_saying_so(issuer, tmp_path, alg):
    from skillbank.team.auth import Refusal, TeamIdentity, load_oidc

    config = tmp_path / "auth.toml"
    config.write_text(issuer.config_toml())
    verdict = TeamIdentity(oidc=load_oidc(config, {})).check_token(mismatched(issuer, alg))
    assert isinstance(verdict, Refusal) and verdict.status == 401, verdict
    assert f"alg {alg}" in verdict.reason and "does not fit" in verdict.reason, verdict.reason


async def test_a_token_within_the_clock_skew_is_admitted_until_exp_plus_leeway(issuer, tmp_path):
    from skillbank.team.auth import Admitted, TeamIdentity, load_oidc

    config = tmp_path / "auth.toml"
    config.write_text(issuer.config_toml())
    identity = TeamIdentity(oidc=load_oidc(config, {}))
    token = issuer.token("alice", lifetime=-10)
    exp = json.loads(base64.urlsafe_b64decode(token.split(".")[1] + "=="))["exp"]
    verdict = await identity.acheck_token(token)
    assert isinstance(verdict, Admitted), verdict
    assert verdict.access.expires_at == exp + 30 and verdict.standing() is verdict.scope


async def test_the_sdks_question_takes_the_token_after_two_spaces(issuer, tmp_path):
    """The SDK's bearer check passes what follows 'Bearer ' (here ' <token>') to
    `verify_token`; the guard strips it, so the two must agree."""
    from skillbank.mcp_server.identity import TokensFile, add_principal
    from skillbank.team.auth import TeamIdentity, load_oidc

    config = tmp_path / "auth.toml"
    config.write_text(issuer.config_toml())
    tokens_file = tmp_path / "tokens.toml"
    carol = add_principal(tokens_file, "carol", namespace="carol", role="contributor")
    identity = TeamIdentity(oidc=load_oidc(config, {}), tokens=TokensFile(tokens_file))
    for token, who in ((issuer.token("alice"), "alice"), (carol, "carol")):
        access = await identity.verify_token(" " + token)
        assert access is not None and access.subject == who, (who, access)


# ------------------------------------------------------------------- the worker, end to end


async def test_jwt_and_tokens_file_edges_on_a_team_worker(tmp_path, issuer, chroma_server,
                                                           postgres):
    from skillbank.mcp_server.identity import add_principal, remove_principal

    config = tmp_path / "auth.toml"
    config.write_text(issuer.config_toml(namespace_claim='"skillbank_namespace"'))
    tokens_file = tmp_path / "tokens.toml"
    dave = add_principal(tokens_file, "dave", namespace="dave", role="contributor")
    gina = add_principal(tokens_file, "gina", namespace="gina", role="reader", reads=["team"])
    erin = add_principal(tokens_file, "erin", namespace="ops-erin", role="contributor")
    proc, url = start_server(tmp_path / "root", chroma_server, postgres.url, "--trust",
                             "--auth-config", str(config), "--tokens", str(tokens_file))
    try:
        ci = issuer.token("ci", groups=["platform"], skillbank_namespace="team")
        async with bearer_session(url, ci) as team:
            ok, team_exp = await call(team, "record_experience", {"task": TEAM_TASK,
                                                                  "outcome": "success"})
            assert ok, team_exp

        # #4: removal and narrowing take effect at once (no 60 s of cached verdicts).
        async with bearer_session(url, dave) as on_d:
            ok, recorded = await call(on_d, "record_experience", {"task": "Deploy before removal",
                                                                  "outcome": "success"})
            assert ok, recorded
        async with bearer_session(url, gina) as on_g:
            ok, found = await call(on_g, "recall_experiences", {"task": TEAM_TASK})
            assert ok and team_exp["id"] in json.dumps(found), found
        remove_principal(tokens_file, "dave")
        narrow_reads(tokens_file, "gina")
        refused = post(url, f"Bearer {dave}")
        assert refused.status_code == 401 and "unknown bearer token" in refused.text, refused.text
        async with bearer_session(url, gina) as on_g:
            ok, found = await call(on_g, "recall_experiences", {"task": TEAM_TASK})
            assert ok and team_exp["id"] not in json.dumps(found), found

        # #7: a JWT named like a tokens-file principal does not act as it.
        skill = {"name": "deploy-checklist", "description": "Checklist for deploys",
                 "body": "1. Tag the release.\n2. Deploy."}
        async with bearer_session(url, erin) as on_e:
            ok, saved = await call(on_e, "save_skill", skill)
            assert ok, saved
        impostor = issuer.token("erin", groups=["platform"], skillbank_namespace="erin-idp")
        refused = post(url, f"Bearer {impostor}")
        assert refused.status_code == 401, refused.text
        assert "tokens file" in refused.json()["error"]["message"], refused.text
        async with bearer_session(url, erin) as on_e:
            ok, loaded = await call(on_e, "load_skill", {"name": "deploy-checklist"})
            assert ok and "Tag the release" in json.dumps(loaded), loaded

        # #1: alg that does not fit the key: a 401 saying why, not a 500.
        for alg in ("ES256", "EdDSA"):
            answer = post(url, f"Bearer {mismatched(issuer, alg)}")
            assert answer.status_code == 401, (alg, answer.status_code, answer.text)
            assert "does not fit" in answer.json()["error"]["message"], answer.text
            assert "does not fit" in answer.headers["www-authenticate"]

        # #2: expired 10 s ago, within the 30 s leeway: admitted through the SDK's check too.
        async with bearer_session(url, issuer.token("alice", lifetime=-10)) as late:
            ok, found = await call(late, "recall_experiences", {"task": TEAM_TASK})
            assert ok, found

        # #10: two spaces after the scheme, a JWT and a tokens-file token alike.
        for token in (issuer.token("alice", groups=["platform"]), gina):
            async with bearer_session(url, " " + token) as spaced:
                ok, found = await call(spaced, "recall_experiences", {"task": TEAM_TASK})
                assert ok, found

        # hunt-oidc #3, session 37: an IdP account named like the worker's own namespace
        # ("default": the CLI's, the static token's, migrated memory) does not own it; the
        # identity provider's namespace claim still may name it.
        refused = post(url, f"Bearer {issuer.token('default', groups=['platform'])}")
        assert refused.status_code == 401, refused.text
        assert "worker's own namespace" in refused.json()["error"]["message"], refused.text
        admin = issuer.token("ops-admin", skillbank_namespace="default")
        async with bearer_session(url, admin) as on_default:
            ok, found = await call(on_default, "recall_experiences", {"task": TEAM_TASK})
            assert ok, found
    finally:
        stop_process(proc)
