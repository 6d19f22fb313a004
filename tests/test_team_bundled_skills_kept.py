"""hunt-teamchurn #4, session 33: a Python script's `Skillbank.open` of a team deployment
(`include_bundled` defaults to False in Python) deleted the bundled skills the workers serve
from the shared Chroma index (7 -> 0) until a worker synced again; every later open and sync
flipped them back and forth, and `reindex` after a churn "changed" the index.

The rule now: in an index the deployment's processes share (a Chroma server), a process that
does not serve the bundled folder leaves the bundled skills' entries alone (the workers serve
them). A bank whose index is its own still drops them when it stops serving that folder.
Team mode has no owner-process client (its clients are workers over MCP), so this runs
in-process, on a private PostgreSQL cluster and a real `chroma run`.
"""

from __future__ import annotations

import uuid

import pytest

pytest.importorskip("psycopg")


def _open(root, chroma_url: str, database_url: str, deployment: str, bundled: bool):
    from skillbank import Skillbank
    from skillbank.embeddings import HashEmbedding

    return Skillbank.open(root, embedding_function=HashEmbedding(), include_bundled=bundled,
                          chroma_url=chroma_url, database_url=database_url,
                          deployment=deployment)


def _bundled_entries(bank) -> set[str]:
    from skillbank.memories.skills.fit import is_bundled

    got = bank.client.get_collection("skillbank_skills").get(include=["metadatas"])
    return {meta.get("parent") or i for i, meta in zip(got["ids"], got["metadatas"])
            if is_bundled(meta.get("root"))}


def test_a_script_without_bundled_skills_keeps_the_workers_bundled_skills_in_the_shared_index(
        tmp_path, chroma_server, postgres):
    from skillbank.bank import bundled_skills_dir

    if bundled_skills_dir() is None:
        pytest.skip("no bundled skills in this install")
    deployment = uuid.uuid4().hex[:12]
    root = tmp_path / "root"
    with _open(root, chroma_server, postgres.url, deployment, bundled=True) as worker:
        served = _bundled_entries(worker)
        assert served, "the worker-like bank indexed no bundled skill"
        with _open(root, chroma_server, postgres.url, deployment, bundled=False) as script:
            assert _bundled_entries(script) == served  # was empty: the script's sync deleted them
            script.sync()
            assert _bundled_entries(script) == served
            found = {hit.id for hit in script.skills.search("recall before acting", k=10)}
            assert found & served, "the script does not find what the workers serve"
        report = worker.skills.sync()
        assert not report.added and not report.changed, "the workers re-embedded them"


def test_a_bank_whose_index_is_its_own_still_drops_the_bundled_skills_it_stops_serving(tmp_path):
    from skillbank import Skillbank
    from skillbank.bank import bundled_skills_dir
    from skillbank.embeddings import HashEmbedding

    if bundled_skills_dir() is None:
        pytest.skip("no bundled skills in this install")
    root = tmp_path / "root"
    with Skillbank.open(root, embedding_function=HashEmbedding(), include_bundled=True) as bank:
        assert bank.skills.list()
    with Skillbank.open(root, embedding_function=HashEmbedding(), include_bundled=False) as bank:
        assert bank.skills.list() == []
