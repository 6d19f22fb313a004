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


def test_another_embeddings_collections_in_a_shared_database_are_not_met_with_reindex_advice(
        tmp_path, chroma_server):
    """hunt-chroma #5, session 29: in a `chroma_database` shared with others, a collection
    built with another embedding was refused with "run `skillbank reindex`", and reindex
    (which never drops a shared database's collections) failed with the same advice. The
    error now names what to do there; the others' rows stay untouched."""
    import uuid

    import chromadb
    import pytest
    from chromadb.api.client import AdminClient

    from skillbank.errors import EmbeddingMismatchError

    host, port = chroma_server.rsplit("//", 1)[1].split(":")
    database = f"shared-{uuid.uuid4().hex[:8]}"
    settings = chromadb.config.Settings(chroma_api_impl="chromadb.api.fastapi.FastAPI",
                                        chroma_server_host=host,
                                        chroma_server_http_port=int(port))
    AdminClient(settings).create_database(database)
    others = chromadb.HttpClient(host=host, port=int(port), database=database)
    for kind in ("skills", "experiences", "guidelines"):
        others.get_or_create_collection(f"skillbank_{kind}").upsert(
            ids=["foreign-1"], embeddings=[[0.1, 0.2, 0.3]], documents=["someone else's"])
    root = tmp_path / "root"
    for step in ("open", "reindex"):
        with pytest.raises(EmbeddingMismatchError) as refused:
            bank = Skillbank.open(root, chroma_url=chroma_server, chroma_database=database,
                                  embedding_function=HashEmbedding(), include_bundled=False)
            try:
                bank.stats() if step == "open" else bank.reindex()
            finally:
                bank.close()
        said = str(refused.value)
        assert "shared with other deployments" in said and "collection_prefix" in said, said
        assert "run `skillbank reindex`" not in said, said
    for kind in ("skills", "experiences", "guidelines"):
        assert others.get_collection(f"skillbank_{kind}").get(ids=["foreign-1"])["ids"] == \
            ["foreign-1"]
