"""No embedding model on a root that holds experiences and guidelines (hunt-ops #1).

An offline machine that lost its model (a new container without the model cache, a wrong
SKILLBANK_MODEL_DIR) raised the model error from `context_for`, experience recall,
`experiences.record` and `guidelines.learn` as soon as the root held one experience; docs/mcp.md
promises every tool works by keyword. Now recall answers by keyword (and says so), a record is
journaled and searchable by keyword, a rule is learnt by the word rules, and once the model is
back the records get their vectors.
"""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from owner_client import client_bank, owner_process
from skillbank import Skillbank
from skillbank.embeddings import MiniLMEmbedding


def _populate(root: Path, minilm) -> None:
    """A root written while the model was there: an experience and a guideline."""
    with Skillbank.open(root, embedding_function=minilm, include_bundled=False) as bank:
        bank.experiences.record(task="Migrate the users table to the new schema",
                                outcome="failure", feedback="Lock the table before migrating.")
        bank.guidelines.add("Never deploy to production on Fridays.")


def _no_model(tmp_path: Path, monkeypatch) -> Path:
    """No model anywhere from here on (as test_first_run makes it): the model dir missing,
    no Chroma model cache in HOME. Returns the missing dir."""
    missing = tmp_path / "no-model-here"
    monkeypatch.setenv("SKILLBANK_MODEL_DIR", str(missing))  # an owner process inherits it
    monkeypatch.setenv("HOME", str(tmp_path / "home"))
    monkeypatch.setattr("skillbank.index_fill._warned_keyword_only", False)
    return missing


def _use_without_model(bank) -> tuple[str, list[str]]:
    """Every call the hunt saw fail; returns the new experience's id and the learnt rules."""
    recalled = bank.experiences.recall("migrate the users table")
    assert recalled and "users table" in recalled[0].record.task
    assert recalled[0].why == "keyword" and recalled.dense_complete is False
    context = bank.context_for("migrate the users table to the new schema")
    assert recalled[0].id in context.ids
    eid = bank.experiences.record(task="Rotate the expired TLS certificate on the gateway",
                                  outcome="success", feedback="Reload nginx after the swap.")
    found = bank.experiences.recall("rotate the TLS certificate")
    assert [hit.id for hit in found][:1] == [eid]
    report = bank.guidelines.learn("Always pin container images to a digest, not a tag.")
    learnt = report.ids()
    assert learnt and report.entries[0].action == "added"
    again = bank.guidelines.learn("Always pin container images to a digest, not a tag.")
    assert again.entries[0].action == "merged" and again.ids() == learnt  # the word rules
    hits = bank.guidelines.search("pin container images to a digest")
    assert hits and hits[0].id == learnt[0]
    return eid, learnt


def _dense_finds(root: Path, minilm, eid: str, gid: str) -> None:
    """The model is back: reopened, the records written without it are found by meaning."""
    with Skillbank.open(root, embedding_function=minilm, include_bundled=False) as bank:
        vector = minilm.embed_query("renew the gateway's SSL cert")
        assert eid in bank.index("experiences").dense(vector, 10)
        assert gid in bank.index("guidelines").dense(
            minilm.embed_query("reference docker images by sha256 hash"), 10)
        assert bank.search_mode() == "hybrid"


def test_without_a_model_in_process(tmp_path, monkeypatch, minilm):
    root = tmp_path / "root"
    _populate(root, minilm)
    missing = _no_model(tmp_path, monkeypatch)
    with Skillbank.open(root, embedding_function=MiniLMEmbedding(model_dir=str(missing)),
                        include_bundled=False) as bank:
        eid, learnt = _use_without_model(bank)
        assert str(missing) in (bank.index("experiences").dense_error or "")
    _dense_finds(root, minilm, eid, learnt[0])


def test_without_a_model_through_a_client_of_the_owner(tmp_path, monkeypatch, minilm):
    root = tmp_path / "root"
    _populate(root, minilm)
    _no_model(tmp_path, monkeypatch)
    with owner_process(root, minilm=True), client_bank(root) as bank:
        eid, learnt = _use_without_model(bank)
    _dense_finds(root, minilm, eid, learnt[0])


def test_records_without_a_model_get_vectors_when_it_is_back_in_process(
        tmp_path, monkeypatch, minilm, model_dir):
    """The same process: the model shows up where it was expected, and the next recall
    embeds what was staged (the journal's checkpoint waited for it)."""
    import shutil

    import skillbank.embeddings as embeddings

    root = tmp_path / "root"
    _populate(root, minilm)
    missing = _no_model(tmp_path, monkeypatch)
    with Skillbank.open(root, embedding_function=MiniLMEmbedding(model_dir=str(missing)),
                        include_bundled=False) as bank:
        eid = bank.experiences.record(task="Rotate the expired TLS certificate on the gateway",
                                      outcome="success")
        assert bank.index("experiences").pending == 1
        shutil.copytree(model_dir / "onnx", missing / "onnx")
        for name in os.listdir(model_dir):
            if (model_dir / name).is_file():
                shutil.copy(model_dir / name, missing / name)
        monkeypatch.setattr(embeddings, "MODEL_RETRY_SECONDS", 0.0)
        hits = bank.experiences.recall("renew the gateway's SSL cert")
        assert bank.index("experiences").pending == 0
        assert hits and hits[0].id == eid and hits[0].why in ("dense", "both")


@pytest.mark.parametrize("remote", [False, True], ids=["in-process", "client-of-owner"])
def test_search_mode_says_keyword_before_any_search_without_a_model(tmp_path, monkeypatch,
                                                                    minilm, remote):
    """search_mode() said "hybrid" until a search had failed a dense query (hunt-ops #9); it
    now knows from a stat that the named model folder holds no model, loading nothing."""
    root = tmp_path / "root"
    _populate(root, minilm)
    missing = _no_model(tmp_path, monkeypatch)
    if remote:
        with owner_process(root, minilm=True), client_bank(root) as bank:
            assert bank.search_mode() == "keyword"
        return
    embedding = MiniLMEmbedding(model_dir=str(missing))
    with Skillbank.open(root, embedding_function=embedding, include_bundled=False,
                        sync=False) as bank:
        assert bank.search_mode() == "keyword" and embedding._failed is None  # nothing loaded
    with Skillbank.open(root, embedding_function=minilm, include_bundled=False) as bank:
        assert bank.search_mode() == "hybrid"


def _same_run_three_times(bank) -> set[str]:
    ids = {bank.experiences.record(task="Migrate the users table to the new schema",
                                   outcome="failure", feedback="Lock the table before migrating.")
           for _ in range(3)}
    other = bank.experiences.record(task="Migrate the orders table to the new schema",
                                    outcome="failure", feedback="Lock the table before migrating.")
    assert other not in ids  # another task is another run, offline too
    return ids


@pytest.mark.parametrize("remote", [False, True], ids=["in-process", "client-of-owner"])
def test_the_same_run_recorded_offline_is_one_record(tmp_path, monkeypatch, minilm, remote):
    """Review: with no model every repeat of a run was a record of its own (four runs, four
    records, still four once the model was back); with the model they fold into one. Offline
    a word-for-word repeat folds into the record it repeats, staged ones included."""
    root = tmp_path / "root"
    _populate(root, minilm)  # the first run, recorded with the model
    missing = _no_model(tmp_path, monkeypatch)
    if remote:
        with owner_process(root, minilm=True), client_bank(root) as bank:
            ids = _same_run_three_times(bank)
    else:
        with Skillbank.open(root, embedding_function=MiniLMEmbedding(model_dir=str(missing)),
                            include_bundled=False) as bank:
            ids = _same_run_three_times(bank)
    assert len(ids) == 1
    with Skillbank.open(root, embedding_function=minilm, include_bundled=False) as bank:
        runs = [r for r in bank.experiences.list() if "users table" in r.task]
        assert len(runs) == 1 and runs[0].id in ids


def test_recall_offline_does_not_replay_the_journal_each_time(tmp_path, monkeypatch, minilm):
    """Review: with no model every recall synced, replaying each record written since the model
    went away (84-110 ms a recall at 1,000 of them). Now it syncs only once the model's load
    may be retried (MODEL_RETRY_SECONDS); an outage still syncs at once."""
    import skillbank.embeddings as embeddings

    root = tmp_path / "root"
    _populate(root, minilm)
    missing = _no_model(tmp_path, monkeypatch)
    with Skillbank.open(root, embedding_function=MiniLMEmbedding(model_dir=str(missing)),
                        include_bundled=False) as bank:
        memory = bank.experiences
        for n in range(5):
            memory.record(task=f"Rotate certificate number {n} on the gateway", outcome="success")
        memory.recall("rotate the certificate")  # the model's load fails here at the latest
        syncs = []
        real_sync = memory.sync
        monkeypatch.setattr(memory, "sync", lambda *a, **k: syncs.append(1) or real_sync(*a, **k))
        for _ in range(3):
            assert memory.recall("rotate the certificate")
        assert syncs == [] and memory.index_behind and memory.only_vectors_behind
        monkeypatch.setattr(embeddings, "MODEL_RETRY_SECONDS", 0.0)
        memory.recall("rotate the certificate")
        assert syncs == [1]  # the load may be retried: the sync tries the vectors again
