"""OIDC/JWT identity per request on `skillbank server` (issue 24, item 5).

A test issuer on loopback (tests/oidc_issuer.py: an RSA key generated here, its JWKS served over
HTTP) signs tokens; the worker verifies them with PyJWT against that JWKS through the MCP SDK's
`TokenVerifier`/`AuthSettings`. Claims give the principal and namespace, groups the role and
shared namespaces. The scope matrix of tests/test_scope.py's shape runs with JWT principals on a
real worker (private PostgreSQL, `chroma run`, real MCP sessions); expired, foreign, wrong-audience
and unsigned tokens are 401s with their reason, never a 500; the hashed tokens file works beside.
"""

from __future__ import annotations

import json
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import httpx
import pytest

from conftest import stop_process
from mcp_http import bearer_session, call, team_env
from oidc_issuer import AUDIENCE, Issuer, new_key, unsigned
from team_worker import start_server

A_TASK = "Rotate the Halvorsen signing keys of the billing cluster"
A_RULE = "Always page the Marrowvale on-call before a failover"
T_TASK = "Restore the Tindersnap replica from the nightly backup"
A_WORDS = ("halvorsen", "marrowvale")


def identity_for(issuer: Issuer, tmp_path: Path, **extra: str) -> Any:
    from skillbank.team.auth import TeamIdentity, load_oidc

    config = tmp_path / "auth.toml"
    config.write_text(issuer.config_toml(**extra))
    return TeamIdentity(oidc=load_oidc(config, {}))


def check(identity: Any, token: str) -> Any:
    return identity.check_token(token)


# ------------------------------------------------------------------------- the verifier alone


def test_claims_map_to_principal_namespace_role_and_shared_namespaces(issuer, tmp_path):
    from skillbank.team.auth import Admitted

    identity = identity_for(issuer, tmp_path, namespace_claim='"skillbank_namespace"')
    alice = check(identity, issuer.token("alice", groups=["platform", "unlisted"]))
    assert isinstance(alice, Admitted), alice
    scope = alice.scope
    assert (scope.principal, scope.namespace, scope.reads, scope.role.value, scope.trusted,
            scope.face) == ("alice", "alice", ("team",), "contributor", True, "mcp-http")
    assert alice.access.subject == "alice" and alice.access.claims == {"iss": issuer.url}
    lead = check(identity, issuer.token("lena", groups=["platform", "platform-leads"])).scope
    assert lead.role.value == "reviewer" and lead.reviewable == ("team",)
    nobody = check(identity, issuer.token("nora")).scope
    assert nobody.role.value == "reader" and nobody.readable == ("nora",)
    bot = check(identity, issuer.token("ci", groups=["platform", "agents"],
                                       skillbank_namespace="team")).scope
    assert bot.namespace == "team" and bot.trusted is False


@pytest.mark.parametrize("case, status, words", [
    ("expired", 401, "expired at"),
    ("foreign-issuer", 401, "issued by"),
    ("wrong-audience", 401, "audience"),
    ("unsigned", 401, "unsigned"),
    ("unknown-key", 401, "not among"),
    ("forged-signature", 401, "signature does not verify"),
    ("no-exp", 401, "'exp'"),
    ("not-a-jwt", 401, "not a JWT"),
    ("hs256", 401, "does not accept"),
])
def test_a_token_that_does_not_pass_says_why(issuer, tmp_path, case, status, words):
    import jwt

    from skillbank.team.auth import Refusal

    identity = identity_for(issuer, tmp_path)
    now = int(time.time())
    token = {
        "expired": lambda: issuer.token("alice", lifetime=-120),
        "foreign-issuer": lambda: Issuer.token(_Foreign(), "alice"),
        "wrong-audience": lambda: issuer.token("alice", aud="another-service"),
        "unsigned": lambda: unsigned({"iss": issuer.url, "aud": AUDIENCE, "sub": "alice",
                                      "exp": now + 600}),
        "unknown-key": lambda: issuer.token("alice", key=new_key(), kid="rotated-away"),
        "forged-signature": lambda: issuer.token("alice", key=new_key()),
        "no-exp": lambda: issuer.token("alice", exp=None),
        "not-a-jwt": lambda: "sbk_just-some-opaque-token",
        "hs256": lambda: jwt.encode({"iss": issuer.url, "aud": AUDIENCE, "sub": "alice",
                                     "exp": now + 600}, "shared-secret-of-32-bytes-or-more!",
                                    algorithm="HS256"),
    }[case]()
    verdict = check(identity, token)
    assert isinstance(verdict, Refusal), verdict
    assert verdict.status == status and words in verdict.reason, verdict.reason


class _Foreign:
    """Another issuer: its own key and `iss` (nothing served)."""

    def __init__(self) -> None:
        self.keys = {"key-1": new_key()}
        self.kid = "key-1"
        self.url = "https://login.elsewhere.example"


def test_the_issuers_keys_unreachable_is_a_503_naming_the_jwks_url(issuer, tmp_path):
    from skillbank.team.auth import Refusal

    identity = identity_for(issuer, tmp_path)
    token = issuer.token("alice")
    issuer.close()
    verdict = check(identity, token)
    assert isinstance(verdict, Refusal) and verdict.status == 503, verdict
    assert issuer.jwks_url in verdict.reason and "reachable" in verdict.reason


def test_without_jwks_url_the_keys_are_found_in_the_issuers_openid_configuration(
        issuer, tmp_path):
    from skillbank.team.auth import Admitted, TeamIdentity, load_oidc

    config = tmp_path / "auth.toml"
    config.write_text(issuer.config_toml(discover=True))
    identity = TeamIdentity(oidc=load_oidc(config, {}))
    assert isinstance(check(identity, issuer.token("alice")), Admitted)
    assert isinstance(check(identity, issuer.token("bob")), Admitted)
    assert (issuer.discoveries, issuer.fetches) == (1, 1)


def test_an_issuer_without_openid_configuration_is_a_503_naming_it(issuer, tmp_path):
    from skillbank.team.auth import Refusal, TeamIdentity, load_oidc

    config = tmp_path / "auth.toml"
    config.write_text(issuer.config_toml(discover=True).replace(
        f'issuer = "{issuer.url}"', f'issuer = "{issuer.url}/realms/none"'))
    identity = TeamIdentity(oidc=load_oidc(config, {}))
    verdict = check(identity, issuer.token("alice", iss=f"{issuer.url}/realms/none"))
    assert isinstance(verdict, Refusal) and verdict.status == 503, verdict
    assert "/realms/none/.well-known/openid-configuration" in verdict.reason
    assert "jwks_url" in verdict.reason


def test_a_key_the_issuer_rotates_in_is_fetched_once(issuer, tmp_path, monkeypatch):
    from skillbank.team import auth
    from skillbank.team.auth import Admitted

    monkeypatch.setattr(auth, "JWKS_REFRESH_COOLDOWN", 0.5)
    identity = identity_for(issuer, tmp_path)
    assert isinstance(check(identity, issuer.token("alice")), Admitted)
    fetched = issuer.fetches
    assert isinstance(check(identity, issuer.token("bob")), Admitted)
    assert issuer.fetches == fetched  # the JWKS is cached
    issuer.keys["key-2"] = new_key()
    issuer.kid = "key-2"
    time.sleep(0.6)  # PyJWT's cooldown between refetches for unknown key ids
    assert isinstance(check(identity, issuer.token("carol")), Admitted)
    assert issuer.fetches == fetched + 1


@pytest.mark.parametrize("table, words", [
    ('[oidc]\naudience = "x"\njwks_url = "http://127.0.0.1:9/j"\n', "needs issuer"),
    ('[oidc]\nissuer = "http://i"\naudience = "x"\njwks_url = "file:///etc/keys"\n',
     "jwks_url must be an http(s) URL"),
    ('[oidc]\nissuer = "http://i"\naudience = "x"\njwks_url = "http://i/j"\nalgorithms = ["none"]\n',
     "'none'"),
    ('[oidc]\nissuer = "http://i"\naudience = "x"\njwks_url = "http://i/j"\n'
     '[oidc.groups.g]\nrole = "boss"\n', "role 'boss'"),
    ('[oidc]\nissuer = "http://i"\naudience = "x"\njwks_url = "http://i/j"\nissuers = 1\n',
     "unknown keys issuers"),
    # hunt-oidc #5, session 26: a name PyJWT does not know started a worker refusing every token.
    ('[oidc]\nissuer = "http://i"\naudience = "x"\nalgorithms = ["rs256"]\n',
     "algorithms: 'rs256' is not an asymmetric JWS algorithm"),
    ('[oidc]\nissuer = "http://i"\naudience = "x"\nalgorithms = ["RS256", "RS999"]\n',
     "algorithms: 'RS999' is not an asymmetric JWS algorithm"),
    # hunt-oidc #6, session 26: a bad resource_url was the SDK's field name, after the store opened.
    ('[oidc]\nissuer = "http://i"\naudience = "x"\nresource_url = "skillbank-api"\n',
     "[oidc] resource_url must be an http(s) URL"),
    ('[oidc]\nissuer = "http://i"\naudience = "x"\nresource_url = 5\n',
     "[oidc] resource_url must be an http(s) URL"),
    # hunt-oidc #9, session 26: [OIDC] was ignored, and the worker served with no authentication.
    ('[OIDC]\nissuer = "http://i"\naudience = "x"\n', "[OIDC] is not [oidc]"),
])
def test_a_bad_oidc_table_names_the_file_and_the_key(tmp_path, table, words):
    from skillbank.team.auth import AuthConfigError, load_oidc

    config = tmp_path / "skillbank.toml"
    config.write_text(table)
    with pytest.raises(AuthConfigError) as caught:
        load_oidc(config, {})
    assert str(config) in str(caught.value) and words in str(caught.value)


@pytest.mark.parametrize("text, words", [
    ('[auth]\nissuer = "http://i"\naudience = "x"\n', "has no [oidc] table (it has [auth])"),
    ('issuer = "http://i"\naudience = "x"\n', "its keys must follow an [oidc] line"),
])
def test_an_auth_config_file_without_an_oidc_table_is_refused(tmp_path, text, words):
    """hunt-oidc #9, session 26: `--auth-config FILE` with no [oidc] table configured nothing,
    and the worker served /mcp with no authentication, saying nothing."""
    from skillbank.team.auth import AuthConfigError, load_oidc

    config = tmp_path / "auth.toml"
    config.write_text(text)
    with pytest.raises(AuthConfigError) as caught:
        load_oidc(config, {"explicit_file": True})
    assert str(config) in str(caught.value) and words in str(caught.value)
    assert load_oidc(config, {}) is None  # a root's skillbank.toml needs no [oidc]


# ------------------------------------------------------------------- the worker, end to end


def shows_a(payload: Any) -> list[str]:
    if isinstance(payload, dict):
        payload = {k: v for k, v in payload.items() if k != "task"}
    text = json.dumps(payload, default=str).lower()
    return [w for w in A_WORDS if w in text]


async def test_jwt_scope_matrix_on_a_team_worker(tmp_path, issuer, chroma_server, postgres):
    """alice (group platform: contributor, reads team), bob (platform-viewers: reader, reads
    team), ci (a team service account writing the team namespace), bot (an untrusted agent
    writing it: pending), lena (platform-leads: the team's reviewer), carol (tokens file)."""
    from skillbank.mcp_server.identity import add_principal

    config = tmp_path / "auth.toml"
    config.write_text(issuer.config_toml(namespace_claim='"skillbank_namespace"')
                      + '[oidc.groups.platform-viewers]\nrole = "reader"\nreads = ["team"]\n')
    tokens_file = tmp_path / "tokens.toml"
    carol = add_principal(tokens_file, "carol", namespace="carol", role="contributor")
    proc, url = start_server(tmp_path / "root", chroma_server, postgres.url, "--trust",
                             "--auth-config", str(config), "--tokens", str(tokens_file))
    alice = issuer.token("alice", groups=["platform"])
    bob = issuer.token("bob", groups=["platform-viewers"])
    ci = issuer.token("ci", groups=["platform"], skillbank_namespace="team")
    bot = issuer.token("bot", groups=["platform", "agents"], skillbank_namespace="team")
    lead = issuer.token("lena", groups=["platform-leads"])
    try:
        async with bearer_session(url, ci) as team:
            ok, team_exp = await call(team, "record_experience", {"task": T_TASK,
                                                                  "outcome": "success"})
            assert ok, team_exp
        async with bearer_session(url, bot) as agent:  # untrusted (group agents): pending
            ok, pending = await call(agent, "record_experience", {
                "task": "Reset the Quillfeather cache", "outcome": "success"})
            assert ok and pending["status"] == "pending", pending
        async with bearer_session(url, alice) as on_a:
            ok, exp = await call(on_a, "record_experience", {
                "task": A_TASK, "outcome": "failure", "feedback": "Halvorsen keys expired."})
            assert ok, exp
            ok, rule = await call(on_a, "add_guideline", {"text": A_RULE})
            assert ok, rule
            ok, found = await call(on_a, "recall_experiences", {"task": T_TASK})
            assert ok and team_exp["id"] in json.dumps(found), found  # reads the team's
        async with bearer_session(url, bob) as on_b:
            for tool, args in (("recall_experiences", {"task": A_TASK}),
                               ("memory_context", {"task": A_TASK}),
                               ("search_guidelines", {"task": "page the on-call before failover"}),
                               ("list_pending", {})):
                ok, result = await call(on_b, tool, args)
                assert ok and shows_a(result) == [], (tool, result)
            ok, found = await call(on_b, "recall_experiences", {"task": T_TASK})
            assert ok and team_exp["id"] in json.dumps(found), found  # reads the team's too
            ok, refused = await call(on_b, "record_experience", {"task": "x task",
                                                                 "outcome": "success"})
            assert not ok and "Traceback" not in refused  # a reader writes nothing
            for tool, args in (("rate_memory", {"id": exp["id"], "helpful": False}),
                               ("forget", {"id": exp["id"]}),
                               ("forget", {"id": rule["guideline_id"]})):
                ok, result = await call(on_b, tool, args)
                assert not ok and "Traceback" not in result, (tool, result)
            ok, listed = await call(on_b, "list_pending", {})  # a reader reviews nothing
            assert ok and pending["id"] not in json.dumps(listed), listed
            ok, result = await call(on_b, "review_memory", {"id": pending["id"],
                                                            "decision": "approve"})
            assert not ok and "Traceback" not in result
        async with bearer_session(url, alice) as on_a:  # a contributor reviews nothing either
            ok, result = await call(on_a, "review_memory", {"id": pending["id"],
                                                            "decision": "approve"})
            assert not ok and "Traceback" not in result
        async with bearer_session(url, lead) as on_l:  # the team's reviewer (platform-leads)
            ok, listed = await call(on_l, "list_pending", {})
            assert ok and pending["id"] in json.dumps(listed), listed
            ok, result = await call(on_l, "review_memory", {"id": pending["id"],
                                                            "decision": "approve"})
            assert ok, result
        async with bearer_session(url, carol) as on_c:  # the tokens file, beside OIDC
            ok, found = await call(on_c, "recall_experiences", {"task": A_TASK})
            assert ok and shows_a(found) == [] and exp["id"] not in json.dumps(found)
        async with bearer_session(url, alice) as on_a:  # untouched by bob
            ok, found = await call(on_a, "recall_experiences", {"task": A_TASK})
            assert ok and exp["id"] in json.dumps(found)
            ok, found = await call(on_a, "search_guidelines",
                                   {"task": "page the on-call before failover"})
            assert ok and rule["guideline_id"] in json.dumps(found)

        # The protected-resource metadata (RFC 9728), served by the SDK, names the issuer.
        meta = httpx.get(url + "/.well-known/oauth-protected-resource/mcp", timeout=10)
        assert meta.status_code == 200, meta.text
        assert meta.json()["authorization_servers"] == [issuer.url]
        assert meta.json()["resource"] == url + "/mcp"
        # The authorization server's metadata lives at the issuer: the 404 says so, not "this
        # server does not use OAuth" (hunt-oidc #8, session 26).
        for path in ("/.well-known/oauth-authorization-server",
                     "/.well-known/openid-configuration"):
            answer = httpx.get(url + path, timeout=10)
            assert answer.status_code == 404, (path, answer.text)
            said = answer.json()["error"]
            assert "does not use OAuth" not in said and issuer.url in said, said
            assert url + "/.well-known/oauth-protected-resource/mcp" in said, said
        # Refused tokens: 401 with the reason, the metadata URL in the challenge; never a 500.
        now = int(time.time())
        for token, words in [
            (issuer.token("alice", lifetime=-120), "expired"),
            (Issuer.token(_Foreign(), "alice"), "issued by"),
            (issuer.token("alice", aud="another-service"), "audience"),
            (unsigned({"iss": issuer.url, "aud": AUDIENCE, "sub": "alice", "exp": now + 60}),
             "unsigned"),
            (None, "missing bearer token"),
        ]:
            headers = {"Authorization": f"Bearer {token}"} if token else {}
            answer = httpx.post(url + "/mcp", json={"jsonrpc": "2.0", "id": 1, "method": "ping"},
                                headers=headers, timeout=30)
            assert answer.status_code == 401, (words, answer.status_code, answer.text)
            assert words in answer.json()["error"]["message"], answer.text
            challenge = answer.headers["www-authenticate"]
            assert 'resource_metadata="' + url + '/.well-known/oauth-protected-resource/mcp"' \
                in challenge, challenge
    finally:
        stop_process(proc)


def test_a_bad_oidc_table_stops_the_worker_at_start_up(tmp_path):
    config = tmp_path / "auth.toml"
    config.write_text('[oidc]\nissuer = "https://login.example"\njwks_url = "https://k"\n')
    done = subprocess.run(
        [sys.executable, "-m", "skillbank.team.server", "--root", str(tmp_path / "root"),
         "--chroma-url", "http://127.0.0.1:9", "--database-url", "postgresql://x@127.0.0.1:9/x",
         "--auth-config", str(config)], env=team_env(), capture_output=True, text=True,
        timeout=120)
    assert done.returncode == 2, done.stderr
    assert "needs audience" in done.stderr and str(config) in done.stderr
    assert "Traceback" not in done.stderr


def start_refused(tmp_path: Path, *flags: str, **env: str) -> subprocess.CompletedProcess:
    """`skillbank server` with an unreachable PostgreSQL: a configuration refused at start
    exits 2 before the store is opened (which would exit 1 naming PostgreSQL)."""
    return subprocess.run(
        [sys.executable, "-m", "skillbank.team.server", "--chroma-url", "http://127.0.0.1:9",
         "--database-url", "postgresql://x@127.0.0.1:9/x", *flags],
        env={**team_env(), **env}, capture_output=True, text=True, timeout=120)


def test_an_auth_config_without_oidc_stops_the_worker(tmp_path):
    """hunt-oidc #9, session 26: the worker started and served /mcp unauthenticated."""
    config = tmp_path / "auth.toml"
    config.write_text('[OIDC]\nissuer = "https://login.example"\naudience = "skillbank"\n')
    done = start_refused(tmp_path, "--root", str(tmp_path / "root"), "--auth-config",
                         str(config))
    assert done.returncode == 2, done.stderr
    assert str(config) in done.stderr and "[OIDC] is not [oidc]" in done.stderr
    assert "Traceback" not in done.stderr


def test_without_root_the_default_roots_oidc_table_applies(tmp_path):
    """hunt-oidc #11, session 26: without --root the worker serves ~/.skillbank but read the
    [oidc] of no skillbank.toml, so that root served unauthenticated (with --root, protected).
    Here the table lacks `audience`: read, it stops the worker, naming the file."""
    home = tmp_path / "home"
    (home / ".skillbank").mkdir(parents=True)
    config = home / ".skillbank" / "skillbank.toml"
    config.write_text('[oidc]\nissuer = "https://login.example"\n')
    done = start_refused(tmp_path, HOME=str(home))
    assert done.returncode == 2, done.stderr
    assert str(config) in done.stderr and "needs audience" in done.stderr
    assert "Traceback" not in done.stderr


def test_a_bad_resource_url_stops_the_worker_before_the_store_opens(tmp_path):
    """hunt-oidc #6, session 26: `resource_server_url: Input should be a valid URL`, after
    PostgreSQL and Chroma were opened."""
    config = tmp_path / "auth.toml"
    config.write_text('[oidc]\nissuer = "https://login.example"\naudience = "skillbank"\n'
                      'resource_url = "skillbank-api"\n')
    done = start_refused(tmp_path, "--root", str(tmp_path / "root"), "--auth-config",
                         str(config))
    assert done.returncode == 2, done.stderr
    assert f"{config}: [oidc] resource_url must be an http(s) URL" in done.stderr, done.stderr
