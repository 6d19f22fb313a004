"""Serving processes import Chroma without `overrides`' developer-time signature checks
(skillbank/quick_chroma.py, #27): Chroma works the same, and the switch is refused once Chroma
is imported or when SKILLBANK_CHECK_OVERRIDES=1 keeps the checks."""

from __future__ import annotations

import os
import subprocess
import sys

PROBE = """
import sys
from skillbank.quick_chroma import skip_override_checks
print("skipped" if skip_override_checks() else "kept")
import chromadb
from chromadb.api.segment import SegmentAPI
assert getattr(SegmentAPI.heartbeat, "__override__", False), "override marks are lost"
client = chromadb.PersistentClient(path=sys.argv[1])
col = client.create_collection("quick", embedding_function=None)
col.add(ids=["a", "b"], embeddings=[[1.0, 0.0], [0.0, 1.0]], documents=["x", "y"])
hits = col.query(query_embeddings=[[0.9, 0.1]], n_results=1)
print(hits["ids"][0][0], skip_override_checks())
"""


def run(tmp_path, **env: str) -> list[str]:
    base = {k: v for k, v in os.environ.items() if not k.startswith("SKILLBANK_")}
    done = subprocess.run([sys.executable, "-c", PROBE, str(tmp_path / "chroma")],
                          capture_output=True, text=True, timeout=300,
                          env={**base, "ANONYMIZED_TELEMETRY": "False", **env})
    assert done.returncode == 0, done.stderr[-3000:]
    return done.stdout.split()


def test_chroma_works_without_the_import_time_checks(tmp_path):
    assert run(tmp_path) == ["skipped", "a", "False"]  # False: too late once Chroma is in


def test_the_checks_can_be_kept(tmp_path):
    assert run(tmp_path, SKILLBANK_CHECK_OVERRIDES="1") == ["kept", "a", "False"]
