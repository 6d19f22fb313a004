"""A write the journal holds is not reported failed when the index fails after it (crash hunt,
session 18): an embedded Chroma that met a full disk raised "Error in compaction" after the
experience was appended; the user was told it failed, retried, and stored it twice. Now the
write answers with its id, and the next sync indexes it."""

from __future__ import annotations

import pytest
from chromadb.errors import InternalError

from skillbank import Skillbank
from skillbank.embeddings import HashEmbedding


def test_a_write_in_the_journal_survives_an_index_failure_and_is_indexed_later(tmp_path,
                                                                              monkeypatch):
    with Skillbank.open(tmp_path / "root", embedding_function=HashEmbedding(),
                        include_bundled=False) as bank:
        memory = bank.experiences
        original = memory.index.upsert

        def disk_full(*args, **kwargs):
            raise InternalError("Error in compaction: Failed to apply logs to the metadata segment")

        monkeypatch.setattr(memory.index, "upsert", disk_full)
        eid = memory.record(task="Rotate the staging keys", outcome="success")
        assert memory.index_behind
        monkeypatch.setattr(memory.index, "upsert", original)
        assert [h.id for h in memory.recall("rotate the staging keys")] == [eid]
        assert memory.count("*") == 1  # stored once


def test_a_bug_is_still_raised(tmp_path, monkeypatch):
    with Skillbank.open(tmp_path / "root", embedding_function=HashEmbedding(),
                        include_bundled=False) as bank:
        def bug(*args, **kwargs):
            raise TypeError("not an index failure")

        monkeypatch.setattr(bank.experiences.index, "upsert", bug)
        with pytest.raises(TypeError):
            bank.experiences.record(task="Rotate the staging keys", outcome="success")


@pytest.mark.parametrize("remote", [False, True], ids=["in-process", "client-of-owner"])
def test_a_write_kept_in_the_journal_reads_back_while_the_index_is_damaged(tmp_path, remote):
    """MCP's record_experience reads the record back (`get`) to answer: with the index damaged
    under a running server, the journal kept the write and the answer was "no experience or
    lesson with id 'exp-…'", so a client retrying stored it twice (hunt-mcpmany #1b, session
    24). `get` reads the journal while the index is behind it."""
    from owner_client import bank_for
    from test_damaged_index import damage_the_log

    with bank_for(tmp_path, remote) as bank:
        bank.experiences.record(task="Rotate the staging keys", outcome="success")
        damage_the_log(tmp_path / "root")
        eid = bank.experiences.record(task="Drain the queue before the deploy",
                                      outcome="failure", feedback="It filled up again")
        got = bank.experiences.get(eid)
        assert (got.id, got.task, got.feedback) == (eid, "Drain the queue before the deploy",
                                                    "It filled up again")
