"""A process that takes over a root serves the embedding the root was served with (session 16).

The owner served the hash embedding; a client opened with the defaults (MiniLM), the owner was
killed, and the client took over with its own embedding: every later call raised
EmbeddingMismatchError and `.served.json` was rewritten to an embedding the index refuses. A
known embedding is now taken from the record; an unknown one is refused with a clear error.
"""

from __future__ import annotations

import json
import os
import signal

from owner_client import owner_process
from skillbank import Skillbank


def test_the_client_taking_over_serves_the_recorded_embedding(tmp_path):
    root = tmp_path / "root"
    root.mkdir()
    with owner_process(root) as owner:  # the hash embedding
        bank = Skillbank.open(root, include_bundled=False)  # the defaults: MiniLM
        try:
            assert bank.is_remote
            first = bank.experiences.record(task="Rotate the signing keys", outcome="success")
            os.kill(owner.pid, signal.SIGKILL)
            owner.wait(timeout=30)
            hits = bank.experiences.recall("rotate the signing keys", count_use=False)
            assert [h.id for h in hits] == [first]
            second = bank.experiences.record(task="Renew the TLS certificate", outcome="success")
            assert second in bank.experiences
        finally:
            bank.close()
    assert json.loads((root / ".served.json").read_text())["embedding"] == "skillbank-hash"
