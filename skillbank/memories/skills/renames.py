"""Skills renamed by hand: a sync that removes one name and adds another for the same skill.

Usage is keyed by name, so a curator renaming a skill by hand (its folder and its `name:`) left
its counts behind: users met `press-release` → `press-announcement` losing its two ratings (and
the next skill named `press-release` would have inherited them). A sync sees the old name go and
the new one come; it takes that for a rename, and carries the usage, when

- the new name is read from the very file the old name was indexed from (`name:` edited in
  place, or the folder moved first and the name edited in a later sync), or
- the old name's file is gone and the new skill has its description, word for word (folder
  moved and `name:` edited before one sync), and no other removed skill matches.

Anything less certain is not a rename: a new skill starts at zero, as before.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any, Iterable, Mapping


def hand_renames(removed: Iterable[str], added: Iterable[Mapping[str, Any]],
                 before: Mapping[str, Mapping[str, Any]]) -> list[tuple[str, str]]:
    """(old, new) name pairs among one sync's `removed` names and `added` skills' metadata
    (`name`, `path`, `description`); `before` is the index's metadata before the sync."""
    gone = {name: before[name] for name in removed if name in before}
    pairs, taken = [], set()
    for meta in added:
        candidates = [old for old, was in gone.items() if old not in taken
                      and _same_skill(was, meta)]
        if len(candidates) == 1:
            taken.add(candidates[0])
            pairs.append((candidates[0], str(meta["name"])))
    return pairs


def _same_skill(was: Mapping[str, Any], now: Mapping[str, Any]) -> bool:
    if str(was.get("path")) == str(now.get("path")):
        return True
    description = str(was.get("description") or "")
    return bool(description) and description == str(now.get("description") or "") \
        and not Path(str(was.get("path"))).exists()
