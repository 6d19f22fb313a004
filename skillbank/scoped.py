"""A view of a bank whose every call runs as one caller: `bank.scoped(scope)`.

Faces that serve several people from one process (an MCP HTTP server with a token per person,
the memory browser, a LangChain app with a user per run) resolve the caller's `Scope` once and
then use `bank.scoped(scope)` exactly like the bank: `view.skills.search(...)`,
`view.experiences.record(...)`, `view.context_for(...)`, `view.rate(...)`. Each call runs
inside `skillbank.scope.using(scope)`, so the memories filter reads, place writes and check ids
by that caller; for a bank served by another process (`BankClient`), the scope travels in the
call's envelope. Nothing is copied: a view is a few bytes and as fast as the bank.

A view never widens an untrusted caller: called while an untrusted scope is active (a
`trusted=False` tool set, `using(caller(..., False))`), it runs as the untrusted form of its own
scope. Re-activating the view's trusted scope inside let an untrusted model's save_skill over
`bank.scoped(alice)` be served to the whole team, its experiences be recorded active and its
votes retire alice's rules, where the same tools over the plain bank were refused or pending.
"""

from __future__ import annotations

import functools
from typing import Any

from skillbank.scope import Scope, active, using

_MEMORIES = frozenset({"skills", "experiences", "guidelines"})


def _as(scope: Scope) -> Scope:
    """`scope`, untrusted when the active caller is (`trusted=False` narrows, never widens)."""
    caller = active()
    return scope.untrusted() if caller is not None and not caller.trusted else scope


def _bound(fn: Any, scope: Scope) -> Any:
    @functools.wraps(fn)
    def call(*args: Any, **kwargs: Any) -> Any:
        with using(_as(scope)):
            return fn(*args, **kwargs)

    return call


class _ScopedMember:
    """`view.skills` / `.experiences` / `.guidelines`: each method call runs as the scope."""

    __slots__ = ("_target", "_scope")

    def __init__(self, target: Any, scope: Scope) -> None:
        self._target = target
        self._scope = scope

    def __getattr__(self, name: str) -> Any:
        with using(_as(self._scope)):  # a property may read memory too
            value = getattr(self._target, name)
        return _bound(value, self._scope) if callable(value) else value

    def __contains__(self, item: object) -> bool:
        with using(_as(self._scope)):
            return item in self._target

    def __len__(self) -> int:
        with using(_as(self._scope)):
            return len(self._target)

    def __repr__(self) -> str:
        return f"<{self._target!r} as {self._scope.principal}>"


class ScopedBank:
    """The same API as the bank it wraps; every call runs as `scope` (see the module doc)."""

    def __init__(self, bank: Any, scope: Scope) -> None:
        if not isinstance(scope, Scope):
            from skillbank.errors import InvalidInputError

            raise InvalidInputError(f"expected a skillbank Scope, got {type(scope).__name__}")
        object.__setattr__(self, "_bank", bank)
        object.__setattr__(self, "scope", scope)

    @property
    def bank(self) -> Any:
        """The bank this view wraps (process-local plumbing: close, flush, background)."""
        return self._bank

    def scoped(self, scope: Scope) -> "ScopedBank":
        """Another caller's view of the same bank."""
        return ScopedBank(self._bank, scope)

    @property
    def audit(self) -> Any:
        """The audit log as this caller may read it (`skillbank.audit.ScopedAuditLog`): the
        bank's whole log, passed through as any value, listed every namespace's events to a
        contributor and let it append events as anyone (hunt-scope #2, session 28)."""
        from skillbank.audit import ScopedAuditLog, log_of

        return ScopedAuditLog(log_of(self._bank), lambda: _as(self.scope))

    def __getattr__(self, name: str) -> Any:
        with using(_as(self.scope)):
            value = getattr(self._bank, name)
        if name in _MEMORIES:
            return _ScopedMember(value, self.scope)
        return _bound(value, self.scope) if callable(value) else value

    def __setattr__(self, name: str, value: Any) -> None:
        raise AttributeError("a scoped view is read-only; set attributes on the bank itself")

    def close(self) -> None:
        """Nothing: other callers share the bank. Close it through `view.bank` (its owner)."""

    def __enter__(self) -> "ScopedBank":
        return self

    def __exit__(self, *exc: object) -> None:
        """Leaving a view does not close the bank: other callers share it."""

    def __repr__(self) -> str:
        return f"<{self._bank!r} as {self.scope.principal} ({self.scope.role.value})>"
