"""Skill drafts in the files column: `<root>/drafts/<name>/` and `.ledger.jsonl`, as always.

The drafts memory (`skillbank.memories.skills.drafts`) writes and moves the folders itself, since
a person reads and edits a draft there before adopting it; this column only says where the
ledger is and that nothing else needs copying (`refresh`, `put` and `close` do nothing more).
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from skillbank.fsutil import append_line

LEDGER = ".ledger.jsonl"


class FileDrafts:
    def __init__(self, folder: str | Path) -> None:
        self.folder = Path(folder)

    def ledger(self) -> list[dict[str, Any]]:
        """Every proposal, adoption and discard with its source ids, oldest first."""
        path = self.folder / LEDGER
        if not path.is_file():
            return []
        out = []
        for raw in path.read_text(encoding="utf-8", errors="replace").splitlines():
            try:
                event = json.loads(raw)
            except ValueError:
                continue  # a torn last line
            if isinstance(event, dict) and isinstance(event.get("sources"), list):
                out.append(event)
        return out

    def note(self, entry: dict[str, Any]) -> None:
        append_line(self.folder / LEDGER, json.dumps(entry))

    def refresh(self) -> None:
        """The folders are the drafts: nothing to bring in."""

    def put(self, name: str, files: dict[str, str], sources: list[str]) -> None:
        """The folder was written by the memory: it is the draft."""

    def close(self, name: str, status: str) -> None:
        """The memory moved the folder under `.closed/`: nothing else holds it."""

    def erase(self, ids: set[str]) -> list[str]:
        """The drafts drawn from `ids` are deleted from the folder by `erase_drafts`."""
        return []
