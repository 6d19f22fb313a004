"""Who may use the memory browser, and which requests may change memory.

The page is for the trusted local user, so the threats are other parties reaching the port:
- another web page in the same browser (CSRF): every write is a POST that must carry this
  process's CSRF token in the form *and* come from the page's own origin (Origin, else Referer);
- DNS rebinding (an attacker's name resolving to 127.0.0.1): the Host header must name an
  address this server answers on;
- other machines, when bound beyond loopback: a token is then required (query once, then an
  HttpOnly SameSite=Strict cookie, or `Authorization: Bearer`). The cookie is named for the
  port and holds a per-process session value, never the token: cookies ignore ports, so two
  UIs on one host overwrote each other's cookie (one answered 401), and every other web server
  on that host name received the master token (hunt-ui #2, session 37).
Responses carry a strict Content-Security-Policy: only the page's own assets, no inline script.
"""

from __future__ import annotations

import hmac
import ipaddress
import secrets
from dataclasses import dataclass, field
from typing import Any
from urllib.parse import quote, urlencode, urlsplit

from starlette.requests import Request
from starlette.responses import PlainTextResponse, RedirectResponse, Response
from starlette.types import ASGIApp, Receive, Scope, Send

#: The session cookie's name is this, then the port (`Guard.cookie`).
COOKIE = "skillbank_ui_"
CSP = ("default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self' data:; "
       "font-src 'self'; connect-src 'self'; form-action 'self'; frame-ancestors 'none'; "
       "base-uri 'none'")
SAFE_METHODS = frozenset({"GET", "HEAD"})


def is_loopback(host: str) -> bool:
    """True for 127.0.0.0/8, ::1 and `localhost`: the only binds that need no token."""
    host = host.strip("[]")
    if host == "localhost":
        return True
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:
        return False


@dataclass
class Guard:
    """The per-process secrets and the host names this server answers to."""

    host: str = "127.0.0.1"
    port: int = 8766
    token: str | None = None  # required from clients when set
    csrf: str = field(default_factory=lambda: secrets.token_urlsafe(32))
    extra_hosts: tuple[str, ...] = ()
    #: What the token is traded for, in the cookie: valid for this process only, so the token
    #: itself never sits in a cookie that every server on this host name is sent.
    session: str = field(default_factory=lambda: secrets.token_urlsafe(32))

    def cookie(self, request: Request | None = None) -> str:
        """The session cookie's name: one per port, as cookies are shared across ports. The
        port is the one the request reached (the ASGI server's), so an app served by any ASGI
        server on its own port keeps its own cookie; `port` only where the server names none
        (a Unix socket). With `port` alone, two apps served outside `skillbank ui` shared the
        default's name and logged each other out (review 1, session 37)."""
        server = request.scope.get("server") if request is not None else None
        port = server[1] if isinstance(server, (tuple, list)) and len(server) > 1 and server[1] \
            else self.port
        return f"{COOKIE}{port}"

    def allowed_host(self, header: str) -> bool:
        """DNS-rebinding check: the Host header must be one of our own names."""
        if not header:
            return False
        name = urlsplit(f"//{header}").hostname or ""
        if self.host in ("0.0.0.0", "::", ""):
            return True  # bound everywhere: any name may reach it, the token guards it
        allowed = {self.host.strip("[]"), *self.extra_hosts}
        if is_loopback(self.host):
            allowed |= {"localhost", "127.0.0.1", "::1"}
        return name in allowed

    def token_ok(self, request: Request) -> bool:
        if not self.token:
            return True
        auth = request.headers.get("authorization", "")
        if auth.lower().startswith("bearer "):
            offered = auth[7:].strip()
            return bool(offered) and same_secret(offered, self.token)
        offered = request.cookies.get(self.cookie(request), "")
        return bool(offered) and same_secret(offered, self.session)

    def csrf_ok(self, value: Any) -> bool:
        return isinstance(value, str) and same_secret(value, self.csrf)

    def same_origin(self, request: Request) -> bool:
        """The write came from a page served by this server (Origin, else Referer)."""
        own = f"{request.url.scheme}://{request.headers.get('host', '')}"
        origin = request.headers.get("origin")
        if origin and origin != "null":
            return origin == own
        referer = request.headers.get("referer")
        if referer:
            parts = urlsplit(referer)
            return f"{parts.scheme}://{parts.netloc}" == own
        return False


class GuardMiddleware:
    """Host check, token check, origin check on writes, and security headers on every answer.

    The CSRF form token is checked by the write routes themselves (they parse the form); this
    layer refuses what can be refused from headers alone.
    """

    def __init__(self, app: ASGIApp, guard: Guard) -> None:
        self.app = app
        self.guard = guard

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        request = Request(scope)
        response = self.refuse(request)
        if response is None and self.guard.token:
            given = request.query_params.get("token")
            if given and same_secret(given, self.guard.token):
                # Trade the token in the address for a cookie, and drop it from the address bar.
                params = [(k, v) for k, v in request.query_params.multi_items() if k != "token"]
                query = urlencode(params)
                response = RedirectResponse(exchange_target(scope) + (f"?{query}" if query else ""),
                                            status_code=303)
                response.set_cookie(self.guard.cookie(request), self.guard.session, httponly=True,
                                    samesite="strict", path="/")
            elif not self.guard.token_ok(request):
                response = PlainTextResponse(
                    "This memory browser needs its token: open the address `skillbank ui` "
                    "printed (it ends in ?token=…).", status_code=401)
        if response is not None:
            await self._with_headers(response)(scope, receive, send)
            return

        async def send_with_headers(message: dict[str, Any]) -> None:
            if message["type"] == "http.response.start":
                headers = list(message.get("headers", []))
                headers += [(k.encode(), v.encode()) for k, v in security_headers().items()]
                message = {**message, "headers": headers}
            await send(message)

        await self.app(scope, receive, send_with_headers)

    def refuse(self, request: Request) -> Response | None:
        if not self.guard.allowed_host(request.headers.get("host", "")):
            return PlainTextResponse("unknown Host: this server answers only to its own "
                                     "address", status_code=421)
        if request.method not in SAFE_METHODS:
            if request.method != "POST":
                return PlainTextResponse("method not allowed", status_code=405)
            if not self.guard.same_origin(request):
                return PlainTextResponse("cross-origin write refused: changes must come from "
                                         "this page", status_code=403)
        return None

    @staticmethod
    def _with_headers(response: Response) -> Response:
        for key, value in security_headers().items():
            response.headers[key] = value
        return response


#: What a path keeps as sent when it goes back into a Location: every other byte (a space, a
#: backslash, a non-ASCII byte) is percent-encoded; `%` stays, so `%2F` stays `%2F`.
_PATH_SAFE = "/%:@!$&'()*+,;=-._~"


def exchange_target(scope: Scope) -> str:
    """The path the token exchange redirects to: the path as the client sent it (`raw_path`),
    not the decoded one, which turned `/skills/x%2Ffiles%2FSKILL.md` (the skill named so) into
    skill `x`'s file page (hunt-ui #5, session 37). A path that a browser would read as another
    host (`//evil.example`, `/\\evil.example`) goes to `/`: never an open redirect."""
    raw = scope.get("raw_path")
    if raw:
        path = quote(raw.split(b"?", 1)[0], safe=_PATH_SAFE)
    else:  # a server that gives no raw path: the decoded one, its `%` encoded again
        path = quote(scope.get("path", "/"), safe=_PATH_SAFE.replace("%", ""))
    if not path.startswith("/") or path.startswith("//"):
        return "/"
    return path


def same_secret(offered: str, secret: str) -> bool:
    """A constant-time comparison of texts, as bytes: `hmac.compare_digest` raises TypeError
    on a non-ASCII str, so `Bearer é` or `?token=%C3%A9` gave anyone who reached the port a 500
    and a traceback in the log instead of 401."""
    return hmac.compare_digest(offered.encode("utf-8", "surrogatepass"),
                               secret.encode("utf-8", "surrogatepass"))


def security_headers() -> dict[str, str]:
    return {
        "content-security-policy": CSP,
        "x-content-type-options": "nosniff",
        "referrer-policy": "same-origin",
        "x-frame-options": "DENY",
        "cache-control": "no-store",
    }
