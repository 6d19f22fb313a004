"""Skills that leave the index because this process does not serve their folder, named.

A Python process that opened the root with `skill_roots=[corpus]` indexed 1,746 skills; the next
CLI command, which serves only the root's own folders, dropped them without a word and answered
"No skill fits" (scale hunt, session 18). The sync still drops them (the index is what this
process serves), and says which folder went and how to keep it.
"""

from __future__ import annotations

from collections import Counter
from typing import Any

from skillbank.records import Finding


def unserved(removed: list[str], metas: dict[str, Any], roots: Any) -> list[Finding]:
    """A warning per folder whose skills (`removed`, with their index `metas`) left the index
    because it is not among `roots` (the library's (folder, writable) pairs)."""
    served = {str(root) for root, _ in roots}
    gone = Counter(str((metas.get(n) or {}).get("root") or "") for n in removed)
    return [Finding(severity="warning", code="root-not-served", path=root, message=(
        f"{count} skills indexed from {root} left the index: this process does not serve that "
        "folder (give it with --skills-dir, or add it to skill_roots in skillbank.toml)"))
        for root, count in sorted(gone.items()) if root and root not in served]
