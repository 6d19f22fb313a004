"""skillbank: durable memory for AI agents — skills, experiences and guidelines, backed by Chroma.

`import skillbank` is light on purpose: Chroma, onnxruntime, mcp and the agent frameworks load
when first used.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

__version__ = "0.1.0"
__all__ = ["Role", "Scope", "Skillbank", "__version__"]

if TYPE_CHECKING:
    from skillbank.bank import Skillbank
    from skillbank.scope import Role, Scope


def __getattr__(name: str) -> Any:
    if name == "Skillbank":
        from skillbank.bank import Skillbank

        return Skillbank
    if name in ("Scope", "Role"):  # who is asking: see docs/scope.md (stdlib only, light)
        from skillbank import scope

        return getattr(scope, name)
    raise AttributeError(f"module 'skillbank' has no attribute {name!r}")
