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
