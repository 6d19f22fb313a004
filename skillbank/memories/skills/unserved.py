"""Skills that leave the index because this process does not serve their folder, named.

A Python process that opened the root with `skill_roots=[corpus]` indexed 1,746 skills; the next
CLI command, which serves only the root's own folders, dropped them without a word and answered
"No skill fits" (scale hunt, session 18). The sync still drops them (the index is what this
process serves), and says which folder went and how to keep it.

Except the bundled skills in an index the deployment's processes share (a Chroma server) when
this process does not serve the bundled folder: the workers serve them. A Python script's open
(`include_bundled` defaults to False there) deleted them from the shared index (7 -> 0) until a
worker synced again, and every open and sync after flipped them (hunt-teamchurn #4, session
33). An index of this process alone still drops them when it stops serving that folder.
"""

from __future__ import annotations

from collections import Counter
from typing import Any

from skillbank.records import Finding


def others_serve(index: Any, meta: dict[str, Any] | None, roots: Any) -> bool:
    """The indexed skill (`meta`) is a bundled one that other processes of the deployment
    serve from this shared `index`, and this library (`roots`) does not serve it: it stays."""
    from skillbank.memories.skills.fit import is_bundled

    return (bool(getattr(index, "shared", False)) and is_bundled((meta or {}).get("root"))
            and not any(is_bundled(str(root)) for root, _ in roots))


def unserved(removed: list[str], metas: dict[str, Any], roots: Any) -> list[Finding]:
    """A warning per folder whose skills (`removed`, with their index `metas`) left the index
    because it is not among `roots` (the library's (folder, writable) pairs)."""
    served = {str(root) for root, _ in roots}
    gone = Counter(str((metas.get(n) or {}).get("root") or "") for n in removed)
    return [Finding(severity="warning", code="root-not-served", path=root, message=(
        f"{count} skills indexed from {root} left the index: this process does not serve that "
        "folder (give it with --skills-dir, or add it to skill_roots in skillbank.toml)"))
        for root, count in sorted(gone.items()) if root and root not in served]
