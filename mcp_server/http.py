"""Streamable HTTP serving: the SDK's ASGI app behind a small guard, run by uvicorn.

The guard answers before the MCP app sees a request:
- 404 for the OAuth discovery documents (`/.well-known/oauth-protected-resource…`,
  `/.well-known/oauth-authorization-server…`, `/.well-known/openid-configuration…`), with or
  without a token: this server does not do OAuth, and saying so is what keeps MCP clients from
  starting an OAuth flow (the MCP authorization spec has clients look for these documents after
  a 401; a 401 there too reads as "protected metadata", a 404 as "no OAuth here"); except
  with OIDC (`skillbank server`, `identity`): then the SDK serves the protected-resource
  metadata naming the issuer, and a refused token's 401 says why and where that metadata is;
- 401 when a bearer token is configured and the request does not carry it (every other path),
  with `WWW-Authenticate: Bearer realm="skillbank"` (plus `error="invalid_token"` when a wrong
  token was sent, RFC 6750) and no `resource_metadata`, and a JSON-RPC error body that says how
  to send the token;
- 421 on a loopback bind when the Host header is not a name of this machine (DNS rebinding);
- 403 when an Origin header names anything but this machine (DNS-rebinding and browser pages);
  both with a JSON-RPC error body, and decided here on every bind (`build_app`);
- 413 when the body is larger than the limit (declared or streamed);
- 400 with a JSON-RPC error for a POST body that is not one JSON-RPC message (invalid JSON, a
  lone surrogate, a missing method): see `wire.py`; a batch gets an array of errors, one per
  request in it, as on stdio.
"""

from __future__ import annotations

import hmac
import json
import logging
import sys
import time
from typing import Any, Awaitable, Callable
from urllib.parse import urlsplit

from skillbank.mcp_server import wire
from skillbank.mcp_server.options import is_loopback

log = logging.getLogger("skillbank.mcp")

OAUTH_DISCOVERY = ("/.well-known/oauth-protected-resource", "/.well-known/oauth-authorization-server",
                   "/.well-known/openid-configuration")
UNAUTHORIZED = -32001  # server-defined JSON-RPC code for "not authorised"
INVALID_REQUEST = -32600  # JSON-RPC; the SDK's code for "Session not found"

Scope = dict[str, Any]
Receive = Callable[[], Awaitable[dict[str, Any]]]
Send = Callable[[dict[str, Any]], Awaitable[None]]


def origin_allowed(origin: str | None) -> bool:
    """Absent Origin (non-browser clients) and origins on this machine are allowed."""
    if not origin:
        return True
    if origin == "null":
        return False
    try:
        parts = urlsplit(origin)
    except ValueError:
        return False
    return parts.scheme in ("http", "https") and bool(parts.hostname) and is_loopback(parts.hostname)


def host_allowed(host: str | None) -> bool:
    """On a loopback bind: the Host header names this machine (localhost, 127.0.0.0/8, [::1]),
    with or without a port. A page whose DNS name was rebound to 127.0.0.1 sends its own name
    (a browser always sends Host), so it is refused even when it sends no Origin."""
    if not host or any(c in host for c in "@/\\?#") or any(c.isspace() for c in host):
        return False  # "evil.com@localhost", "localhost/evil": no Host a browser sends (review 1)
    try:
        name = urlsplit(f"//{host}").hostname
    except ValueError:
        return False
    return bool(name) and is_loopback(name)


class GuardMiddleware:
    """ASGI middleware: bearer token, Origin and body size checks."""

    def __init__(self, app: Any, *, token: str | None, max_body_bytes: int,
                 tokens: Any = None, identity: Any = None,
                 metadata_url: str | None = None, stateless: bool = False,
                 check_host: bool = False) -> None:
        self.app = app
        #: Bound to loopback: refuse a Host that is not this machine (`host_allowed`).
        self.check_host = check_host
        self.token = token
        self.max_body_bytes = max_body_bytes
        #: `identity.TokensFile`: tokens that map to principals, each request in its scope.
        self.tokens = tokens
        #: `skillbank.team.auth.TeamIdentity` (OIDC/JWT, tokens file, static token): when set,
        #: it alone decides who the caller is, and the SDK publishes the protected-resource
        #: metadata (RFC 9728) at `metadata_url`, which this guard then lets through.
        self.identity = identity
        self.metadata_url = metadata_url
        #: MCP session id -> the caller it was made for (`SessionOwners`); None when the
        #: server keeps no sessions (`stateless`).
        self.sessions = None if stateless else SessionOwners()

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)  # lifespan (the session manager) passes through
            return
        headers = {k.decode("latin-1").lower(): v.decode("latin-1") for k, v in scope.get("headers", [])}
        if self.identity is not None and self.metadata_url is not None and str(
                scope.get("path", "")).startswith(OAUTH_DISCOVERY[0]):
            await self.app(scope, receive, send)  # the SDK's RFC 9728 metadata: names the issuer
            return
        if str(scope.get("path", "")).startswith(OAUTH_DISCOVERY):
            await _reply(send, 404, self._no_discovery_here())
            return
        sent = headers.get("authorization", "")
        principal = None
        if self.identity is not None:
            from skillbank.team.auth import Refusal, challenge

            verdict = await self.identity.check(sent)
            if isinstance(verdict, Refusal):
                await _reply(send, verdict.status, verdict.reason,
                             [(b"www-authenticate", challenge(verdict, self.metadata_url))],
                             rpc=True)
                return
            principal = verdict if verdict.scope is not None else None
        elif self.tokens is not None:
            from skillbank.mcp_server.identity import check_bearer

            principal, refusal = check_bearer(self.tokens, sent, self._authorised(sent)
                                              if self.token is not None else False)
            if refusal is not None:
                await _reply(send, 401, refusal[0], [(b"www-authenticate", refusal[1])], rpc=True)
                return
        elif self.token is not None and not self._authorised(sent):
            challenge = b'Bearer realm="skillbank"'
            if sent:
                challenge += (b', error="invalid_token", error_description="the bearer token is '
                              b'not the one this server was started with"')
            await _reply(send, 401, ("wrong bearer token" if sent else "missing bearer token")
                         + ": send the token the server was started with (--token or "
                         "SKILLBANK_TOKEN) as 'Authorization: Bearer <token>'; this server does "
                         "not use OAuth", [(b"www-authenticate", challenge)], rpc=True)
            return
        if self.check_host and not host_allowed(headers.get("host")):
            await _reply(send, 421, "this server is bound to loopback and answers only to this "
                         "machine's names (localhost, 127.0.0.1, [::1]) in the Host header; a "
                         "reverse proxy in front of it must pass one of them", rpc=True)
            return
        if not origin_allowed(headers.get("origin")):
            await _reply(send, 403, "requests from this Origin are not allowed: only pages on "
                         "this machine (localhost, 127.0.0.1, [::1]) may call this server",
                         rpc=True)
            return
        declared = headers.get("content-length")
        if declared is not None:
            try:
                if int(declared) > self.max_body_bytes:
                    await _reply(send, 413, f"request body over {self.max_body_bytes} bytes")
                    return
            except ValueError:
                await _reply(send, 400, "bad Content-Length")
                return
        # Read the whole body (at most the limit) before the app sees it: a streamed body that
        # grows past the limit is refused here, not half-way through the MCP transport.
        chunks: list[bytes] = []
        size = 0
        more = True
        while more:
            message = await receive()
            if message["type"] == "http.disconnect":
                return
            chunk = message.get("body", b"")
            size += len(chunk)
            if size > self.max_body_bytes:
                await _reply(send, 413, f"request body over {self.max_body_bytes} bytes")
                return
            chunks.append(chunk)
            more = bool(message.get("more_body", False))
        body = b"".join(chunks)
        if scope.get("method") == "POST" and body.strip():
            replies = wire.screen(body)
            if replies:
                # A batch (a JSON array) is answered as stdio answers it: one error per request
                # in it, sent back as a JSON array (JSON-RPC's batch reply); one message, one.
                batch = body.lstrip()[:1] == b"["
                await _reply(send, 400, "", payload=replies if batch else replies[0])
                return
        replayed = False

        async def replay() -> dict[str, Any]:
            nonlocal replayed
            if not replayed:
                replayed = True
                return {"type": "http.request", "body": body, "more_body": False}
            return await receive()

        active = check = None
        if principal is not None:
            active = principal.scope if self.identity is not None else principal.scope()
            check = principal.standing if self.identity is not None else \
                self.tokens.standing_of(principal)
        if self.sessions is not None:
            who = getattr(active, "principal", None) or ""
            session = headers.get("mcp-session-id")
            if session and not self.sessions.admits(session, who):
                # As the SDK answers a session it does not know: nothing said about whose it is.
                await _reply(send, 404, "", payload=wire.error_reply(INVALID_REQUEST,
                                                                    "Session not found"))
                return
            send = self.sessions.binding(send, who, session, scope.get("method"))
        if active is None:
            await self.app(scope, replay, send)
            return
        from skillbank import scope as scopes
        from skillbank.mcp_server.identity import standing_as

        # The MCP SDK carries both to the tool; the check to notifications (`notify.py`).
        with scopes.using(active), standing_as(check):
            await self.app(scope, replay, send)

    def _authorised(self, header: str) -> bool:
        scheme, _, value = header.partition(" ")
        if scheme.lower() != "bearer" or not value:
            return False
        assert self.token is not None
        return hmac.compare_digest(value.strip().encode(), self.token.encode())

    def _no_discovery_here(self) -> str:
        """The 404 of an OAuth discovery path this server does not serve. With OIDC on it takes
        OAuth access tokens yet is no authorization server: the answer points at the
        protected-resource metadata and the issuer, not "this server does not use OAuth"
        (hunt-oidc #8, session 26)."""
        oidc = getattr(self.identity, "oidc", None)
        if self.metadata_url is None or oidc is None:
            return ("this server does not use OAuth; send the bearer token you were given as "
                    "'Authorization: Bearer <token>'")
        issuer = oidc.issuer.rstrip("/")
        return (f"this server is an OAuth protected resource, not an authorization server: "
                f"its metadata (RFC 9728) is at {self.metadata_url}; get an access token from "
                f"the issuer {oidc.issuer} (its metadata: "
                f"{issuer}/.well-known/openid-configuration)")


class SessionOwners:
    """Which caller each MCP session was made for; a request on that session id from anyone else
    is answered as an unknown session is. The SDK let any valid token use any session id: bob,
    given alice's (a log line, a proxy), opened its GET stream and received her notifications
    and the sampling requests that carry her critiques (hunt-mcpmany, session 24). The MCP spec:
    servers SHOULD bind session ids to user-specific information.

    A session is bound when the SDK hands its id out (the reply to a request that had none), to
    the principal of that request, or to "" when it had none (the static `--token`, no token on
    loopback). An id never handed out is refused, not bound to its first user, and a binding
    goes when the session does (DELETE, or the SDK answering 404 for it): a flood of made-up ids
    cannot push a live session's binding out (review F1, session 24). A binding unused for
    `stale` seconds (the SDK closes sessions idle for 30 minutes) is swept now and then."""

    def __init__(self, stale: float = 24 * 3600.0) -> None:
        self.stale = stale
        self._owners: dict[str, tuple[str, float]] = {}
        self._made = 0

    def admits(self, session: str, who: str) -> bool:
        entry = self._owners.get(session)
        if entry is None or entry[0] != who:
            return False
        self._owners[session] = (who, time.monotonic())
        return True

    def binding(self, send: Send, who: str, session: str | None, method: Any) -> Send:
        """`send`, binding the session id the SDK gives a new session, and letting go of one
        that ended (the SDK's 404 for it, or a DELETE it accepted)."""
        async def noting(message: dict[str, Any]) -> None:
            if message.get("type") == "http.response.start":
                status = int(message.get("status", 0))
                if session is None:
                    for name, value in message.get("headers", []):
                        if name.lower() == b"mcp-session-id":
                            self._bind(value.decode("latin-1"), who)
                elif status == 404 or (method == "DELETE" and 200 <= status < 300):
                    self._owners.pop(session, None)
            await send(message)
        return noting

    def _bind(self, session: str, who: str) -> None:
        now = time.monotonic()
        self._owners[session] = (who, now)
        self._made += 1
        if self._made % 256 == 0:
            for old in [s for s, (_, seen) in self._owners.items() if now - seen > self.stale]:
                del self._owners[old]


async def _reply(send: Send, status: int, message: str,
                 extra: list[tuple[bytes, bytes]] | None = None, *, rpc: bool = False,
                 payload: dict[str, Any] | list[dict[str, Any]] | None = None) -> None:
    """A JSON answer: `payload` as given, a JSON-RPC error (`rpc`) or {"error": message}."""
    if payload is None:
        payload = (wire.error_reply(UNAUTHORIZED, message) if rpc else {"error": message})
    body = json.dumps(payload).encode()
    await send({"type": "http.response.start", "status": status,
                "headers": [(b"content-type", b"application/json"),
                            (b"content-length", str(len(body)).encode())] + (extra or [])})
    await send({"type": "http.response.body", "body": body})


def build_app(server: Any, *, host: str, token: str | None, max_body_bytes: int,
              json_response: bool = True, tokens: Any = None, identity: Any = None,
              metadata_url: str | None = None, stateless: bool = False) -> Any:
    """The guarded ASGI app: streamable HTTP at /mcp.

    `stateless`: no MCP session is kept between requests (the SDK's `stateless_http`), so any
    worker behind a load balancer answers any request. Team workers run so: a client speaking
    a handshake-era protocol (2025-06-18: Claude Code, Cursor) was given a session by one
    worker and got "Session not found" (404) from the other on every second request of a
    round-robin balancer (team hunt, session 19). The price: no resource subscriptions or
    list-change notifications, which need a session to be sent on.

    `json_response`: answer each POST with one JSON body rather than an SSE stream. About 2 ms
    less per call; the price is that a tool cannot send the client requests mid-call on
    pre-2026-07-28 sessions (legacy sampling then falls back to the rule-based distiller), while
    2026-07-28 sessions sample through the input-required flow either way."""
    from mcp.server.transport_security import TransportSecuritySettings

    # The guard decides Host and Origin on every bind; the SDK's own check, on by default on
    # loopback, allowed only `http://localhost:<port>`-style Origins and Hosts with a port, so a
    # local page on https://localhost:5173 or a Host without a port got a plain-text 403/421
    # there but passed on other binds (hunt-mcphttp #3, session 36). Off a loopback bind the
    # Host is whatever name clients use for this machine, and the token guards it.
    security = TransportSecuritySettings(enable_dns_rebinding_protection=False)
    server.stateless = stateless
    server.over_http = True  # the change monitor counts sessions, not the app's lifespan
    app = server.streamable_http_app(streamable_http_path="/mcp", host=host,
                                     transport_security=security, json_response=json_response,
                                     max_request_body_size=max_body_bytes,
                                     stateless_http=stateless)
    return GuardMiddleware(app, token=token, max_body_bytes=max_body_bytes, tokens=tokens,
                           identity=identity, metadata_url=metadata_url, stateless=stateless,
                           check_host=is_loopback(host))


class PrincipallessTrust:
    """ASGI: run each request in the server's own scope made untrusted, for a server without
    `--trust` that also knows principals (a tokens file, OIDC) and so is built trusting. The
    guard inside sets a principal's own scope over it; only a request it admits with no
    principal (the static `--token`) keeps this one, so its writes wait for a reviewer, as on
    a server without `--trust` and without principals (there, every request)."""

    def __init__(self, app: Any, namespace: str) -> None:
        from skillbank import scope as scopes
        from skillbank.mcp_server.identity import FACE

        self.app = app
        self.scope = scopes.default_scope(namespace, trusted=False, face=FACE)

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        from skillbank import scope as scopes

        if scope.get("type") != "http":
            await self.app(scope, receive, send)
            return
        with scopes.using(self.scope):
            await self.app(scope, receive, send)


async def serve_http(server: Any, *, host: str, port: int, token: str | None,
                     max_body_bytes: int, log_level: str = "warning",
                     json_response: bool = True, tokens: Any = None,
                     untrusted_namespace: str | None = None, handle: Any = None) -> None:
    """`untrusted_namespace`: without `--trust`, the namespace of the untrusted scope a request
    with no principal (the static token, or no token on loopback) runs in
    (`PrincipallessTrust`). Without it such a request read as the bank's own trusted user:
    an anonymous client listed every namespace's pending items (trust hunt, session 18).
    `handle` (the server's `BankHandle`): /healthz and /readyz as a team worker answers them,
    with the tokens file's state (a broken edit showed only in the log)."""
    import uvicorn

    app = build_app(server, host=host, token=token, max_body_bytes=max_body_bytes,
                    json_response=json_response, tokens=tokens)
    if untrusted_namespace is not None:
        app = PrincipallessTrust(app, untrusted_namespace)
    if handle is not None:
        from skillbank.team.server import HealthRoutes

        app = HealthRoutes(app, None, tokens=tokens, ready=handle.readiness)
    config = uvicorn.Config(app, host=host, port=port, log_level=log_level.lower(),
                            access_log=False, lifespan="on", log_config=None)
    shown = f"[{host}]" if ":" in host else host
    banner = (f"skillbank MCP server on http://{shown}:{port}/mcp"
              + (f" ({len(tokens.principals())} principals from {tokens.path})" if tokens else
                 " (bearer token required)" if token else ""))
    await _announcing_server(config, banner).serve()


def _announcing_server(config: Any, banner: str) -> Any:
    """uvicorn's Server, saying where it serves once it does: the banner came before
    `serve()`, so a Ctrl-C right after it (a script or test reacting to the line) could reach
    asyncio's handler before uvicorn's, cancel the lifespan's start and log a traceback (seen
    in 1 of 5 runs of the Ctrl-C test). After startup the port accepts and uvicorn handles
    Ctrl-C itself."""
    import uvicorn

    class Announcing(uvicorn.Server):
        async def startup(self, sockets: Any = None) -> None:
            await super().startup(sockets=sockets)
            if self.started and not self.should_exit:
                print(banner, file=sys.stderr, flush=True)

    return Announcing(config)
