"""Helpers shared by the benchmarks: where the offline model and the shared data live."""

from __future__ import annotations

import os
from pathlib import Path

SHARED = Path(__file__).resolve().parents[2] / "shared"


def default_model_dir() -> str | None:
    """`SKILLBANK_MODEL_DIR`, else the copy in ../shared/models, else Chroma's own cache."""
    if os.environ.get("SKILLBANK_MODEL_DIR"):
        return os.environ["SKILLBANK_MODEL_DIR"]
    shared = SHARED / "models" / "all-MiniLM-L6-v2"
    return str(shared) if shared.is_dir() else None


class HitTally:
    """Per kind of request: asked, found, first, others returned, any returned. For hand-written
    sets where a request asks for one record (its id) or for none (an unrelated request, whose
    answers are all false hits): `unread_recall.py` and `unread_guidelines.py` counted this twice."""

    def __init__(self) -> None:
        self.rows: dict[tuple[str, ...], list[int]] = {}

    def add(self, key: tuple[str, ...], got: list[str], wanted: str | None) -> bool:
        """Count one answer; True when it is right (the wanted id among `got`, or nothing
        returned for an unrelated request)."""
        row = self.rows.setdefault(key, [0, 0, 0, 0, 0])
        row[0] += 1
        row[4] += bool(got)
        if wanted is None:
            row[3] += len(got)
            return not got
        row[1] += wanted in got
        row[2] += bool(got) and got[0] == wanted
        row[3] += sum(hit != wanted for hit in got)
        return wanted in got

    def print(self, columns: list[tuple[str, int]], others: str, unrelated: str) -> None:
        """One line per key: `columns` name and width the key's parts; a kind starting with
        "unrelated" shows how many of its requests got any answer (`unrelated` names it)."""
        head = " ".join(f"{name:{width}}" for name, width in columns)
        print(f"{head} {'asked':>5} {'found':>5} {'first':>5} {others:>{len(others)}}")
        for key, (asked, found, first, other, any_) in self.rows.items():
            label = " ".join(f"{part:{width}}" for part, (_n, width) in zip(key, columns))
            if key[-1].startswith("unrelated"):
                print(f"{label} {asked:5} {'-':>5} {'-':>5} {other:{len(others)}}   ({any_} "
                      f"{unrelated})")
            else:
                print(f"{label} {asked:5} {found:5} {first:5} {other:{len(others)}}")
