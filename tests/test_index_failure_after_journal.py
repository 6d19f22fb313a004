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
