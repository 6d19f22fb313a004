"""Forgotten ids in the files column: `<root>/guidelines/.trash/forgotten.jsonl`, as before.

One JSON line per forget with id, kind, time and principal only (never an item's text); each
write rewrites older lines to those fields (`skillbank.forgetting.note_forgotten`). The
experience journal keeps its own ids-only `forget` events; this log is the guidelines'.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any


class FileForgottenIds:
    def __init__(self, path: str | Path) -> None:
        self.path = Path(path)

    def add(self, item_id: str, kind: str, at: str, principal: str | None = None) -> None:
        from skillbank.forgetting import note_forgotten

        note_forgotten(self.path, item_id, kind, at, principal)

    def list(self) -> list[dict[str, Any]]:
        """Every forget noted, oldest first: {"id", "kind", "at", "principal"}."""
        from skillbank.forgetting import FORGOTTEN_FIELDS

        out = []
        try:
            lines = self.path.read_text("utf-8").splitlines()
        except OSError:
            return []
        for raw in lines:
            try:
                data = json.loads(raw)
            except ValueError:
                continue
            if isinstance(data, dict) and isinstance(data.get("id"), str):
                out.append({k: data.get(k) for k in FORGOTTEN_FIELDS})
        return out
