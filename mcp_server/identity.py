"""HTTP identity for one host: bearer tokens mapped to principals, each with its own scope.

`skillbank serve --transport http --tokens FILE` lets a small team share one server: each
person's token maps to a principal with the namespace it writes, the namespaces it also reads
(a team's), its role and whether it is trusted; every MCP request then runs in that
principal's `skillbank.scope.Scope` (the guard activates it around the request, and the MCP SDK
carries the request's context variables to the tool that answers it).

The tokens file (TOML, or JSON when its name ends in .json) stores only SHA-256 hashes:

    [principals.alice]
    sha256 = "9f86d081…"          # sha256 of the token, hex; the token itself is never stored
    namespace = "alice"
    reads = ["team"]              # optional: namespaces shared with alice
    role = "contributor"          # reader | contributor | reviewer | admin
    trusted = true                # optional (default true): false makes writes pending

`skillbank tokens add NAME --namespace … --role …` writes an entry and prints the new token
once. The file is refused at start-up when group or others can read or write it, or when it is
malformed, with an error naming the file and the problem. It is re-read when it changes (a
token added while the server runs works at once; a broken edit keeps the last good version, is
logged, and shows on a team worker's /readyz and `skillbank_tokens_file_stale`; a deleted file
revokes every token until it is back). Team mode across machines (OIDC/JWT) only adds another way to find the principal;
the scope it produces is the same.
"""

from __future__ import annotations

import hashlib
import json
import logging
import os
import re
import secrets
import stat
import sys
import threading
from contextlib import contextmanager
from contextvars import ContextVar
from dataclasses import dataclass, field
from datetime import datetime, timezone
from pathlib import Path
from typing import Any, Callable, Iterator, Mapping

from skillbank.errors import InvalidInputError

log = logging.getLogger("skillbank.mcp")

FACE = "mcp-http"
NAME_PATTERN = re.compile(r"^[A-Za-z0-9][A-Za-z0-9._@-]{0,63}$")
_HEX64 = re.compile(r"^[0-9a-f]{64}$")
FIELDS = {"sha256", "namespace", "reads", "role", "trusted", "reviews"}
TOKEN_PREFIX = "sbk_"


class _Unconfirmed:
    """A principal's standing while the tokens file is missing (see `TokensFile.standing_of`)."""

    def __repr__(self) -> str:
        return "UNCONFIRMED"


#: What a standing check answers while the tokens file is missing: neither in force nor
#: revoked. What outlives a request (a listen stream, a handshake session) hears nothing
#: meanwhile but is not dropped (review F4, session 25).
UNCONFIRMED: Any = _Unconfirmed()


class TokensFileError(InvalidInputError):
    """The tokens file cannot be used; the message names the file and the problem."""


def hash_token(token: str) -> str:
    return hashlib.sha256(token.encode("utf-8")).hexdigest()


def new_token() -> str:
    """A fresh bearer token (256 random bits, URL-safe)."""
    return TOKEN_PREFIX + secrets.token_urlsafe(32)


@dataclass(frozen=True)
class Principal:
    """One entry of the tokens file."""

    name: str
    sha256: str
    namespace: str
    reads: tuple[str, ...] = ()
    role: str = "contributor"
    trusted: bool = True
    reviews: tuple[str, ...] = ()
    #: `reviews` the file gives a role below reviewer: ignored (they never granted anything;
    #: `tokens add` wrote them before session 27), shown by `tokens list`, not written back.
    ignored_reviews: tuple[str, ...] = field(default=(), compare=False)

    def scope(self) -> Any:
        from skillbank.scope import Scope

        return Scope(principal=self.name, namespace=self.namespace, reads=self.reads,
                     role=self.role, trusted=self.trusted, face=FACE, reviews=self.reviews)

    def to_entry(self) -> dict[str, Any]:
        entry: dict[str, Any] = {"sha256": self.sha256, "namespace": self.namespace}
        if self.reads:
            entry["reads"] = list(self.reads)
        entry["role"] = self.role
        entry["trusted"] = self.trusted
        if self.reviews:
            entry["reviews"] = list(self.reviews)
        return entry


# Reading ------------------------------------------------------------------------------------------
def check_permissions(path: Path) -> None:
    """Refuse a tokens file that group or others may read or write (POSIX only)."""
    if sys.platform == "win32":
        return
    mode = stat.S_IMODE(path.stat().st_mode)
    if mode & 0o077:
        who = " and ".join(w for w, bits in (("its group", 0o070), ("others", 0o007))
                           if mode & bits)
        raise TokensFileError(
            f"tokens file {path} can be read or written by {who} (mode {mode:04o}); it holds "
            f"the hashes every token is checked against: run `chmod 600 {path}`")


def _parse(path: Path, raw: bytes) -> Mapping[str, Any]:
    if path.suffix.lower() == ".json":
        try:
            data = json.loads(raw.decode("utf-8-sig"))  # a BOM (Windows editors) is no error
        except (UnicodeDecodeError, ValueError) as exc:
            raise TokensFileError(f"tokens file {path} is not valid JSON: {exc}") from None
    else:
        try:
            import tomllib
        except ImportError:  # Python 3.10
            import tomli as tomllib  # type: ignore[no-redef]
        try:
            data = tomllib.loads(raw.decode("utf-8-sig"))
        except (UnicodeDecodeError, ValueError) as exc:
            raise TokensFileError(f"tokens file {path} is not valid TOML: {exc}") from None
    if not isinstance(data, dict):
        raise TokensFileError(f"tokens file {path}: expected a table of principals")
    return data


def parse_principals(path: Path, raw: bytes, *,
                     problems: dict[str, str] | None = None) -> dict[str, Principal]:
    """sha256 -> Principal, or TokensFileError naming the entry and what is wrong with it.

    `problems` (for `tokens remove`): an entry refused only for its `reviews` (a reviewer
    reviewing a namespace it does not read) is kept as written and its problem put there by
    name, so the operator can remove it with the CLI instead of by hand."""
    from skillbank.scope import Role, check_namespace

    data = _parse(path, raw)
    unknown = set(data) - {"principals"}
    if unknown:
        raise TokensFileError(f"tokens file {path}: unknown top-level keys "
                              f"{', '.join(sorted(unknown))}; entries go under [principals.NAME]")
    table = data.get("principals", {})
    if not isinstance(table, dict):
        raise TokensFileError(f"tokens file {path}: 'principals' must be a table of NAME = entry")
    by_hash: dict[str, Principal] = {}
    for name, entry in table.items():
        where = f"tokens file {path}, principal {name!r}"
        if not NAME_PATTERN.match(str(name)):
            raise TokensFileError(f"{where}: a name is 1-64 letters, digits, '.', '_', '@' or "
                                  "'-', starting with a letter or digit")
        if not isinstance(entry, dict):
            raise TokensFileError(f"{where}: expected a table with sha256, namespace and role")
        extra = set(entry) - FIELDS
        if extra:
            raise TokensFileError(f"{where}: unknown keys {', '.join(sorted(extra))} (known: "
                                  f"{', '.join(sorted(FIELDS))}); tokens are never stored, "
                                  "only their sha256")
        digest = entry.get("sha256")
        if not isinstance(digest, str) or not _HEX64.match(digest):
            raise TokensFileError(f"{where}: sha256 must be the token's SHA-256 as 64 lowercase "
                                  "hex digits (`skillbank tokens add` writes it)")
        if digest in by_hash:
            raise TokensFileError(f"{where}: same token hash as {by_hash[digest].name!r}; each "
                                  "principal needs its own token")
        try:
            namespace = check_namespace(entry.get("namespace"))
            reads = _namespaces(entry.get("reads", []), "reads")
            reviews = _namespaces(entry.get("reviews", []), "reviews")
            role = entry.get("role", "contributor")
            if role not in {r.value for r in Role}:
                raise InvalidInputError(f"role {role!r} is not one of "
                                        + ", ".join(r.value for r in Role))
            trusted = entry.get("trusted", True)
            if not isinstance(trusted, bool):
                raise InvalidInputError("trusted must be true or false")
        except InvalidInputError as exc:
            raise TokensFileError(f"{where}: {exc}") from None
        principal = Principal(name=str(name), sha256=digest, namespace=namespace,
                              reads=reads, role=role, trusted=trusted, reviews=reviews)
        try:  # a hand-edited file too, not only `tokens add` (hunt-scopes #2, session 32)
            by_hash[digest] = _reviews_what_it_reads(principal)
        except TokensFileError as exc:
            problem = (f"{where}: {exc}, in the file or with `skillbank tokens remove {name}` "
                       "then `skillbank tokens add` (dropping these reviews would widen them: "
                       "no reviews means every namespace it reads)")
            if problems is None:
                raise TokensFileError(problem) from None
            problems[principal.name], by_hash[digest] = problem, principal
            continue
        if by_hash[digest].ignored_reviews:
            log.warning("skillbank: %s: a %s reviews nothing, so its reviews = %s are ignored "
                        "(give it role reviewer to review them, or drop the line)", where,
                        principal.role, list(principal.reviews))
    return by_hash


def _namespaces(value: Any, what: str) -> tuple[str, ...]:
    """A principal's `reads` or `reviews`: namespaces, or "*" for every one (as `Scope` takes
    them); a bad entry is named with the list it is in (the namespace check alone spoke of
    "namespace '*'" for `--reads '*'`)."""
    from skillbank.scope import ALL, check_namespace

    if not isinstance(value, list):
        raise InvalidInputError(f"{what} must be a list of namespaces")
    out = []
    for item in value:
        if item == ALL:
            out.append(item)
            continue
        try:
            out.append(check_namespace(item))
        except InvalidInputError as exc:
            raise InvalidInputError(f"{what}: {exc}") from None
    return tuple(out)


class TokensFile:
    """The principals of a tokens file, re-read when the file changes (see the module doc)."""

    def __init__(self, path: str | os.PathLike) -> None:
        self.path = Path(path).expanduser()
        self._lock = threading.Lock()
        self._stamp: tuple[int, int, int] | None = None
        self._by_hash: dict[str, Principal] = {}
        #: Why the file as it is now is not in force (None: it is). A broken hand edit that
        #: removed a member left the removed token working on every worker, /readyz "ready",
        #: and only a log line said so (team hunt, session 19): /readyz and /metrics show this.
        self.problem: str | None = None
        #: When the principals in force were read (ISO 8601, UTC).
        self.read_at: str | None = None
        #: The file is not there now (its tokens are refused until it is back).
        self.missing = False
        #: The principals of the last good read (kept while the file is missing: `reserved`).
        self._last_read: dict[str, Principal] = {}
        self.reload(strict=True)

    def _read(self) -> tuple[tuple[int, int, int], dict[str, Principal]]:
        try:
            info = self.path.stat()
        except FileNotFoundError:
            raise TokensFileError(f"tokens file {self.path} does not exist; create it with "
                                  "`skillbank tokens add NAME --namespace NS --role ROLE "
                                  f"--file {self.path}`") from None
        if not self.path.is_file():
            raise TokensFileError(f"tokens file {self.path} is not a file")
        check_permissions(self.path)
        raw = self.path.read_bytes()
        return (info.st_mtime_ns, info.st_size, info.st_ino), parse_principals(self.path, raw)

    def reload(self, *, strict: bool = False) -> None:
        """Re-read the file if it changed. `strict`: raise on a bad file (start-up); otherwise
        keep the last good principals and log the problem."""
        try:
            info = self.path.stat()
            stamp = (info.st_mtime_ns, info.st_size, info.st_ino)
        except OSError:
            stamp = None
        if stamp is not None and stamp == self._stamp:
            return
        if not strict and stamp is not None and stamp[1] == 0:
            # An editor saving in place truncates first: read as "no principals", every open
            # stream was ended as revoked (review, session 26). Empty is as good as missing.
            with self._lock:
                self._stamp, self._by_hash, self.missing = stamp, {}, True
                self.problem = (f"tokens file {self.path} is empty; no token is accepted "
                                "until it holds principals again")
                log.error("skillbank: %s", self.problem)
            return
        with self._lock:
            try:
                self._stamp, self._by_hash = self._read()
                self.problem, self.missing = None, False
                self._last_read = self._by_hash
                self.read_at = datetime.now(timezone.utc).isoformat(timespec="seconds")
            except (TokensFileError, OSError) as exc:
                if strict:
                    raise TokensFileError(str(exc)) from None
                self._stamp = stamp  # do not log the same broken version on every request
                if stamp is None:  # deleted: its tokens are revoked, not kept (fail closed)
                    self._by_hash, self.missing = {}, True
                    self.problem = f"{exc}; no token is accepted until it is back"
                    log.error("skillbank: %s", self.problem)
                    return
                self.problem = (f"{exc}; still accepting the {len(self._by_hash)} tokens read "
                                f"at {self.read_at} (a principal removed in this edit still "
                                "gets in) until the file is fixed")
                log.error("skillbank: %s", self.problem)

    def status(self) -> dict[str, Any]:
        """For a worker's /readyz: whether the file on disk is the one in force (re-read now,
        so a broken edit shows without waiting for a request)."""
        self.reload()
        return {"principals": len(self._by_hash), "read_at": self.read_at,
                "in_force": self.problem is None, "problem": self.problem}

    def lookup(self, token: str) -> Principal | None:
        """The principal a bearer token maps to, or None."""
        return self.holder(hash_token(token))

    def holder(self, digest: str) -> Principal | None:
        """The principal whose token has this SHA-256 in the file as it is now, or None."""
        self.reload()
        return self._by_hash.get(digest)

    def standing_of(self, principal: Principal) -> Callable[[], Any]:
        """A check of `principal`'s scope as the file has it now: None once its token is
        removed (or re-issued), the narrowed scope after an edit of its `reads`. A stream
        opened before such an edit kept the scope of its first request and went on hearing
        the topics of namespaces it no longer reads (hunt-team #1, session 25).

        While the file is missing, UNCONFIRMED: a file replaced by a non-atomic move (gone for
        one poll) dropped every handshake session's subscriptions for good, though the same
        tokens were back a moment later (review F4, session 25)."""
        def now() -> Any:
            current = self.holder(principal.sha256)
            if current is None:
                return UNCONFIRMED if self.missing else None
            return current.scope()
        return now

    def principals(self) -> list[Principal]:
        return sorted(self._by_hash.values(), key=lambda p: p.name)

    def reserved(self) -> list[Principal]:
        """The principals whose names and namespaces no other identity may take: those in
        force, or while the file is missing the last ones read. A JWT named like a tokens-file
        principal was admitted as it while the file was away (review, session 26)."""
        self.reload()
        return self.principals() if not self.missing else \
            sorted(self._last_read.values(), key=lambda p: p.name)


# Writing (`skillbank tokens add`) -------------------------------------------------------------------
#: Seconds a `tokens add/remove` waits for another one changing the same file before `BusyError`.
CHANGE_LOCK_TIMEOUT = 60.0


@contextmanager
def changing(target: Path, timeout: float = CHANGE_LOCK_TIMEOUT) -> Iterator[None]:
    """Hold `<tokens file>.lock` from reading the file to writing its new version.

    Each change reads the file, edits its copy and renames it into place: two at once (`tokens
    remove mallory` revoking a leaked token while a script runs `tokens add newhire`) both
    succeeded and the last rename undid the other, bringing the revoked token back (hunt-mcphttp
    #1, session 36). An OS lock, released however the process ends; a sibling file, as the
    tokens file itself is replaced by each write."""
    from filelock import FileLock, Timeout

    from skillbank.errors import BusyError
    from skillbank.fsutil import make_folder

    make_folder(target.parent, f"cannot write {target}")  # a first `tokens add` makes it
    lock = FileLock(f"{target}.lock", timeout=timeout, thread_local=False)
    try:
        lock.acquire()
    except Timeout:
        raise BusyError(f"another `skillbank tokens` command is changing {target} and did not "
                        f"release {lock.lock_file} within {timeout:g} s; try again when it has "
                        "finished (nothing was changed)") from None
    try:
        yield
    finally:
        lock.release()


def read_for_change(path: Path, *,
                    problems: dict[str, str] | None = None) -> dict[str, Principal]:
    """name -> Principal of an existing tokens file, for `skillbank tokens list/add/remove`.

    A broken file is refused with its line and what that means for running servers: they keep
    the last version they could read, so a member removed in the broken edit still gets in
    (team hunt, session 19: `tokens list` only said the TOML was invalid). `problems`: see
    `parse_principals` (`tokens remove` of an entry refused for its reviews)."""
    check_permissions(path)
    try:
        found = parse_principals(path, path.read_bytes(), problems=problems).values()
    except TokensFileError as exc:
        raise _refused(exc) from None
    return {p.name: p for p in found}


def _refused(exc: Exception) -> TokensFileError:
    return TokensFileError(
        f"{exc}. Running servers still accept the tokens of the last version they could "
        "read (a principal removed in this edit still gets in; /readyz and a team worker's "
        "skillbank_tokens_file_stale show it): fix that line; nothing was changed")


def render(principals: list[Principal], *, as_json: bool) -> str:
    entries = {p.name: p.to_entry() for p in sorted(principals, key=lambda p: p.name)}
    if as_json:
        return json.dumps({"principals": entries}, indent=2) + "\n"
    lines = ["# skillbank tokens: sha256 hashes of bearer tokens, never the tokens themselves.",
             "# Keep this file private (chmod 600); `skillbank tokens add` adds entries.", ""]
    for name, entry in entries.items():
        lines.append(f"[principals.{json.dumps(name)}]")
        for key, value in entry.items():
            lines.append(f"{key} = {json.dumps(value)}")  # strings, lists, booleans: valid TOML
        lines.append("")
    return "\n".join(lines)


def add_principal(path: str | os.PathLike, name: str, *, namespace: str, role: str,
                  reads: list[str] | None = None, trusted: bool = True,
                  reviews: list[str] | None = None, replace: bool = False) -> str:
    """Add (or with `replace`, re-issue) a principal; returns its new token (shown once).

    The file is written atomically with mode 0600; an existing file must already be private
    and valid (the same checks as at start-up)."""
    target = Path(path).expanduser()
    with changing(target):  # from the read to the write (hunt-mcphttp #1, session 36)
        return _add_principal(target, name, namespace=namespace, role=role, reads=reads,
                              trusted=trusted, reviews=reviews, replace=replace)


def _add_principal(target: Path, name: str, *, namespace: str, role: str,
                   reads: list[str] | None, trusted: bool, reviews: list[str] | None,
                   replace: bool) -> str:
    """`add_principal`, run while its caller holds the file's change lock."""
    from skillbank.fsutil import atomic_write

    current: dict[str, Principal] = {}
    if target.exists():
        current = read_for_change(target)
    if not NAME_PATTERN.match(name or ""):
        raise TokensFileError(f"principal name {name!r}: use 1-64 letters, digits, '.', '_', "
                              "'@' or '-', starting with a letter or digit")
    if name in current and not replace:
        raise TokensFileError(f"principal {name!r} is already in {target}; pass --replace to "
                              "issue a new token for it (the old one stops working)")
    from skillbank.scope import Role

    if reviews and role in {r.value for r in Role} and not Role(role).allows(Role.REVIEWER):
        # A file read ignores such reviews (older files have them); asked for now: refused.
        raise TokensFileError(f"a {role} reviews nothing: give --role reviewer (or admin) to "
                              f"review {', '.join(reviews)}")
    token = new_token()
    entry = {"sha256": hash_token(token), "namespace": namespace, "reads": list(reads or []),
             "role": role, "trusted": trusted, "reviews": list(reviews or [])}
    # Validate the new entry exactly as the server will read it.
    probe = parse_principals(target, json.dumps({"principals": {name: entry}}).encode()
                             if target.suffix.lower() == ".json" else
                             render([Principal(name=name, sha256=entry["sha256"],
                                               namespace=str(namespace), reads=tuple(reads or ()),
                                               role=str(role), trusted=trusted,
                                               reviews=tuple(reviews or ()))],
                                    as_json=False).encode())
    current[name] = next(iter(probe.values()))  # reviews checked too (`parse_principals`)
    atomic_write(target, render(list(current.values()), as_json=target.suffix.lower() == ".json"),
                 mode=0o600)  # token hashes: this user only
    os.chmod(target, 0o600)
    return token


def _reviews_what_it_reads(principal: Principal) -> Principal:
    """Check `reviews` that could never be used: a namespace the principal does not read (a
    review finds only what its reader sees), or any reviews below the reviewer role. `tokens
    add --reviews team` without `--reads team` was stored and did nothing (left of session
    27): the operator believed a reviewer existed. Checked on every read of the file (start-up,
    reload, `tokens add`); the reads part is `Scope`'s own check (`scope.unread_reviews`).

    Below the reviewer role the reviews are ignored (`ignored_reviews`), not refused: older
    `tokens add` wrote them, and they never granted anything, so refusing the file locked every
    principal out (review 1 #5, session 32); `tokens add` still refuses them. A reviewer's
    unread reviews stay refused: dropping them would widen it (empty means all it reads)."""
    from dataclasses import replace

    from skillbank.scope import ALL, Role, unread_reviews

    if not principal.reviews:
        return principal
    if not Role(principal.role).allows(Role.REVIEWER):
        return replace(principal, reviews=(), ignored_reviews=principal.reviews)
    unread = unread_reviews(principal.namespace, principal.reads, principal.reviews)
    if unread:
        also = " ".join(f"--reads {n!r}" if n == ALL else f"--reads {n}" for n in unread)
        raise TokensFileError(f"a principal reviews only what it reads; {principal.name} does "
                              f"not read {', '.join(repr(n) for n in unread)}: add it to its reads "
                              f"({also})")
    return principal


# The guard's question -------------------------------------------------------------------------------
def check_bearer(tokens: TokensFile, header: str, static_ok: bool
                 ) -> tuple[Principal | None, tuple[str, bytes] | None]:
    """(principal, None) for a token of the file; (None, None) for the server's own static
    token (`--token`: the server's default scope, as before); else (None, (message, challenge))
    for the 401 the guard sends — a clear body, never a traceback."""
    scheme, _, value = header.partition(" ")
    value = value.strip()
    if scheme.lower() == "bearer" and value:
        principal = tokens.lookup(value)
        if principal is not None:
            return principal, None
        if static_ok:
            return None, None
        return None, ("unknown bearer token: it maps to no principal in this server's tokens "
                      "file; ask its admin for a token (`skillbank tokens add NAME`) and send it "
                      "as 'Authorization: Bearer <token>'",
                      b'Bearer realm="skillbank", error="invalid_token", '
                      b'error_description="the token maps to no principal"')
    return None, ("missing bearer token: this server maps each token to a principal; send "
                  "yours as 'Authorization: Bearer <token>'; this server does not use OAuth",
                  b'Bearer realm="skillbank"')


#: The current request's `standing` check (see `standing`), set by the HTTP guard.
_standing: ContextVar[Callable[[], Any] | None] = ContextVar("skillbank_standing", default=None)


def standing() -> Callable[[], Any] | None:
    """For the request running now, a check answering its caller's scope as it stands now
    (None once revoked), or None when there is nothing to re-check (the static token, stdio).
    The guard checks a token on each request only; what outlives the request (a listen
    stream, a handshake session's notifications) asks this again before each delivery
    (hunt-team #1, session 25)."""
    return _standing.get()


@contextmanager
def standing_as(check: Callable[[], Any] | None) -> Iterator[None]:
    token = _standing.set(check)
    try:
        yield
    finally:
        _standing.reset(token)


def remove_principal(path: str | os.PathLike, name: str) -> None:
    """Drop a principal from the tokens file (its token stops working); NotFoundError if absent.

    An entry refused for its reviews can be removed (how the operator fixes such a file with
    the CLI, review 1 #5, session 32); while another such entry remains, removing a principal
    is refused as on any broken file (servers keep the last good version, so it would still
    get in)."""
    from skillbank.errors import NotFoundError
    from skillbank.fsutil import atomic_write

    target = Path(path).expanduser()
    if not target.exists():
        raise NotFoundError(f"no tokens file {target}")
    with changing(target):  # from the read to the write (hunt-mcphttp #1, session 36)
        problems: dict[str, str] = {}
        current = read_for_change(target, problems=problems)
        if name not in current:
            raise NotFoundError(f"no principal {name!r} in {target}")
        if problems and name not in problems:
            raise _refused(next(iter(problems.values())))
        del current[name]
        atomic_write(target, render(list(current.values()),
                                    as_json=target.suffix.lower() == ".json"),
                     mode=0o600)  # token hashes: this user only
        os.chmod(target, 0o600)


# stdio ---------------------------------------------------------------------------------------------
def stdio_scope(namespace: str | None) -> Any:
    """The scope of a stdio session: the local user who started the server.

    Started for one namespace (`--namespace NS`), the session is that namespace's: it reads,
    writes and reviews NS alone, so two assistants started for two users on one root (the
    second a client of the first's process) never see each other's memory. Without one, the
    bank's default scope (the local user, every namespace) applies, as before: None."""
    from skillbank.local_scope import local_session_scope

    return local_session_scope(namespace, "mcp-stdio")


def remote_caller() -> bool:
    """Whether the current call came over HTTP (a token or a team worker's identity)."""
    from skillbank import scope as scopes

    return scopes.current().face == FACE


def shown_path(path: Any, root: Any) -> Any:
    """`path` as a client may see it: whole for a local (stdio) client; for an HTTP client,
    relative to the memory root when inside it, else only its last part. Remote clients,
    readers included, were shown the host's layout (`/srv/…/root/drafts/x/SKILL.md`, the
    Chroma folder, every skill root) in `skillbank://stats` and `propose_skills`."""
    if not path or not remote_caller() or "://" in str(path):
        return path  # a Chroma server's URL is no path on this host
    try:
        return str(Path(path).resolve().relative_to(Path(root).resolve()))
    except (ValueError, OSError, TypeError):
        pass
    from skillbank.memories.skills.fit import is_bundled

    # Outside the root: only its last part, marked, so the root's own `skills` and another
    # folder named `skills` (the bundled ones) are not both shown as "skills" (docs hunt).
    return "(bundled skills)" if is_bundled(str(path)) else f"…/{Path(str(path)).name}"


def shown_paths_in(text: str, root: Any, folders: Any = ()) -> str:
    """`text` (an error's message) with the memory root and each of `folders` (the skill
    roots) written as `shown_path` shows them, wherever they occur: whole for a local client.

    Errors name files: `load_skill` of a third-party skill being edited told an untrusted HTTP
    client "its SKILL.md at /srv/…/skills/zeta-one/SKILL.md does not parse", the parse error
    quoting the path again, while `skillbank://stats` hid the same folders (hunt-mcp-longlived
    #3, session 31). The server passes every error it replies with through here."""
    if not text or not root or not remote_caller():
        return text
    forms: dict[str, str] = {}
    for folder, shown in [*((f, str(shown_path(f, root))) for f in folders if f), (root, ".")]:
        if "://" in str(folder):
            continue
        for form in (str(folder).rstrip("/"), _resolved(folder)):
            if form:
                forms.setdefault(form, shown)
    for form in sorted(forms, key=len, reverse=True):  # a skill root inside the root first
        shown = forms[form]
        if shown == ".":  # inside the root: relative to it, as `shown_path` writes it
            text = re.sub(re.escape(form) + "/", "", text)
        text = re.sub(re.escape(form) + r"(?=[/\s'\"(),;:\]`]|\.(?:\s|$)|$)", lambda _m: shown,
                      text)  # ending a sentence too, not "/srv/bank.old"
    return text


def _resolved(folder: Any) -> str:
    try:
        return str(Path(folder).resolve())
    except (OSError, RuntimeError, TypeError):
        return ""


def stats_for_caller(stats: dict[str, Any]) -> dict[str, Any]:
    """`bank.stats()` with its paths shown as `shown_path` shows them."""
    if not remote_caller():
        return stats
    root = stats.get("root")
    out = dict(stats)
    out["root"] = "."
    for key in ("chroma",):
        if isinstance(out.get(key), str):
            out[key] = shown_path(out[key], root)
    if isinstance(out.get("skill_roots"), list):
        out["skill_roots"] = [shown_path(p, root) for p in out["skill_roots"]]
    return out
