"""The issuer's signing keys are trusted only while it publishes them, and a JWKS URL that
answers with no usable key set is a 503 naming it (hunt-oidc #1 #2, session 37).

Real parts: the loopback issuer of tests/oidc_issuer.py serves its JWKS over HTTP and signs
with real RSA keys; the worker's verifier (`TeamIdentity`) reads it with PyJWT. The JWKS
lifespan and refetch cooldown are set to 0 where a test needs a re-read, so nothing waits.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from oidc_issuer import Issuer, new_key


def identity_for(issuer: Issuer, tmp_path: Path) -> Any:
    from skillbank.team.auth import TeamIdentity, load_oidc

    config = tmp_path / "auth.toml"
    config.write_text(issuer.config_toml())
    return TeamIdentity(oidc=load_oidc(config, {}))


@pytest.fixture
def no_cooldown(monkeypatch):
    from skillbank.team import auth

    monkeypatch.setattr(auth, "JWKS_REFRESH_COOLDOWN", 0.0)


def test_a_key_the_issuer_withdraws_is_refused_once_the_set_is_reread(issuer, tmp_path,
                                                                      no_cooldown):
    """key-1 leaked: the issuer publishes key-2 only. A new token signed with key-1 was let in
    (and could write) until the worker restarted: PyJWT's per-kid cache never expired."""
    from skillbank.team.auth import Admitted, Refusal

    identity = identity_for(issuer, tmp_path)
    leaked = issuer.keys["key-1"]
    assert isinstance(identity.check_token(issuer.token("alice")), Admitted)
    issuer.keys = {"key-2": new_key()}
    issuer.kid = "key-2"
    assert isinstance(identity.check_token(issuer.token("bob")), Admitted)  # set re-read
    verdict = identity.check_token(issuer.token("mallory", key=leaked, kid="key-1"))
    assert isinstance(verdict, Refusal) and verdict.status == 401, verdict
    assert "not among" in verdict.reason and "'key-1'" in verdict.reason


def test_a_key_replaced_under_the_same_kid_is_picked_up(issuer, tmp_path, no_cooldown):
    """Some issuers publish a fixed kid: the new key under it refused every valid token with
    "signature does not verify" for the process's life."""
    from skillbank.team.auth import Admitted, Refusal

    identity = identity_for(issuer, tmp_path)
    old = issuer.keys["key-1"]
    assert isinstance(identity.check_token(issuer.token("alice")), Admitted)
    issuer.keys["key-1"] = new_key()
    verdict = identity.check_token(issuer.token("bob"))
    assert isinstance(verdict, Admitted), verdict
    stale = identity.check_token(issuer.token("mallory", key=old))
    assert isinstance(stale, Refusal) and "signature does not verify" in stale.reason, stale


def test_a_failed_reread_keeps_the_last_good_key_set(issuer, tmp_path, no_cooldown,
                                                     monkeypatch):
    """An issuer outage past the set's lifespan is not a 503 for everyone: the keys last read
    stay trusted; only a kid they lack is a 503 (it may be a key rotated in meanwhile)."""
    from skillbank.team import auth
    from skillbank.team.auth import Admitted, Refusal

    monkeypatch.setattr(auth, "JWKS_LIFESPAN", 0.0)  # every token re-reads the set
    identity = identity_for(issuer, tmp_path)
    assert isinstance(identity.check_token(issuer.token("alice")), Admitted)
    fetched = issuer.fetches
    issuer.jwks_body = b"<html>maintenance</html>"
    assert isinstance(identity.check_token(issuer.token("bob")), Admitted)
    identity.jwt.client().wait_read(30)  # bob's key is known: the re-read runs in the background
    assert issuer.fetches > fetched  # it did try
    verdict = identity.check_token(issuer.token("carol", key=new_key(), kid="key-9"))
    assert isinstance(verdict, Refusal) and verdict.status == 503, verdict
    assert issuer.jwks_url in verdict.reason
    issuer.close()  # unreachable now: the last good set still serves
    assert isinstance(identity.check_token(issuer.token("dave")), Admitted)


@pytest.mark.parametrize("body", [
    b"<html><body>Down for maintenance</body></html>",
    b'{"keys": []}',
    b'[{"kty": "RSA"}]',
    b'{"keys": "none"}',
    b'{"keys": [{"kty": "RSA", "kid": "key-1", "use": "enc", "n": "AQAB", "e": "AQAB"}]}',
], ids=["html", "empty", "list", "not-a-list", "no-signing-key"])
def test_a_jwks_url_with_no_usable_key_set_is_a_503_naming_it(issuer, tmp_path, body):
    """It was an HTTP 500 with a traceback (HTML, an empty set) or a 401 blaming the token
    (JSON that is not an object)."""
    from skillbank.team.auth import Refusal

    issuer.jwks_body = body
    identity = identity_for(issuer, tmp_path)
    verdict = identity.check_token(issuer.token("alice"))
    assert isinstance(verdict, Refusal) and verdict.status == 503, verdict
    assert verdict.error == "temporarily_unavailable"
    assert f"the issuer's keys at {issuer.jwks_url} are not a usable JWK set" in verdict.reason
