"""Identity per request for `skillbank server`: OIDC/JWT bearer tokens, the hashed tokens file,
and the server's static token, behind one MCP SDK `TokenVerifier`.

Why here and not in a gateway: every request must run in its caller's `skillbank.scope.Scope`
(whose memory it reads, which namespace it writes, its role), and a worker is stateless, so the
scope is derived from the request itself. A JWT from the team's identity provider is verified
against the issuer's published keys (JWKS, `IssuerKeys`: re-read every 5 minutes, and within
10 s for a kid it lacks or a key replaced under the same kid, in the background for a kid it
holds; a key is trusted only while published, dropped once two reads in a row miss it, and a
failed read keeps the last good set); issuer, audience,
expiry and not-before are checked; its claims give the principal and personal namespace, its
groups the role and the shared namespaces (the `[oidc]` table, `skillbank.team.oidc_config`). Small teams keep the
hashed tokens file (`skillbank tokens add`); both can be on at once.

The configuration (the `[oidc]` table) is read by `skillbank.team.oidc_config`.

Access tokens only: an OIDC ID token is a JWT from the same issuer, and when the audience set
here equals the client id it would carry the right `aud` too; it proves who logged in to that
client, not that the client may call this service. So a token must mark itself as an access
token the way RFC 9068 says, the header `typ: at+jwt` (or `application/at+jwt`). Issuers that do
not set it (many do not by default: turn on their RFC 9068 / "JWT access token profile" option
where they have one) need `require_at_jwt = false`; then a token is still refused when it says
it is an ID token (a `typ` header other than JWT/at+jwt, or Keycloak's `typ: "ID"` claim), and
the audience should be one only access tokens carry (the API's, not the client id).

A token that does not pass is a 401 whose body and `WWW-Authenticate` say why (expired, issued
by another issuer, for another audience, unsigned, signed by a key the issuer does not
publish, a claim missing); the issuer's keys unreachable, or its JWKS URL answering with no
usable key set, is a 503 naming the JWKS URL. Never a 500 and never a traceback.
"""

from __future__ import annotations

import hashlib
import hmac
import logging
import threading
import time
from dataclasses import dataclass
from datetime import datetime, timezone
from typing import Any, Mapping

from skillbank.errors import InvalidInputError
from skillbank.team.oidc_config import (  # noqa: F401 - the names callers import from here
    AuthConfigError, OidcConfig, load_oidc)

log = logging.getLogger("skillbank.team.auth")

#: Verified JWTs kept (by hash) so the guard and the SDK's bearer check verify once per token
#: (tokens-file principals are looked up every time: a removal takes effect at once).
CACHE_SIZE = 4096
CACHE_SECONDS = 60.0
#: After a JWKS read ends (good or not), a token naming an unknown key id re-reads only after
#: this long (PyJWT's cooldown): a flood of made-up key ids cannot hammer the identity
#: provider, a hung one is asked again only this long after its timeout (not at once: the
#: cooldown ran from the read's start, hunt-jwks #1, session 37), and a key the issuer rotates
#: in is picked up within seconds.
JWKS_REFRESH_COOLDOWN = 10.0
#: The issuer's key set is re-read (in the background) this long after the last good read. A
#: key the issuer withdraws is dropped once two reads in a row miss it (one read may hit a
#: load-balanced node that still publishes the old set, hunt-jwks #4, session 37): new tokens
#: signed with it verify at most JWKS_LIFESPAN + JWKS_REFRESH_COOLDOWN (plus two reads' time)
#: after it is withdrawn, plus CACHE_SECONDS for a token verified before. PyJWT's per-kid key
#: cache (`cache_keys=True`) never expired, so a withdrawn key stayed trusted, and a key
#: replaced under the same kid refused everyone, for the process's life (hunt-oidc #1,
#: session 37).
JWKS_LIFESPAN = 300.0


@dataclass(frozen=True)
class Refusal:
    """Why a request is not let in: the HTTP status, a sentence for a person, the RFC 6750 error."""

    status: int
    reason: str
    error: str = "invalid_token"


# Verifying ----------------------------------------------------------------------------------------
def _when(timestamp: Any) -> str:
    try:
        return datetime.fromtimestamp(float(timestamp), timezone.utc).strftime(
            "%Y-%m-%d %H:%M:%S UTC")
    except (TypeError, ValueError, OverflowError, OSError):
        return "an unreadable time"


class JwksUnavailable(Exception):
    """The issuer's keys cannot be had: its JWKS URL is unreachable, or it answers with no usable
    key set (an HTML page, `{"keys": []}`, JSON that is not an object). A 503 naming the URL,
    never a 500 nor a 401 blaming the caller's token (hunt-oidc #2, session 37)."""

    def __init__(self, reason: str, *, unreachable: bool) -> None:
        super().__init__(reason)
        self.unreachable = unreachable


class IssuerKeys:
    """The issuer's published signing keys by kid: trusted only while published.

    Each good read of the JWKS URL (after `JWKS_LIFESPAN`, or for a kid the set lacks, or for a
    signature that fails against the key its kid names, at most every `JWKS_REFRESH_COOLDOWN`)
    brings in the keys it publishes, replaces a key republished under the same kid, and drops a
    key missing from it and from the read before (`_pending`): behind a load balancer, nodes
    mid-rotation publish different sets, and one read from a node with the old set dropped the
    new key for a cooldown of 401s (hunt-jwks #4, session 37). A kept-but-missing key is used
    only when a re-read is not allowed yet; otherwise its caller waits for the re-read, so a
    withdrawn key goes within one cooldown of the first read that misses it.

    Reads run without the lock, one at a time, and a caller whose key the last good set holds
    never waits on one: the read after `JWKS_LIFESPAN` runs in a background thread. The lock
    was held across the fetch (up to its 10 s timeout) and the cooldown stamped at its start,
    so an issuer that hung made every OIDC request wait 10 s in turn (hunt-jwks #1, session 37);
    the cooldown now runs from the end of a read. A read that fails keeps the last good set (an
    issuer outage is not a 503 for everyone once the lifespan passes); only a caller whose kid
    the kept set lacks gets the 503 (hunt-oidc #1 #2, session 37). PyJWT's client fetches and
    parses; its caches are off (its per-kid `lru_cache` never expired)."""

    def __init__(self, url: str, timeout: float = 10) -> None:
        import jwt

        self.url = url
        self.timeout = timeout
        self._fetcher = jwt.PyJWKClient(url, cache_keys=False, cache_jwk_set=False,
                                        timeout=timeout)
        self._keys: dict[str, Any] | None = None
        self._pending: set[str] = set()  # kids in _keys the last good read did not publish
        self._read_at = -float("inf")  # when the last good read ended
        self._tried_at = -float("inf")  # when the last read ended, good or not
        self._failure: JwksUnavailable | None = None  # why the last read failed
        self._reading: threading.Event | None = None  # set when the read under way ends
        self._lock = threading.Lock()

    def key(self, kid: Any, *, failed: Any = None) -> Any:
        """The published key of `kid` (a PyJWK). `failed`: the key a signature did not verify
        against, so the set is re-read if the cooldown allows (None back: nothing new).
        JwksUnavailable: no key set to judge by; PyJWKClientError: the issuer publishes no
        key of that kid."""
        import jwt

        with self._lock:
            found = self._find(kid, failed)
            now = time.monotonic()
            may_read = now - self._tried_at >= JWKS_REFRESH_COOLDOWN
            if found is not None and kid not in self._pending:  # in the last good set
                if now - self._read_at >= JWKS_LIFESPAN and may_read and self._reading is None:
                    done = self._reading = threading.Event()
                    threading.Thread(target=self._read, args=(done,), daemon=True,
                                     name="skillbank-jwks").start()
                return found  # with `failed`: a newer key another caller's read brought
            own = None
            if self._reading is None and may_read:
                own = self._reading = threading.Event()
            wait = self._reading
        if own is not None:
            self._read(own)
        elif wait is not None:
            wait.wait(self.timeout + 5)  # the read is bounded by its timeout; this in case
        with self._lock:
            found = self._find(kid, failed)
            if failed is not None:
                return found
            if found is None:
                if self._keys is None or self._failure is not None:
                    raise self._failure or JwksUnavailable("no key set read yet",
                                                           unreachable=True)
                raise jwt.PyJWKClientError(f"Unable to find a signing key that matches: {kid!r}")
            return found

    def wait_read(self, timeout: float | None = None) -> None:
        """Return once no read is under way (a background read ends within its timeout)."""
        with self._lock:
            reading = self._reading
        if reading is not None:
            reading.wait(timeout)

    def _find(self, kid: Any, failed: Any) -> Any:
        found = self._keys.get(kid) if self._keys is not None and isinstance(kid, str) else None
        return None if found is failed else found

    def _read(self, done: threading.Event) -> None:
        """Read the set, outside the lock; `done` is set when it ends, good or not. A failure
        keeps the last good set and is what a caller whose kid that set lacks is told."""
        import jwt

        keys: dict[str, Any] = {}
        failure: JwksUnavailable | None = None
        try:
            data = self._fetcher.fetch_data()
            keys = {k.key_id: k for k in jwt.PyJWKSet.from_dict(data).keys
                    if k.key_id and k.public_key_use in ("sig", None)}
            if not keys:
                raise jwt.PyJWKSetError("it holds no signing key with a kid")
        except jwt.PyJWKClientConnectionError as exc:
            failure = JwksUnavailable(str(exc), unreachable=True)
        except (jwt.PyJWTError, ValueError) as exc:  # HTML, [], {"keys": []}, not JSON at all
            failure = JwksUnavailable(f"{type(exc).__name__}: {exc}", unreachable=False)
        except Exception as exc:  # noqa: BLE001 - a reader thread must end and say why
            failure = JwksUnavailable(f"{type(exc).__name__}: {exc}", unreachable=True)
        with self._lock:
            self._tried_at = time.monotonic()
            if failure is None:
                pending = {kid for kid in self._keys or {}
                           if kid not in keys and kid not in self._pending}
                for kid in pending:  # missing once: kept; missing twice in a row: gone
                    keys[kid] = self._keys[kid]  # type: ignore[index]
                self._keys, self._pending = keys, pending
                self._read_at, self._failure = self._tried_at, None
            else:
                self._failure = failure
            self._reading = None
            done.set()
        if failure is not None and self._keys is not None:
            log.warning("reading the issuer's keys at %s failed (%s); the last good key set "
                        "is kept", self.url, failure)


class JwtVerifier:
    """Verifies one JWT against the configured issuer; returns (scope, claims) or a Refusal."""

    def __init__(self, config: OidcConfig) -> None:
        self.config = config
        self.jwks_url = config.jwks_url
        self._jwks: Any = None
        self._lock = threading.Lock()
        self._discovery_failed_at = 0.0

    @property
    def discovery_url(self) -> str:
        return self.config.issuer.rstrip("/") + "/.well-known/openid-configuration"

    def client(self) -> IssuerKeys:
        """The issuer's keys, at `jwks_url` or the `jwks_uri` the issuer's OpenID
        configuration names (read once; a failure is retried at most every 10 s)."""
        import jwt

        with self._lock:
            if self._jwks is None:
                if not self.jwks_url:
                    if time.monotonic() - self._discovery_failed_at < JWKS_REFRESH_COOLDOWN:
                        raise jwt.PyJWKClientConnectionError(
                            "the last attempt failed moments ago")
                    try:
                        self.jwks_url = self._discover()
                    except jwt.PyJWKClientConnectionError:
                        self._discovery_failed_at = time.monotonic()
                        raise
                self._jwks = IssuerKeys(self.jwks_url)
            return self._jwks

    def _discover(self) -> str:
        import json
        import urllib.request

        import jwt

        try:
            with urllib.request.urlopen(self.discovery_url, timeout=10) as answer:
                document = json.loads(answer.read(1_000_000).decode("utf-8"))
            uri = document["jwks_uri"]
            if not isinstance(uri, str) or not uri.startswith(("https://", "http://")):
                raise ValueError(f"jwks_uri {uri!r} is not an http(s) URL")
            return uri
        except Exception as exc:  # noqa: BLE001 - any failure: say which document and why
            raise jwt.PyJWKClientConnectionError(
                f"reading {self.discovery_url} failed: {type(exc).__name__}: {exc}; set "
                "jwks_url in [oidc] if the issuer publishes no OpenID configuration") from None

    def verify(self, token: str) -> tuple[Any, dict[str, Any]] | Refusal:
        import jwt

        config = self.config
        try:
            header = jwt.get_unverified_header(token)
            unverified = jwt.decode(token, options={"verify_signature": False})
        except jwt.InvalidTokenError as exc:
            return Refusal(401, f"the bearer token is not a readable JWT ({exc})")
        alg = header.get("alg")
        if not isinstance(alg, str) or alg.lower() == "none":
            return Refusal(401, "the JWT is unsigned (alg 'none'); send a token signed by "
                                f"{config.issuer}")
        if alg not in config.algorithms:
            return Refusal(401, f"the JWT is signed with {alg}, which this server does not "
                                f"accept (it accepts {', '.join(config.algorithms)})")
        issuer = unverified.get("iss")
        if issuer != config.issuer:
            return Refusal(401, f"the JWT was issued by {issuer!r}; this server accepts tokens "
                                f"from {config.issuer} only")
        try:
            key = self.client().key(header.get("kid"))
        except (jwt.PyJWKClientConnectionError, JwksUnavailable) as exc:
            if isinstance(exc, JwksUnavailable) and not exc.unreachable:
                return Refusal(503, f"the issuer's keys at {self.jwks_url} are not a usable JWK "
                                    f"set ({exc}); check the identity provider's JWKS endpoint "
                                    "and jwks_url in [oidc]", "temporarily_unavailable")
            return Refusal(503, f"the issuer's keys could not be fetched from "
                                f"{self.jwks_url or self.discovery_url} ({exc}); check that the "
                                "identity provider is reachable from this worker and that "
                                "issuer and jwks_url are right", "temporarily_unavailable")
        except jwt.PyJWKClientError as exc:
            return Refusal(401, f"the JWT's signing key (kid {header.get('kid')!r}) is not "
                                f"among {config.issuer}'s published keys ({exc})")
        except jwt.InvalidTokenError as exc:
            return Refusal(401, f"the JWT's signing key cannot be read ({exc})")
        try:
            try:
                claims = self._decode(token, key, alg)
            except jwt.InvalidSignatureError:
                # The issuer may have replaced the key under the same kid: re-read the set (at
                # most every cooldown) and try the key it publishes now (hunt-oidc #1, s. 37).
                try:
                    newer = self.client().key(header.get("kid"), failed=key)
                except (jwt.PyJWTError, JwksUnavailable):
                    newer = None
                if newer is None:
                    raise
                key = newer
                claims = self._decode(token, key, alg)
        except jwt.ExpiredSignatureError:
            return Refusal(401, f"the JWT expired at {_when(unverified.get('exp'))}; get a "
                                "fresh token from the identity provider")
        except jwt.ImmatureSignatureError:
            return Refusal(401, f"the JWT is not valid before "
                                f"{_when(unverified.get('nbf', unverified.get('iat')))}; check "
                                "the clocks of this worker and the identity provider")
        except jwt.InvalidAudienceError:
            return Refusal(401, f"the JWT was issued for audience {unverified.get('aud')!r}, "
                                f"not this service ({', '.join(config.audience)})")
        except jwt.InvalidSignatureError:
            return Refusal(401, "the JWT's signature does not verify against "
                                f"{config.issuer}'s key {header.get('kid')!r}")
        except jwt.MissingRequiredClaimError as exc:
            return Refusal(401, f"the JWT has no {exc.claim!r} claim; this server needs exp, "
                                "iss and aud")
        except jwt.InvalidTokenError as exc:
            return Refusal(401, f"the JWT is not valid: {exc}")
        except (jwt.PyJWTError, TypeError, ValueError):
            # The header's alg names one key type, the kid another (ES256 on an RSA key):
            # PyJWT raises TypeError/InvalidKeyError, which was an unauthenticated HTTP 500
            # with a traceback (hunt-oidc #1, session 26).
            return Refusal(401, f"the JWT's header says alg {alg}, which does not fit "
                                f"{config.issuer}'s key {header.get('kid')!r} (key type "
                                f"{getattr(key, 'key_type', '?')}); send a token the identity "
                                "provider signed")
        not_access = _not_an_access_token(header, claims, config.require_at_jwt)
        if not_access:
            return Refusal(401, not_access)
        try:
            return self.config.scope_for(claims), claims
        except InvalidInputError as exc:
            return Refusal(401, f"the JWT's claims give no usable scope: {exc}")


    def _decode(self, token: str, key: Any, alg: str) -> dict[str, Any]:
        import jwt

        config = self.config
        return jwt.decode(token, key.key, algorithms=[alg], audience=list(config.audience),
                          issuer=config.issuer, leeway=config.leeway,
                          options={"require": ["exp", "iss", "aud"]})


def _not_an_access_token(header: Mapping[str, Any], claims: Mapping[str, Any],
                         require_at_jwt: bool) -> str | None:
    """Why a verified JWT is not an access token for this service (RFC 9068), or None."""
    typ = header.get("typ")
    kind = typ.lower().removeprefix("application/") if isinstance(typ, str) else ""
    if kind == "at+jwt":
        return None
    if require_at_jwt:
        return (f"the JWT is not an access token (its header typ is {typ!r}, not 'at+jwt' as "
                "RFC 9068 access tokens say; an ID token is refused here); send an access "
                "token, or set require_at_jwt = false in [oidc] for an issuer that does not "
                "mark its access tokens (docs/team.md)")
    if kind not in ("", "jwt") or str(claims.get("typ", "")).lower() in ("id", "id_token"):
        return (f"the JWT says it is not an access token (typ {typ!r}, claim typ "
                f"{claims.get('typ')!r}); send an access token, not an ID token")
    return None


def looks_like_jwt(token: str) -> bool:
    return token.count(".") == 2 and token.startswith("eyJ")


@dataclass(frozen=True)
class Admitted:
    """A request let in: its scope (None: the server's own default scope) and the SDK's token."""

    scope: Any
    access: Any
    #: The caller's scope as it stands now, None once revoked (`identity.standing`): a
    #: tokens-file principal as the file is now, a JWT's until it expires.
    standing: Any = None


class TeamIdentity:
    """Every way a `skillbank server` request can say who it is, as one MCP `TokenVerifier`.

    `check(header)` is the guard's question (an `Admitted` or a `Refusal` with its reason);
    `verify_token(token)` is the SDK's (`mcp.server.auth.provider.TokenVerifier`): the SDK's
    bearer middleware on /mcp asks it again, from the cache, and serves the RFC 9728
    protected-resource metadata naming the issuer, so an MCP client that gets a 401 finds out
    where to sign in."""

    def __init__(self, *, oidc: OidcConfig | None = None, tokens: Any = None,
                 static_token: str | None = None, bank_namespace: str = "default") -> None:
        self.oidc = oidc
        #: The worker's own namespace (the bank's `settings.namespace`): the CLI's on the served
        #: root, the static token's and principal-less callers', and where `skillbank migrate`
        #: without --namespace puts a root. Never a JWT's own by name (hunt-oidc #3, session 37).
        self.bank_namespace = bank_namespace
        self.jwt = JwtVerifier(oidc) if oidc is not None else None
        self.tokens = tokens
        self.static_token = static_token
        #: token hash -> (until, (verdict, claims)) of verified JWTs only.
        self._cache: dict[str, tuple[float, tuple[Admitted, dict[str, Any]]]] = {}
        self._lock = threading.Lock()

    # The SDK's protocol -------------------------------------------------------------------
    async def verify_token(self, token: str) -> Any:
        verdict = await self.acheck_token(token)
        return verdict.access if isinstance(verdict, Admitted) else None

    # The guard's question -----------------------------------------------------------------
    async def check(self, header: str) -> Admitted | Refusal:
        scheme, _, value = header.partition(" ")
        value = value.strip()
        if scheme.lower() != "bearer" or not value:
            how = (f"a token from {self.oidc.issuer}" if self.oidc else "your token")
            return Refusal(401, f"missing bearer token: send {how} as "
                                "'Authorization: Bearer <token>'", "")
        return await self.acheck_token(value)

    async def acheck_token(self, token: str) -> Admitted | Refusal:
        """As `check_token`, with verified JWTs cached (the guard and the SDK's bearer check
        ask for every request; a JWT's verification is the costly part).

        Only JWT verification is cached. A tokens-file principal is looked up in the file as it
        is now on every request: a cached verdict kept a removed (or narrowed) principal
        reading and writing for up to 60 s with OIDC on (hunt-oidc #4, session 26). The clash
        with the tokens file's names is checked on every request too, so a principal added to
        the file takes effect at once. The token is stripped: the SDK hands over what follows
        'Bearer ', so 'Bearer  <token>' (two spaces) arrived with a space in front and got a
        bare 401, while the guard and a worker without OIDC took it (hunt-oidc #10)."""
        token = token.strip()
        known = self._known_token(token)
        if known is not None or self.jwt is None or not looks_like_jwt(token):
            return known if known is not None else self._unknown()
        key = hashlib.sha256(token.encode("utf-8", "surrogatepass")).hexdigest()
        now = time.monotonic()
        with self._lock:
            hit = self._cache.get(key)
        if hit is not None and hit[0] > now and not _expired(hit[1][0].access):
            verified: tuple[Admitted, dict[str, Any]] | Refusal = hit[1]
        else:
            import anyio

            verified = await anyio.to_thread.run_sync(self._verify_jwt, token)  # JWKS blocks
            if isinstance(verified, Refusal):
                return verified
            with self._lock:
                if len(self._cache) >= CACHE_SIZE:
                    self._cache.clear()
                self._cache[key] = (now + CACHE_SECONDS, verified)
        return self._clash_with_tokens_file(*verified) or verified[0]

    def check_token(self, token: str) -> Admitted | Refusal:
        """Who `token` is: the server's static token, a tokens-file principal (the file as it
        is now), or a verified JWT whose principal and namespace clash with nothing there."""
        token = token.strip()
        known = self._known_token(token)
        if known is not None or self.jwt is None or not looks_like_jwt(token):
            return known if known is not None else self._unknown()
        verified = self._verify_jwt(token)
        if isinstance(verified, Refusal):
            return verified
        return self._clash_with_tokens_file(*verified) or verified[0]

    def _known_token(self, token: str) -> Admitted | None:
        """The static token or a tokens-file principal (a hash lookup: never cached)."""
        from mcp.server.auth.provider import AccessToken

        if self.static_token is not None and hmac.compare_digest(
                token.encode("utf-8", "surrogatepass"), self.static_token.encode()):
            return Admitted(None, AccessToken(token=token, client_id="skillbank-static",
                                              scopes=list(self._required())))
        if self.tokens is not None:
            principal = self.tokens.lookup(token)
            if principal is not None:
                return Admitted(principal.scope(), AccessToken(
                    token=token, client_id=principal.name, subject=principal.name,
                    scopes=list(self._required())), self.tokens.standing_of(principal))
        return None

    def _unknown(self) -> Refusal:
        if self.jwt is not None and self.tokens is None:
            return Refusal(401, f"the bearer token is not a JWT; send a token issued by "
                                f"{self.jwt.config.issuer}")
        return Refusal(401, "unknown bearer token: it maps to no principal in this server's "
                            "tokens file" + (" and is not a JWT" if self.jwt else "")
                       + "; ask the server's admin for a token")

    def _verify_jwt(self, token: str) -> tuple[Admitted, dict[str, Any]] | Refusal:
        """The verified JWT's verdict and claims, or the refusal (logged)."""
        from mcp.server.auth.provider import AccessToken

        assert self.jwt is not None
        result = self.jwt.verify(token)
        if isinstance(result, Refusal):
            log.info("bearer token refused: %s", result.reason)
            return result
        scope, claims = result
        raw = claims.get("scope", claims.get("scp", ""))
        scopes = raw.split() if isinstance(raw, str) else [str(s) for s in raw or []]
        # Admitted until exp + leeway, as PyJWT admits it: the SDK's bearer check drops an
        # AccessToken whose expires_at has passed, so a token within the documented clock
        # skew got the SDK's bare "Authentication required" (hunt-oidc #2, session 26).
        access = AccessToken(
            token=token, client_id=str(claims.get("azp") or claims.get("client_id")
                                       or scope.principal),
            scopes=scopes, expires_at=int(claims["exp"]) + self.jwt.config.leeway,
            subject=str(claims.get("sub")), claims={"iss": claims.get("iss")})
        return Admitted(scope, access, lambda: None if _expired(access) else scope), claims

    def _clash_with_tokens_file(self, admitted: Admitted,
                                claims: Mapping[str, Any]) -> Refusal | None:
        """A JWT may not take a tokens-file principal's name, nor (without a namespace claim)
        the worker's own namespace or a namespace the file gives its principals: the principal
        claim is often a name people
        choose (preferred_username). A JWT with `sub` = a tokens-file principal's name acted
        as that principal and overwrote its skill (hunt-oidc #7, session 26): the two are
        different identities, so such a JWT is refused rather than merged."""
        assert self.oidc is not None
        scope = admitted.scope
        named = not (self.oidc.namespace_claim and self.oidc.namespace_claim in claims)
        if named and scope.namespace == self.bank_namespace:
            # An IdP account named "default" read and forgot the CLI's and migrated memory
            # (hunt-oidc #3, session 37): refused as a tokens-file namespace is.
            refusal = Refusal(401, f"the JWT's principal {scope.principal!r} names this "
                                   "worker's own namespace (the CLI's, the server token's and "
                                   "memory migrated without --namespace), so it cannot be this "
                                   "caller's own; rename the account, or set namespace_claim "
                                   "in [oidc]")
            log.info("bearer token refused: %s", refusal.reason)
            return refusal
        if self.tokens is None:
            return None
        entries = self.tokens.reserved()
        refusal = None
        if any(entry.name == scope.principal for entry in entries):
            refusal = Refusal(401, f"the JWT's principal {scope.principal!r} is the name of a "
                                   "principal in this server's tokens file, a different "
                                   "identity; the JWT is refused rather than acting as it. "
                                   "Rename the account or the tokens-file principal, or set "
                                   "principal_claim in [oidc] to a claim the identity provider "
                                   "controls")
        elif named and any(
                scope.namespace in (e.namespace, *e.reads, *e.reviews) for e in entries):
            refusal = Refusal(401, f"the JWT's principal {scope.principal!r} names a "
                                   "namespace the tokens file gives its principals, so it "
                                   "cannot be this caller's own; rename the account, or set "
                                   "namespace_claim in [oidc]")
        if refusal is not None:
            log.info("bearer token refused: %s", refusal.reason)
        return refusal

    def _required(self) -> tuple[str, ...]:
        return self.oidc.required_scopes if self.oidc else ()

    # What the SDK is configured with ------------------------------------------------------
    def auth_settings(self, resource_url: str) -> Any:
        """The SDK's `AuthSettings` (None without OIDC: no issuer to point clients to)."""
        if self.oidc is None:
            return None
        from mcp.server.auth.settings import AuthSettings

        return AuthSettings(issuer_url=self.oidc.issuer,
                            resource_server_url=self.oidc.resource_url or resource_url,
                            required_scopes=list(self.oidc.required_scopes) or None,
                            validate_token_resource=False)  # PyJWT checks `aud` itself

    def metadata_url(self, resource_url: str) -> str | None:
        if self.oidc is None:
            return None
        from mcp.server.auth.routes import build_resource_metadata_url

        return str(build_resource_metadata_url(self.oidc.resource_url or resource_url))


def _expired(access: Any) -> bool:
    expires = getattr(access, "expires_at", None)
    return expires is not None and expires < time.time()


def challenge(refusal: Refusal, metadata_url: str | None) -> bytes:
    """The `WWW-Authenticate` header of a 401 (RFC 6750; `resource_metadata`, RFC 9728)."""
    parts = ['Bearer realm="skillbank"']
    if refusal.error:
        parts.append(f'error="{refusal.error}"')
        description = "".join(c if c.isprintable() else " " for c in refusal.reason)
        description = description.replace("\\", "").replace('"', "'")
        parts.append(f'error_description="{description}"')
    if metadata_url:
        parts.append(f'resource_metadata="{metadata_url}"')
    return ", ".join(parts).encode("latin-1", "replace")
