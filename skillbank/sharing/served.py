"""What a memory root serves — skill folders, bundled skills, model, embedding — kept in the root.

When the owner goes away, the first client to call takes the root over. It used to serve with
its own settings, so a client that had asked for an extra skill folder then silently saw none
of those skills. The owner now records what it serves in `<root>/.served.json`; a process that
takes over serves the same, and a client whose own request differs is told (`BankClient.note`,
`stats()["served_note"]`, and a `note` on search results), not only in a log line.
"""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

from skillbank.fsutil import atomic_write

SERVED_FILE = ".served.json"


def _resolved(paths: Any) -> list[str]:
    return [str(Path(p).expanduser().resolve()) for p in paths or ()]


def request(settings: Any, include_bundled: bool, embedding_function: Any = None) -> dict[str, Any]:
    """What a process asks a root to serve (its own settings)."""
    name = None
    if embedding_function is not None:
        try:
            name = str(embedding_function.name())
        except Exception:  # noqa: BLE001 - a custom function without a name: not compared
            name = None
    return {"skill_roots": _resolved(settings.skill_roots),
            "include_bundled": bool(include_bundled),
            "model_dir": str(Path(settings.model_dir).expanduser().resolve())
            if settings.model_dir else None,
            "embedding": name}


def record(root: Path, served: dict[str, Any]) -> None:
    """Write what the owner serves (atomically; the owner holds the root's lock)."""
    atomic_write(Path(root) / SERVED_FILE, json.dumps(served, indent=1))


def read(root: Path) -> dict[str, Any] | None:
    """What the root's last owner served, or None."""
    try:
        data = json.loads((Path(root) / SERVED_FILE).read_text())
    except (OSError, ValueError):
        return None
    return data if isinstance(data, dict) else None


def differences(asked: dict[str, Any], served: dict[str, Any] | None) -> list[str]:
    """What a process asked for that the root's owner does not serve, or bundled skills it
    asked to go without (empty: nothing)."""
    if not served:
        return []
    found = []
    missing = [p for p in asked.get("skill_roots") or [] if p not in (served.get("skill_roots") or [])]
    if missing:
        found.append("the skill folders " + ", ".join(missing) + " are not served")
    if asked.get("include_bundled") and not served.get("include_bundled"):
        found.append("the bundled skills are not served")
    elif asked.get("include_bundled") is False and served.get("include_bundled"):
        # Extra folders change nothing a client asked for, but skillbank's own skills are
        # routed to in its searches: a Python agent (bundled off by default) on a root that
        # `skillbank serve` owns got them without a word.
        found.append("the bundled skills are served too (this process asked without them)")
    if asked.get("embedding") and served.get("embedding") \
            and asked["embedding"] != served["embedding"]:
        found.append(f"it embeds with {served['embedding']}, not {asked['embedding']}")
    if asked.get("model_dir") and served.get("model_dir") \
            and asked["model_dir"] != served["model_dir"]:
        found.append(f"its model is {served['model_dir']}, not {asked['model_dir']}")
    return found


def note(root: Path, pid: int | None, found: list[str]) -> str | None:
    """One sentence for the caller about what differs, and what to do."""
    if not found:
        return None
    if pid == os.getpid():
        # This process took the root over: it serves what the root served. The note named it
        # as "the first process" to restart or stop, on every failover (hunt-ops #7).
        return (f"this process now serves {root} as recorded in {SERVED_FILE} (as the process "
                "before it did), so " + "; ".join(found) + ". To serve what this process asked "
                "for, stop every process on this root and start the first one with those options.")
    who = f"process {pid}" if pid else "the process that owns it"
    return (f"{root} is served by {who}, and " + "; ".join(found) + ". Start the first process "
            "on this root with the same options (or stop it and open the root again).")
