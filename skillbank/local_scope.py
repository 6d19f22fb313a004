"""The scope of a local face started for one namespace (MCP stdio, the memory browser, the CLI).

The person who starts `skillbank serve` (stdio) or `skillbank ui` owns the root's files, so by
default their session reads every namespace (`skillbank.scope.default_scope`). Started for one
namespace (`--namespace NS`), the session is that namespace's instead: it reads, writes and
reviews NS alone, as the local user (admin of NS). Two assistants or browsers started for two
users on one root — the second a client of the first's process — then never see or change each
other's memory, which is what `--namespace` promises. A CLI command given `--namespace NS`
runs as the same scope (face `cli`; hunt-docs #5, session 23).
"""

from __future__ import annotations

from typing import Any


def local_session_scope(namespace: str | None, face: str) -> Any:
    """The session's scope for `namespace`, or None (the default scope) when none was given.

    An invalid namespace raises InvalidInputError naming the problem."""
    if not namespace:
        return None
    from skillbank.scope import Role, Scope, check_namespace, local_principal

    check_namespace(namespace)
    return Scope(principal=local_principal(), namespace=namespace, role=Role.ADMIN,
                 trusted=True, face=face, reviews=(namespace,))
