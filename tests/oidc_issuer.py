"""A test identity provider on loopback: an RSA key the test generates, its JWKS served over HTTP
(as an OIDC issuer publishes it), and tokens signed with it — no network, no mock verifier.

Tests import it as `from oidc_issuer import Issuer`.
"""

from __future__ import annotations

import json
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

import jwt
from cryptography.hazmat.primitives.asymmetric import rsa

AUDIENCE = "skillbank"


def new_key() -> Any:
    return rsa.generate_private_key(public_exponent=65537, key_size=2048)


class Issuer:
    """Serves `/jwks.json` for its keys; `token(...)` signs claims with its current key."""

    def __init__(self, kid: str = "key-1") -> None:
        self.keys: dict[str, Any] = {kid: new_key()}
        self.kid = kid
        self.fetches = 0
        self.discoveries = 0
        #: Served at /jwks.json instead of the key set when set: an HTML page, `{"keys": []}`
        #: (an issuer or proxy answering 200 with no usable keys).
        self.jwks_body: bytes | None = None
        issuer = self

        class Handler(BaseHTTPRequestHandler):
            def do_GET(self) -> None:  # noqa: N802 - http.server's name
                if self.path == "/.well-known/openid-configuration":
                    issuer.discoveries += 1
                    document = {"issuer": issuer.url, "jwks_uri": issuer.jwks_url}
                elif self.path == "/jwks.json":
                    issuer.fetches += 1
                    document = issuer.jwks()
                else:
                    self.send_error(404)
                    return
                body = json.dumps(document).encode()
                if self.path == "/jwks.json" and issuer.jwks_body is not None:
                    body = issuer.jwks_body
                self.send_response(200)
                self.send_header("content-type", "application/json")
                self.send_header("content-length", str(len(body)))
                self.end_headers()
                self.wfile.write(body)

            def log_message(self, *args: Any) -> None:
                pass

        self.http = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.port = self.http.server_address[1]
        self.thread = threading.Thread(target=self.http.serve_forever, daemon=True)
        self.thread.start()

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    @property
    def jwks_url(self) -> str:
        return self.url + "/jwks.json"

    def jwks(self) -> dict[str, Any]:
        keys = []
        for kid, key in self.keys.items():
            jwk = json.loads(jwt.algorithms.RSAAlgorithm.to_jwk(key.public_key()))
            keys.append({**jwk, "kid": kid, "use": "sig", "alg": "RS256"})
        return {"keys": keys}

    def token(self, sub: str, *, groups: list[str] | None = None, lifetime: float = 600,
              key: Any = None, kid: str | None = None, typ: str | None = "at+jwt",
              **claims: Any) -> str:
        """An access token (header typ at+jwt, RFC 9068) unless `typ` says otherwise (None:
        no typ header beyond PyJWT's "JWT"; "JWT" with `aud` = a client id: an ID token)."""
        now = int(time.time())
        payload = {"iss": self.url, "aud": AUDIENCE, "sub": sub, "iat": now,
                   "exp": now + int(lifetime), **claims}
        if groups is not None:
            payload["groups"] = groups
        payload = {k: v for k, v in payload.items() if v is not None}
        return jwt.encode(payload, key or self.keys[self.kid], algorithm="RS256",
                          headers={"kid": kid or self.kid, **({"typ": typ} if typ else {})})

    def config_toml(self, *, discover: bool = False, **extra: str) -> str:
        """An `[oidc]` table for this issuer: groups `platform` (contributor, reads the team
        namespace) and `platform-leads` (reviewer of it). `discover`: no jwks_url (found in the
        issuer's OpenID configuration)."""
        lines = ["[oidc]", f'issuer = "{self.url}"', f'audience = "{AUDIENCE}"',
                 'default_role = "reader"']
        if not discover:
            lines.append(f'jwks_url = "{self.jwks_url}"')
        lines += [f"{k} = {v}" for k, v in extra.items()]
        lines += ["", "[oidc.groups.platform]", 'role = "contributor"', 'reads = ["team"]', "",
                  "[oidc.groups.platform-leads]", 'role = "reviewer"', 'reads = ["team"]',
                  'reviews = ["team"]', "", "[oidc.groups.agents]", "trusted = false", ""]
        return "\n".join(lines)

    def close(self) -> None:
        self.http.shutdown()
        self.http.server_close()


def unsigned(claims: dict[str, Any]) -> str:
    """A JWT with alg 'none' (no signature)."""
    return jwt.encode(claims, None, algorithm="none")
