"""One scope per call: who is asking, whose memory they read and write, and what they may change.

A face (MCP session or HTTP token, an adapter's run config, the CLI, the memory browser) resolves
the caller's `Scope` once and activates it around the call (`using(scope)` or a scoped view of
the bank, `bank.scoped(scope)`). The facade and the memories read it with `current()`; the
client wire carries it to the owner process unchanged (`to_wire` / `from_wire`), so an owner
never substitutes its own namespace for a client's.

Why a context variable and not a parameter on every method: the memories are reached through
the facade by many paths (`bank.skills.search`, `bank.context_for`, background writes, the
owner's dispatcher), and a parameter threaded through each is one forgotten argument away from a
cross-user leak — which is exactly the bug this module exists to end. A context variable is set
at one place per face and cannot be dropped by a call in between; background threads take a
copy of the context with the work (`skillbank.background`).

Rules every memory follows:
- `namespace=None` means the caller's own namespace for writes and the caller's readable
  namespaces for reads (`write_namespace(None)`, `read_namespaces(None)`).
- An id outside `read_namespaces()` is "not found" (no existence oracle), never changed.
- Only `Role.REVIEWER` and `Role.ADMIN` approve, reject, or change another principal's items;
  an untrusted caller's writes are pending and its votes are kept apart.
- Pending items are shown only to whoever may review them (`can_review`): a contributor, trusted
  or not, lists none, and `get` of a pending id is "not found" to it (pending records carry no
  principal, so "its own" cannot be told apart from another untrusted client's in the same
  namespace; showing none is the safe answer). A write still answers its writer (the ids and
  status "pending"), and the memory's own reads inside a write skip this check.

`"*"` in `reads` (or `reviews`) means every namespace. The bank's own default scope — the
operating-system user who opened the root — is admin of its namespace with `reads=("*",)`:
that user owns every file under the root anyway, so a single user's bank behaves as before
(`namespace=None` is the bank's namespace, an explicit namespace or `"*"` reaches any). Isolation
between users comes from the scope a face activates for each of them (`bank.scoped(scope)`, a
token, an adapter's `"{user_id}"`), never from which process happens to own the root.
"""

from __future__ import annotations

import contextlib
import contextvars
import getpass
import re
from dataclasses import dataclass, field, replace
from enum import Enum
from typing import Any, Iterator

#: A namespace is data, never syntax or a path: 1-128 printable characters (letters of any
#: script, digits, spaces inside, punctuation such as `/ @ . -`), no surrounding whitespace, no
#: control or invisible characters, and not `"*"` (which means "every namespace" to a read).
MAX_NAMESPACE = 128
#: In `reads` / `reviews` (and as a read's `namespace`): every namespace.
ALL = "*"
PRINCIPAL_PATTERN = re.compile(r"^[^\x00-\x1f\x7f]{1,200}$")


class Role(str, Enum):
    """What a principal may do; each role includes the ones before it."""

    READER = "reader"            # search, recall, read what its scope holds
    CONTRIBUTOR = "contributor"  # also writes its own namespace (pending when untrusted)
    REVIEWER = "reviewer"        # also approves/rejects pending items, edits others' items
    ADMIN = "admin"              # also forgets anything in scope, prunes, reindexes

    @property
    def rank(self) -> int:
        return _RANKS[self]

    def allows(self, needed: "Role") -> bool:
        return self.rank >= needed.rank


_RANKS = {Role.READER: 0, Role.CONTRIBUTOR: 1, Role.REVIEWER: 2, Role.ADMIN: 3}


def check_namespace(namespace: Any) -> str:
    """A namespace name, or InvalidInputError naming the problem."""
    if isinstance(namespace, str) and 0 < len(namespace) <= MAX_NAMESPACE \
            and namespace.isprintable() and namespace == namespace.strip() and namespace != ALL:
        return namespace
    from skillbank.errors import InvalidInputError

    if namespace == ALL:
        raise InvalidInputError('namespace "*" means every namespace: give one namespace to '
                                "write to (or read with '*' where a list or count accepts it)")
    raise InvalidInputError(
        f"invalid namespace {str(namespace)[:80]!r}: use 1-{MAX_NAMESPACE} printable characters "
        "with no surrounding spaces")


@dataclass(frozen=True)
class Scope:
    """Who is asking (`principal`), the namespace they write, the ones they read, their role.

    `trusted=False` marks an untrusted contributor (e.g. a model-driven MCP client): its writes
    are pending until a reviewer approves them, and its votes never move trusted state.
    """

    principal: str = "local"
    namespace: str = "default"
    reads: tuple[str, ...] = ()
    role: Role = Role.ADMIN
    trusted: bool = True
    face: str = "python"
    #: Namespaces this principal reviews (approve/reject pending items); empty means the ones it
    #: reads, when its role is reviewer or admin. Only namespaces it reads (`unread_reviews`).
    reviews: tuple[str, ...] = field(default=())

    def __post_init__(self) -> None:
        from skillbank.errors import InvalidInputError

        if not isinstance(self.principal, str) or not PRINCIPAL_PATTERN.match(self.principal):
            raise InvalidInputError(f"invalid principal {self.principal!r}")
        check_namespace(self.namespace)
        for key in ("reads", "reviews"):
            value = getattr(self, key)
            if isinstance(value, str) or not isinstance(value, (tuple, list)):
                raise InvalidInputError(f"scope {key} must be a list of namespaces")
            names = tuple(dict.fromkeys(n if n == ALL else check_namespace(n) for n in value))
            if key == "reads":
                names = tuple(n for n in names if n != self.namespace)
            object.__setattr__(self, key, names)
        unread = unread_reviews(self.namespace, self.reads, self.reviews)
        if unread:
            raise InvalidInputError(
                f"a scope reviews only namespaces it reads; {self.principal} does not read "
                f"{', '.join(repr(n) for n in unread)}: add them to its reads")
        if not isinstance(self.role, Role):
            try:
                object.__setattr__(self, "role", Role(self.role))
            except ValueError:
                raise InvalidInputError(
                    f"invalid role {self.role!r}: one of "
                    + ", ".join(r.value for r in Role)) from None
        if not isinstance(self.trusted, bool):
            raise InvalidInputError("trusted must be true or false")
        if not isinstance(self.face, str) or not PRINCIPAL_PATTERN.match(self.face) \
                or len(self.face) > 40:
            raise InvalidInputError(f"invalid face {self.face!r}")

    # What it may see and change -------------------------------------------------------------
    @property
    def readable(self) -> tuple[str, ...]:
        """The namespaces a read with `namespace=None` covers: its own first, then the shared
        ones it names (a `"*"` grant is not listed: it is `reads_all`)."""
        return (self.namespace, *(n for n in self.reads if n != ALL))

    @property
    def reads_all(self) -> bool:
        """True when this scope may read every namespace (`"*"` in `reads`)."""
        return ALL in self.reads

    @property
    def reviewable(self) -> tuple[str, ...]:
        """Namespaces whose pending items this scope approves or rejects (`("*",)`: all)."""
        if not self.trusted or not self.role.allows(Role.REVIEWER):
            return ()
        if self.reviews:
            return self.reviews
        return (ALL,) if self.reads_all else self.readable

    @property
    def listing_key(self) -> tuple[tuple[str, ...], bool, tuple[str, ...]]:
        """What a namespace-wide list read with `namespace=None` (guideline topics, playbooks,
        counts) depends on: the namespaces read, whether every one is, and those whose pending
        items are shown. Scopes alike here see the same lists whatever their principal, face,
        or a role below reviewer: the MCP change monitor computes one view per key, not per
        token (50 tokens of one namespace cost 50 views every second, review F3, session 24).
        Principal-bound reads (a principal's own drafts or experiences) are not covered."""
        return self.readable, self.reads_all, self.reviewable

    def can_read(self, namespace: str | None) -> bool:
        return namespace in self.readable or (self.reads_all and isinstance(namespace, str))

    def can_write(self) -> bool:
        return self.role.allows(Role.CONTRIBUTOR)

    def can_review(self, namespace: str | None) -> bool:
        reviewable = self.reviewable
        return namespace in reviewable or (ALL in reviewable and isinstance(namespace, str))

    def can_change(self, namespace: str | None) -> bool:
        """May this scope delete or overwrite an item of `namespace` (not only add to it)?

        A trusted contributor may, in its own namespace; anything else needs the reviewer role
        for that namespace. An untrusted caller never deletes."""
        if not self.trusted:
            return False
        if namespace == self.namespace and self.role.allows(Role.CONTRIBUTOR):
            return True
        return self.can_review(namespace)

    def untrusted(self) -> "Scope":
        """This scope, untrusted: what `trusted=False` on a call means. The same principal and
        namespaces; its writes wait as pending, its votes are kept apart, and it never
        reviews or deletes (`reviewable` is empty and `can_change` false while untrusted)."""
        return self if not self.trusted else replace(self, trusted=False)

    def write_namespace(self, namespace: str | None = None) -> str:
        """Where a write goes: the caller's own namespace, or one it reviews (admins, reviewers).

        None means the caller's own. Any other namespace needs the reviewer role for it;
        otherwise PermissionDeniedError (a write is never silently redirected)."""
        from skillbank.errors import PermissionDeniedError

        self.require(Role.CONTRIBUTOR, "write memory")
        if namespace is None or namespace == self.namespace:
            return self.namespace
        check_namespace(namespace)
        if self.can_review(namespace):
            return namespace
        raise PermissionDeniedError(
            f"{self.principal} writes only to namespace {self.namespace!r}, not {namespace!r}")

    def read_namespaces(self, namespace: str | None = None) -> tuple[str, ...]:
        """What a read covers: every readable namespace (None), or the one asked for if readable.

        A namespace outside the scope reads as empty (never an error saying it exists).
        `("*",)` (only for `namespace="*"` with a `"*"` grant) means every namespace: test a
        record with `covers(result, record_namespace)`, filter an index with `where(result)`."""
        if namespace is None:
            return self.readable
        if namespace == ALL:  # "all I may read", as the CLI and stats ask
            return (ALL,) if self.reads_all else self.readable
        check_namespace(namespace)
        return (namespace,) if self.can_read(namespace) else ()

    def require(self, role: Role, action: str) -> None:
        from skillbank.errors import PermissionDeniedError

        if not self.role.allows(role):
            raise PermissionDeniedError(
                f"{action} needs the {role.value} role; {self.principal} is a {self.role.value}")

    # Over the wire ----------------------------------------------------------------------------
    def to_wire(self) -> dict[str, Any]:
        return {"principal": self.principal, "namespace": self.namespace,
                "reads": list(self.reads), "role": self.role.value, "trusted": self.trusted,
                "face": self.face, "reviews": list(self.reviews)}

    @classmethod
    def from_wire(cls, data: Any) -> "Scope":
        """A scope sent by a client: every field checked, anything malformed InvalidInputError."""
        from skillbank.errors import InvalidInputError

        if not isinstance(data, dict):
            raise InvalidInputError("a scope must be an object")
        if not all(isinstance(key, str) for key in data):
            raise InvalidInputError("scope fields must be named by strings")
        known = {"principal", "namespace", "reads", "role", "trusted", "face", "reviews"}
        unknown = set(data) - known
        if unknown:
            raise InvalidInputError(f"unknown scope fields: {', '.join(sorted(unknown))}")
        values = dict(data)
        for key in ("reads", "reviews"):
            if key in values:
                if not isinstance(values[key], (list, tuple)):
                    raise InvalidInputError(f"scope {key} must be a list of namespaces")
                values[key] = tuple(values[key])
        return cls(**values)

    def with_face(self, face: str) -> "Scope":
        return replace(self, face=face)


def unread_reviews(namespace: str, reads: Any, reviews: Any) -> list[str]:
    """The namespaces of `reviews` that a scope writing `namespace` and reading `reads` does not
    read (`"*"` in reviews needs `"*"` in reads): a review finds only what its reader sees.

    The one check of `Scope` and of the tokens file (`mcp_server.identity`). A scope reviewing
    a namespace it did not read wrote into it (a reviewer writes where it reviews) and, through
    a learn's `nearest`, read its rules, active and pending (hunt-scopes #2, session 32)."""
    if ALL in reads:
        return []
    return [n for n in dict.fromkeys(reviews) if n != namespace and n not in reads]


def covers(namespaces: tuple[str, ...], namespace: Any) -> bool:
    """Does a `read_namespaces()` result include a record of `namespace`?"""
    return namespace in namespaces or (ALL in namespaces and isinstance(namespace, str))


def where(namespaces: tuple[str, ...]) -> dict[str, Any] | None:
    """An index filter clause for a `read_namespaces()` result; None means no filter (all)."""
    if ALL in namespaces:
        return None
    if len(namespaces) == 1:
        return {"namespace": namespaces[0]}
    return {"namespace": {"$in": list(namespaces)}}


_UNTRUSTED_CACHE: dict[Scope, Scope] = {}


def caller(default_namespace: str = "default", trusted: Any = True) -> Scope:
    """The caller's scope, with a call's old `trusted=False` flag mapped onto it.

    `trusted=False` on a call narrows the caller to an untrusted contributor for that call; it
    never widens anything (`trusted=True` under an untrusted scope stays untrusted)."""
    from skillbank.errors import InvalidInputError

    if not isinstance(trusted, bool):
        raise InvalidInputError("trusted must be true or false")
    scope = current(default_namespace)
    if trusted or not scope.trusted:
        return scope
    narrowed = _UNTRUSTED_CACHE.get(scope)
    if narrowed is None:
        if len(_UNTRUSTED_CACHE) > 256:
            _UNTRUSTED_CACHE.clear()
        narrowed = _UNTRUSTED_CACHE[scope] = scope.untrusted()
    return narrowed


def narrowed(namespace: str | None, *, trusted: bool = True, face: str = "python",
             reads: tuple[str, ...] = ()) -> Scope | None:
    """The scope for a face configured with one namespace (an adapter's `"{user_id}"` run).

    With no scope active (the bank's own default, i.e. the person who set the face up), the
    face's calls run as the principal named by that namespace, a contributor of it alone: it
    reads and writes that namespace, forgets only there (when trusted), reviews nothing, and
    changes only the skills it wrote — so one user's run can never reach another user's ids or
    skills. With a scope already active (a face that resolved its caller), None: that scope
    stays, and the explicit namespace is checked against it as any other. No namespace: None.

    `reads`: namespaces the face also shows the same agent (a team's memory block beside the
    user's), which this principal then reads too: an id shown there can be looked up and rated
    (a vote on a namespace it may not change counts once, as an outsider's, never retiring).
    Writes stay in `namespace`."""
    if namespace is None or _current.get() is not None:
        return None
    check_namespace(namespace)
    key = (namespace, trusted, face, tuple(reads))
    scope = _NARROWED.get(key)
    if scope is None:
        scope = Scope(principal=namespace, namespace=namespace, role=Role.CONTRIBUTOR,
                      trusted=trusted, face=face, reads=tuple(reads))
        if len(_NARROWED) > 1024:
            _NARROWED.clear()
        _NARROWED[key] = scope
    return scope


_NARROWED: dict[tuple[str, bool, str, tuple[str, ...]], Scope] = {}


def local_principal() -> str:
    """The operating-system user: who a process that opened the root itself is acting for."""
    try:
        return getpass.getuser() or "local"
    except Exception:  # noqa: BLE001 - no passwd entry (containers): still someone
        return "local"


def default_scope(namespace: str = "default", *, trusted: bool = True,
                  face: str = "python") -> Scope:
    """The scope of a process that opened the root itself: its user, admin of its namespace,
    reading (and reviewing) every namespace (see the module docstring for why).

    `trusted=False` maps the old flag onto the roles: an untrusted contributor that may still
    read any namespace it names, as an untrusted client could before (reads change nothing)."""
    key = (namespace, trusted, face)
    scope = _DEFAULTS.get(key)
    if scope is None:
        if trusted:
            scope = Scope(principal=local_principal(), namespace=namespace, reads=(ALL,),
                          role=Role.ADMIN, face=face)
        else:
            scope = Scope(principal=f"untrusted:{face}", namespace=namespace, reads=(ALL,),
                          role=Role.CONTRIBUTOR, trusted=False, face=face)
        if len(_DEFAULTS) > 256:
            _DEFAULTS.clear()
        _DEFAULTS[key] = scope
    return scope


_DEFAULTS: dict[tuple[str, bool, str], Scope] = {}


_current: contextvars.ContextVar[Scope | None] = contextvars.ContextVar(
    "skillbank_scope", default=None)


def active() -> Scope | None:
    """The scope a face activated for this call, or None (the bank's own default applies)."""
    return _current.get()


_process_face = "python"


def set_process_face(face: str) -> None:
    """Name the face this whole process serves: the default scope's `face` from now on.

    Why: a process that runs no resolved scope (the CLI, an MCP stdio server started without
    `--namespace`) acts as the local user's default scope, whose face was always `python`, so
    the audit log could not tell a CLI command or an assistant's call from a script's. The
    entry points name themselves once (`cli`, `mcp-stdio`, `ui`); a client of another process
    carries the face in the scope it sends."""
    global _process_face
    if not isinstance(face, str) or not PRINCIPAL_PATTERN.match(face) or len(face) > 40:
        from skillbank.errors import InvalidInputError

        raise InvalidInputError(f"invalid face {face!r}")
    _process_face = face


def process_face() -> str:
    """The face of this process's default scope (`set_process_face`; `python` unless named)."""
    return _process_face


def current(default_namespace: str = "default") -> Scope:
    """The caller's scope: the active one, else the local user as admin of `default_namespace`
    (through this process's face, `set_process_face`)."""
    scope = _current.get()
    return scope if scope is not None else default_scope(default_namespace, face=_process_face)


@contextlib.contextmanager
def using(scope: Scope | None) -> Iterator[Scope | None]:
    """Run the block as `scope` (None: leave the current scope as it is)."""
    if scope is None:
        yield _current.get()
        return
    if not isinstance(scope, Scope):
        from skillbank.errors import InvalidInputError

        raise InvalidInputError(f"expected a skillbank Scope, got {type(scope).__name__}")
    token = _current.set(scope)
    try:
        yield scope
    finally:
        _current.reset(token)
