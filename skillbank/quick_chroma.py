"""Chroma imports faster in a process that serves: without `overrides`' signature checks.

Why: `import chromadb` is the largest part of a cold start after mcp's own import (#14, #27).
A quarter of it (0.2-0.3 CPU-s here, more under load) is the `overrides` package checking, at
import time, that each of the ~120 methods Chroma marks `@override` matches the signature of
the method it overrides: it disassembles the calling frame to find the base classes and
compares signatures. That is a check for Chroma's developers; it finds nothing in a released
Chroma, and it changes no behaviour (`@override` returns the method unchanged either way).

`skip_override_checks()` makes `overrides.override`/`overrides.overrides` mark the method as
the real decorator does (`__override__ = True`, which `EnforceOverrides` looks for) and skip
the checks. It is called by the processes that start serving a root (the MCP server, the
CLI's background owner) before Chroma is imported; `import skillbank` does not call it, so a
program embedding skillbank keeps its libraries as they are. `SKILLBANK_CHECK_OVERRIDES=1`
keeps the checks.
"""

from __future__ import annotations

import os
import sys
from typing import Any, Callable

ENV = "SKILLBANK_CHECK_OVERRIDES"


def skip_override_checks() -> bool:
    """Skip `overrides`' import-time checks for Chroma; False when not done (Chroma already
    imported, `overrides` missing or of another shape, or SKILLBANK_CHECK_OVERRIDES=1)."""
    if os.environ.get(ENV, "").strip().lower() in ("1", "true", "yes"):
        return False
    if "chromadb" in sys.modules:
        return False  # too late: its classes are built
    try:
        import overrides
    except ImportError:
        return False
    if not callable(getattr(overrides, "override", None)):
        return False

    def override(method: Any = None, *, check_signature: bool = True,
                 check_at_runtime: bool = False) -> Any:
        if method is None:
            return _mark
        return _mark(method)

    overrides.override = override  # type: ignore[assignment]
    overrides.overrides = override  # type: ignore[assignment]
    return True


def _mark(method: Callable[..., Any]) -> Callable[..., Any]:
    try:
        method.__override__ = True  # type: ignore[attr-defined]
    except AttributeError:  # a builtin or slotted object: the real decorator fails the same way
        pass
    return method
