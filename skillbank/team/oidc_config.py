"""The `[oidc]` table of `skillbank server`: read, checked and turned into a caller's scope.

The configuration is the `[oidc]` table of `<root>/skillbank.toml` (or `--auth-config FILE`),
with `--oidc-issuer`, `--oidc-audience`, `--oidc-jwks-url` overriding its keys:

    [oidc]
    issuer = "https://login.example.com/realms/acme"      # the `iss` every token must carry
    audience = "skillbank"                               # the `aud` (a string or a list)
    jwks_url = "https://login.example.com/realms/acme/protocol/openid-connect/certs"
                                        # optional: else the issuer's OpenID configuration's
    principal_claim = "preferred_username"               # default "sub"
    namespace_claim = "skillbank_namespace"              # absent from a token: the principal
    groups_claim = "groups"                              # default "groups"
    default_role = "reader"                              # role of someone in no listed group
    trusted = true                                       # false: everyone's writes are pending
    algorithms = ["RS256", "ES256"]                      # default RS256, ES256, PS256, EdDSA
    require_at_jwt = true                                # default; see "Access tokens only"

    [oidc.groups.platform]                  # members read (and contribute to their own) + team
    role = "contributor"
    reads = ["team-platform"]

    [oidc.groups.platform-leads]            # reviewers of the team namespace (may write to it)
    role = "reviewer"
    reads = ["team-platform"]
    reviews = ["team-platform"]

    [oidc.groups.agents]                    # model-driven clients: their writes wait for review
    trusted = false

    [oidc.groups.auditors]                  # read every namespace ("*", as a tokens file's)
    reads = ["*"]

The role is the highest of `default_role` and the roles of the caller's listed groups; `reads`
and `reviews` are the union of those groups' (reviews only where the caller reads; a caller
whose granted reviews are all unread reviews nothing: a contributor); a listed
group with `trusted = false` makes the caller untrusted. Groups not listed grant nothing. Without `namespace_claim` the caller's own
namespace is its principal, so a principal named like a namespace the groups share (someone who
signed up as `team-platform`) is refused rather than made that namespace's owner; so is one named
like the worker's own namespace (`skillbank.team.auth.TeamIdentity`, hunt-oidc #3, session 37).

A bad table stops the worker at start-up naming the file and the key (`AuthConfigError`).
Split from `skillbank.team.auth` (which verifies tokens) at the seam between reading the
configuration and using it.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Mapping

from skillbank.errors import InvalidInputError

FACE = "mcp-http"
DEFAULT_ALGORITHMS = ("RS256", "ES256", "PS256", "EdDSA")
OIDC_KEYS = {"issuer", "audience", "jwks_url", "principal_claim", "namespace_claim",
             "groups_claim", "default_role", "trusted", "algorithms", "groups", "leeway",
             "resource_url", "required_scopes", "require_at_jwt"}
GROUP_KEYS = {"role", "reads", "reviews", "trusted"}

class AuthConfigError(InvalidInputError):
    """The `[oidc]` configuration cannot be used; the message names the file and the key."""


@dataclass(frozen=True)
class GroupGrant:
    role: str | None = None
    reads: tuple[str, ...] = ()
    reviews: tuple[str, ...] = ()
    trusted: bool | None = None


@dataclass(frozen=True)
class OidcConfig:
    issuer: str
    audience: tuple[str, ...]
    #: Empty: read `jwks_uri` from `<issuer>/.well-known/openid-configuration` on first use.
    jwks_url: str
    principal_claim: str = "sub"
    namespace_claim: str | None = None
    groups_claim: str = "groups"
    default_role: str = "reader"
    trusted: bool = True
    algorithms: tuple[str, ...] = DEFAULT_ALGORITHMS
    groups: Mapping[str, GroupGrant] = field(default_factory=dict)
    leeway: int = 30
    resource_url: str | None = None
    required_scopes: tuple[str, ...] = ()
    #: RFC 9068: only tokens whose header `typ` is `at+jwt` (false: any but a marked ID token).
    require_at_jwt: bool = True

    # Reading the table ----------------------------------------------------------------------
    @classmethod
    def from_table(cls, table: Mapping[str, Any], where: str) -> "OidcConfig":
        from skillbank.scope import ALL, Role, check_namespace

        def fail(message: str) -> AuthConfigError:
            return AuthConfigError(f"{where}: {message}")

        if not isinstance(table, Mapping):
            raise fail("[oidc] must be a table")
        unknown = set(table) - OIDC_KEYS
        if unknown:
            raise fail(f"unknown keys {', '.join(sorted(unknown))} in [oidc] (known: "
                       f"{', '.join(sorted(OIDC_KEYS))})")
        for key in ("issuer", "audience"):
            if not table.get(key):
                raise fail(f"[oidc] needs {key} (or --oidc-{key}): the issuer's URL and the "
                           "audience its tokens carry for this service")
        # resource_url too: a bad one stopped the worker with the SDK's field name
        # (`resource_server_url`), after the store had opened (hunt-oidc #6, session 26).
        for key in ("issuer", "jwks_url", "resource_url"):
            if key not in table:
                continue  # no jwks_url: found in the issuer's OpenID configuration
            if not _http_url(table[key]):
                raise fail(f"[oidc] {key} must be an http(s) URL, not {table[key]!r}")
        audience = table["audience"]
        audience = (audience,) if isinstance(audience, str) else audience
        if not isinstance(audience, (list, tuple)) or not all(
                isinstance(a, str) and a for a in audience):
            raise fail("[oidc] audience must be a string or a list of strings")
        roles = {r.value for r in Role}

        def role_of(value: Any, what: str) -> str:
            if value not in roles:
                raise fail(f"{what} {value!r} is not one of {', '.join(sorted(roles))}")
            return str(value)

        def names(value: Any, what: str) -> tuple[str, ...]:
            # "*" (every namespace) as a tokens file's --reads '*' takes it: an admin group's
            # read-all was refused with a message about writing (hunt-oidc #4, session 37).
            if not isinstance(value, list):
                raise fail(f"{what} must be a list of namespaces")
            try:
                return tuple(v if v == ALL else check_namespace(v) for v in value)
            except InvalidInputError as exc:
                raise fail(f"{what}: {exc}") from None

        groups: dict[str, GroupGrant] = {}
        raw_groups = table.get("groups", {})
        if not isinstance(raw_groups, Mapping):
            raise fail("[oidc.groups] must be a table of group = {role, reads, reviews, trusted}")
        for name, grant in raw_groups.items():
            if not isinstance(grant, Mapping):
                raise fail(f"[oidc.groups.{name}] must be a table")
            extra = set(grant) - GROUP_KEYS
            if extra:
                raise fail(f"[oidc.groups.{name}]: unknown keys {', '.join(sorted(extra))} "
                           f"(known: {', '.join(sorted(GROUP_KEYS))})")
            trusted = grant.get("trusted")
            if trusted is not None and not isinstance(trusted, bool):
                raise fail(f"[oidc.groups.{name}] trusted must be true or false")
            groups[str(name)] = GroupGrant(
                role=role_of(grant["role"], f"[oidc.groups.{name}] role") if "role" in grant
                else None,
                reads=names(grant.get("reads", []), f"[oidc.groups.{name}] reads"),
                reviews=names(grant.get("reviews", []), f"[oidc.groups.{name}] reviews"),
                trusted=trusted)
        algorithms = table.get("algorithms", list(DEFAULT_ALGORITHMS))
        if not isinstance(algorithms, list) or not algorithms or any(
                not isinstance(a, str) or a.lower() == "none" or a.upper().startswith("HS")
                for a in algorithms):
            raise fail("[oidc] algorithms must list asymmetric JWS algorithms (RS256, ES256, "
                       "PS256, EdDSA …); 'none' and shared-secret HS* are refused")
        # A name PyJWT does not know ("rs256", "RS999") started a worker that refused every
        # token, each 401 blaming the token (hunt-oidc #5, session 26).
        known = _asymmetric_algorithms()
        for name in algorithms if "algorithms" in table else ():
            if name not in known:
                raise fail(f"[oidc] algorithms: {name!r} is not an asymmetric JWS algorithm "
                           f"(names are case-sensitive: {', '.join(known)})")
        trusted = table.get("trusted", True)
        if not isinstance(trusted, bool):
            raise fail("[oidc] trusted must be true or false")
        require_at_jwt = table.get("require_at_jwt", True)
        if not isinstance(require_at_jwt, bool):
            raise fail("[oidc] require_at_jwt must be true or false")
        leeway = table.get("leeway", 30)
        if not isinstance(leeway, int) or isinstance(leeway, bool) or not 0 <= leeway <= 300:
            raise fail("[oidc] leeway must be 0-300 seconds of clock skew")
        for key in ("principal_claim", "groups_claim", "namespace_claim"):
            if key in table and (not isinstance(table[key], str) or not table[key]):
                raise fail(f"[oidc] {key} must be the name of a claim")
        required = table.get("required_scopes", [])
        if not isinstance(required, list) or not all(isinstance(s, str) for s in required):
            raise fail("[oidc] required_scopes must be a list of OAuth scopes")
        return cls(issuer=table["issuer"], audience=tuple(audience),
                   jwks_url=table.get("jwks_url") or "",
                   principal_claim=table.get("principal_claim", "sub"),
                   namespace_claim=table.get("namespace_claim"),
                   groups_claim=table.get("groups_claim", "groups"),
                   default_role=role_of(table.get("default_role", "reader"),
                                        "[oidc] default_role"),
                   trusted=trusted, algorithms=tuple(algorithms), groups=groups, leeway=leeway,
                   resource_url=table.get("resource_url"), required_scopes=tuple(required),
                   require_at_jwt=require_at_jwt)

    @property
    def shared_namespaces(self) -> frozenset[str]:
        """The namespaces `[oidc.groups]` share (reads, reviews): never anyone's own by name."""
        return frozenset(n for g in self.groups.values() for n in (*g.reads, *g.reviews))

    # Claims -> scope ------------------------------------------------------------------------
    def scope_for(self, claims: Mapping[str, Any]) -> Any:
        """The caller's scope from verified claims; InvalidInputError names a missing claim."""
        from skillbank.scope import Role, Scope, unread_reviews

        principal = claims.get(self.principal_claim)
        if not isinstance(principal, str) or not principal:
            raise InvalidInputError(f"the token has no {self.principal_claim!r} claim naming "
                                    "the caller (principal_claim in [oidc])")
        namespace = principal
        if self.namespace_claim and self.namespace_claim in claims:
            namespace = claims[self.namespace_claim]
            if not isinstance(namespace, str) or not namespace:
                raise InvalidInputError(f"the token's {self.namespace_claim!r} claim "
                                        "(namespace_claim) must name a namespace")
        elif principal in self.shared_namespaces:
            # The principal is often a name people choose (preferred_username): signing up as
            # a shared namespace's name must not make it one's own (to overwrite and delete).
            raise InvalidInputError(
                f"the principal {principal!r} is also the name of a shared namespace in "
                "[oidc.groups], so it cannot be this caller's own namespace; rename the "
                "account, or set namespace_claim to a claim the identity provider controls")
        raw = claims.get(self.groups_claim, [])
        member_of = raw.split() if isinstance(raw, str) else raw if isinstance(raw, list) else []
        grants = [self.groups[g] for g in member_of if isinstance(g, str) and g in self.groups]
        role = Role(self.default_role)
        for grant in grants:
            if grant.role is not None and Role(grant.role).rank > role.rank:
                role = Role(grant.role)
        reads = tuple(dict.fromkeys(n for g in grants for n in g.reads))
        # A group's reviews count where the caller reads (`scope.unread_reviews`): a review
        # finds only what its reader sees, and a scope reviewing more is refused.
        granted = [n for g in grants for n in g.reviews]
        unread = set(unread_reviews(namespace, reads, granted))
        reviews = tuple(dict.fromkeys(n for n in granted if n not in unread))
        if granted and not reviews and role.rank > Role.CONTRIBUTOR.rank:
            # Every granted review dropped: empty `reviews` would mean "all it reads", more
            # than any group granted (review 1 #1, session 32). It reviews nothing: the role
            # below reviewer is how a scope says so.
            role = Role.CONTRIBUTOR
        trusted = self.trusted and all(g.trusted is not False for g in grants)
        return Scope(principal=principal, namespace=namespace, reads=reads, role=role,
                     trusted=trusted, face=FACE, reviews=reviews)


def _http_url(value: Any) -> bool:
    """Whether `value` is an absolute http(s) URL with a host (what the SDK's AnyHttpUrl takes)."""
    from urllib.parse import urlsplit

    if not isinstance(value, str) or not value.startswith(("https://", "http://")):
        return False
    try:
        return bool(urlsplit(value).hostname)
    except ValueError:
        return False


def _asymmetric_algorithms() -> tuple[str, ...]:
    """The JWS algorithm names PyJWT verifies with a public key (not none, not HS*)."""
    from jwt.algorithms import get_default_algorithms

    return tuple(sorted(name for name in get_default_algorithms()
                        if name != "none" and not name.startswith("HS")))


def _oidc_table(data: Mapping[str, Any], path: str | Path, explicit: bool) -> dict[str, Any]:
    """The `[oidc]` table of a parsed file. A file named with `--auth-config` must have one,
    and `[OIDC]` (TOML keys are case-sensitive) is refused in any file: either was ignored,
    and the worker served /mcp with no authentication at all (hunt-oidc #9, session 26)."""
    if "oidc" in data:
        table = data["oidc"]
        if not isinstance(table, Mapping):
            raise AuthConfigError(f"{path}: [oidc] must be a table")
        return dict(table)
    misspelt = [key for key in data if isinstance(key, str) and key.lower() == "oidc"]
    if misspelt:
        raise AuthConfigError(f"{path}: [{misspelt[0]}] is not [oidc] (TOML names are "
                              "case-sensitive); rename it [oidc]")
    if explicit:
        tables = ", ".join(f"[{key}]" for key in data if isinstance(data[key], Mapping))
        raise AuthConfigError(
            f"{path} (--auth-config) has no [oidc] table"
            + (f" (it has {tables})" if tables else " (its keys must follow an [oidc] line)")
            + "; without one this worker would serve with no OIDC authentication")
    return {}


def load_oidc(path: str | Path | None, overrides: Mapping[str, Any]) -> OidcConfig | None:
    """The `[oidc]` table of `path` (a skillbank.toml or any TOML file) with `overrides` (from
    the command line) on top; None when neither configures OIDC. A file named explicitly
    (`overrides["explicit_file"]`, --auth-config) must exist and have an `[oidc]` table."""
    table: dict[str, Any] = {}
    where = "command line"
    if path is not None and Path(path).is_file():
        try:
            import tomllib
        except ImportError:  # Python 3.10
            import tomli as tomllib  # type: ignore[no-redef]
        where = str(path)
        try:
            data = tomllib.loads(Path(path).read_text(encoding="utf-8-sig"))
        except (OSError, UnicodeDecodeError, ValueError) as exc:
            raise AuthConfigError(f"{path} is not valid TOML: {exc}") from None
        table = _oidc_table(data, path, bool(overrides.get("explicit_file")))
    elif path is not None and overrides.get("explicit_file"):
        raise AuthConfigError(f"auth config {path} does not exist")
    # An empty value (an unset `${VAR:-}` in compose.yaml) configures nothing.
    table.update({k: v for k, v in overrides.items() if v not in (None, "")
                  and k != "explicit_file"})
    if not table:
        return None
    return OidcConfig.from_table(table, where)
