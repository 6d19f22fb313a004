"""`skillbank reindex` on a root served from a Chroma server leaves the other processes working.

Before session 16 reindex dropped and re-created each collection it had not opened yet (to
switch embeddings), so every other open process of the root (a long-lived MCP server) held a
handle to a collection that no longer existed: every later recall, record, search and block
failed with "Collection [...] does not exist" until it restarted. Now a collection is dropped
only when it was built with another embedding; otherwise it is emptied and refilled.
"""

from __future__ import annotations

import os
import subprocess
import sys

from skillbank import Skillbank
from skillbank.embeddings import HashEmbedding


def test_reindex_from_another_process_keeps_this_ones_collections(tmp_path, chroma_server):
    root = tmp_path / "root"
    bank = Skillbank.open(root, chroma_url=chroma_server, embedding_function=HashEmbedding(),
                          include_bundled=False)
    try:
        first = bank.experiences.record(task="Merge the quarterly PDF reports", outcome="success")
        env = {k: v for k, v in os.environ.items() if not k.startswith("SKILLBANK_")
               or k == "SKILLBANK_MODEL_DIR"}
        env.update(SKILLBANK_EMBEDDING="hash", SKILLBANK_CLI_OWNER="0",
                   ANONYMIZED_TELEMETRY="False")
        done = subprocess.run([sys.executable, "-m", "skillbank.cli", "--root", str(root),
                               "--chroma-url", chroma_server, "--no-bundled", "reindex"],
                              env=env, capture_output=True, text=True, timeout=300)
        assert done.returncode == 0, done.stderr
        assert [h.id for h in bank.experiences.recall("merge the pdf reports", k=2,
                                                       count_use=False)] == [first]
        second = bank.experiences.record(task="Split a PDF into pages", outcome="success")
        assert second in bank.context_for("split the pdf into pages").ids
        bank.guidelines.learn("Always compress the merged PDF.")
        assert bank.guidelines.search("merge pdf files", k=1)
    finally:
        bank.close()
