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
"""

from __future__ import annotations

import contextlib
import contextvars
import getpass
import re
from dataclasses import dataclass, field, replace
from enum import Enum
from typing import Any, Iterator

NAMESPACE_PATTERN = re.compile(r"^[A-Za-z0-9][A-Za-z0-9._-]{0,63}$")
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
    from skillbank.errors import InvalidInputError

    if not isinstance(namespace, str) or not NAMESPACE_PATTERN.match(namespace):
        raise InvalidInputError(
            f"invalid namespace {namespace!r}: use 1-64 letters, digits, '.', '_' or '-', "
            "starting with a letter or digit")
    return namespace


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
    #: reads, when its role is reviewer or admin.
    reviews: tuple[str, ...] = field(default=())

    def __post_init__(self) -> None:
        from skillbank.errors import InvalidInputError

        if not isinstance(self.principal, str) or not PRINCIPAL_PATTERN.match(self.principal):
            raise InvalidInputError(f"invalid principal {self.principal!r}")
        check_namespace(self.namespace)
        object.__setattr__(self, "reads", tuple(check_namespace(n) for n in self.reads
                                                if n != self.namespace))
        object.__setattr__(self, "reviews", tuple(check_namespace(n) for n in self.reviews))
        if not isinstance(self.role, Role):
            try:
                object.__setattr__(self, "role", Role(self.role))
            except ValueError:
                raise InvalidInputError(
                    f"invalid role {self.role!r}: one of "
                    + ", ".join(r.value for r in Role)) from None
        if not isinstance(self.trusted, bool):
            raise InvalidInputError("trusted must be true or false")

    # What it may see and change -------------------------------------------------------------
    @property
    def readable(self) -> tuple[str, ...]:
        """Every namespace this scope reads: its own first, then the shared ones."""
        return (self.namespace, *self.reads)

    @property
    def reviewable(self) -> tuple[str, ...]:
        if not self.role.allows(Role.REVIEWER):
            return ()
        return self.reviews or self.readable

    def can_read(self, namespace: str | None) -> bool:
        return namespace in self.readable

    def can_write(self) -> bool:
        return self.role.allows(Role.CONTRIBUTOR)

    def can_review(self, namespace: str | None) -> bool:
        return namespace in self.reviewable

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

        A namespace outside the scope reads as empty (never an error saying it exists)."""
        if namespace is None:
            return self.readable
        if namespace == "*":  # "all I may read", as the CLI and stats ask
            return self.readable
        check_namespace(namespace)
        return (namespace,) if namespace in self.readable else ()

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
        from skillbank.errors import InvalidInputError

        if not isinstance(data, dict):
            raise InvalidInputError("a scope must be an object")
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


def local_principal() -> str:
    """The operating-system user: who a process that opened the root itself is acting for."""
    try:
        return getpass.getuser() or "local"
    except Exception:  # noqa: BLE001 - no passwd entry (containers): still someone
        return "local"


def default_scope(namespace: str = "default", *, trusted: bool = True,
                  face: str = "python") -> Scope:
    """The scope of a process that opened the root itself: its user, admin of its namespace.

    `trusted=False` maps the old flag onto the roles: an untrusted contributor."""
    if trusted:
        return Scope(principal=local_principal(), namespace=namespace, role=Role.ADMIN,
                     face=face)
    return Scope(principal=f"untrusted:{face}", namespace=namespace, role=Role.CONTRIBUTOR,
                 trusted=False, face=face)


_current: contextvars.ContextVar[Scope | None] = contextvars.ContextVar(
    "skillbank_scope", default=None)


def active() -> Scope | None:
    """The scope a face activated for this call, or None (the bank's own default applies)."""
    return _current.get()


def current(default_namespace: str = "default") -> Scope:
    """The caller's scope: the active one, else the local user as admin of `default_namespace`."""
    scope = _current.get()
    return scope if scope is not None else default_scope(default_namespace)


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
