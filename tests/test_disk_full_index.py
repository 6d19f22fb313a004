"""A full disk under the embedded index (hunt-disk #1 and #2, session 32).

#1: on a full disk, `experiences.recall` raised Chroma's raw "database or disk is full"
(InternalError, code 13): before answering, recall replays the records the journal kept into
the index, and only an outage of a Chroma server was caught there; the MCP recall tools and
`memory_context` answered it as a refused write. Now the recall answers from what the index
holds, with a note, and the journal keeps the records for a later sync.

#2: a skill save on a full disk was answered "the index looks damaged ... reindex --fresh":
the embedded Chroma's "Error in compaction: Failed to apply logs to the metadata segment" read
as damage. With almost no room left on the disk under the index, it is raised as the full disk
it is (ENOSPC), worded "the disk under the memory root is full; free space and retry".

The full disk is simulated (`full_disk.py`): the embedded bindings' upsert raises what Chroma
raised, and `shutil.disk_usage` says how much is free; in this process and in an owner
process alike. No root, no mount.
"""

from __future__ import annotations

import contextlib
import errno
from pathlib import Path
from typing import Any, Iterator

import pytest

import full_disk
from skillbank import Skillbank
from skillbank.embeddings import HashEmbedding
from skillbank.storage_errors import DISK_FULL, tool_message


@contextlib.contextmanager
def _bank(tmp_path: Path, remote: bool, monkeypatch: Any) -> Iterator[Any]:
    """A bank whose disk `tmp_path`'s files fill (`full_disk`): in this process, or a client
    of an owner process with the same patches."""
    root = tmp_path / "root"
    if remote:
        from owner_client import client_bank, owner_process

        root.mkdir()
        with owner_process(root, preamble=full_disk.preamble(tmp_path)), \
                client_bank(root) as bank:
            yield bank
        return
    for target, name, value in full_disk.patches(tmp_path):
        monkeypatch.setattr(target, name, value)
    with Skillbank.open(root, embedding_function=HashEmbedding(),
                        include_bundled=False) as bank:
        yield bank


@pytest.mark.parametrize("remote", [False, True], ids=["in-process", "client-of-owner"])
def test_recall_answers_on_a_full_disk_and_the_journal_catches_up_later(tmp_path, remote,
                                                                       monkeypatch):
    """hunt-disk #1, session 32: the recall raised InternalError "database or disk is full"
    from its catch-up sync (through a client: "the owner process raised InternalError")."""
    with _bank(tmp_path, remote, monkeypatch) as bank:
        memory = bank.experiences
        indexed = memory.record(task="Migrate the orders table", outcome="failure",
                                feedback="Lock the orders table first.")
        (tmp_path / "upsert-error").write_text(full_disk.SQLITE_FULL)
        kept = memory.record(task="Migrate the invoices table", outcome="failure",
                             feedback="Lock the invoices table first.")  # kept in the journal
        hits = memory.recall("Migrate the orders table")
        assert indexed in [hit.id for hit in hits]
        assert "not in the index yet" in hits.note and "later recall" in hits.note, hits.note
        context = bank.context_for("Migrate the orders table")  # what memory_context answers
        assert indexed in context.ids
        (tmp_path / "upsert-error").unlink()  # space freed
        memory.sync()
        assert kept in [hit.id for hit in memory.recall("Migrate the invoices table")]
        assert memory.count("*") == 2  # each stored once


@pytest.mark.parametrize("remote", [False, True], ids=["in-process", "client-of-owner"])
def test_a_skill_save_on_a_full_disk_is_named_a_full_disk_not_a_damaged_index(
        tmp_path, remote, monkeypatch):
    """hunt-disk #2, session 32: "Error in compaction" with no room left was answered "the
    index looks damaged ... reindex --fresh"; now ENOSPC with the full disk's words."""
    with _bank(tmp_path, remote, monkeypatch) as bank:
        bank.skills.save("deck", "Make a slide deck.", "# Steps\n\n1. One idea a slide.\n")
        (tmp_path / "upsert-error").write_text(full_disk.COMPACTION)
        (tmp_path / "free-bytes").write_text(str(64 << 10))
        with pytest.raises(OSError) as refused:
            bank.skills.save("chart", "Make a chart.", "# Steps\n\n1. Label the axes.\n")
        message = tool_message(refused.value, tmp_path / "root")
        assert message is not None and DISK_FULL in message, message
        assert "reindex" not in message and "damaged" not in message
        (tmp_path / "upsert-error").unlink()
        (tmp_path / "free-bytes").unlink()
        bank.skills.save("chart", "Make a chart.", "# Steps\n\n1. Label the axes.\n")
        assert sorted(bank.skills.names()) == ["chart", "deck"]


def test_the_same_failure_with_room_left_still_names_the_repair(tmp_path, monkeypatch):
    """A compaction failure on a disk with room is what a damaged index says: the repair is
    still named (test_damaged_index), and the error is Chroma's own."""
    from chromadb.errors import InternalError

    from skillbank.index_repair import damaged_message

    with _bank(tmp_path, False, monkeypatch) as bank:
        (tmp_path / "upsert-error").write_text(full_disk.COMPACTION)
        (tmp_path / "free-bytes").write_text(str(1 << 30))
        with pytest.raises(InternalError) as failed:
            bank.skills.save("chart", "Make a chart.", "# Steps\n\n1. Label the axes.\n")
        assert "reindex --fresh" in (damaged_message(failed.value) or "")
        assert not isinstance(failed.value, OSError) or failed.value.errno != errno.ENOSPC


def test_sqlite_full_raised_as_enospc_is_worded_once():
    """What `chroma_gate` raises for SQLite's "database or disk is full" was worded with the
    SQLite branch: "... (OSError): the disk under the memory root is full" (session 32)."""
    from skillbank.storage_errors import storage_message

    said = storage_message(OSError(errno.ENOSPC, f"No space left on device (InternalError: "
                                                 f"{full_disk.SQLITE_FULL})", "/r/chroma"))
    assert said is not None and said.endswith(DISK_FULL) and "(OSError)" not in said, said


def test_recall_past_a_damaged_index_still_raises(tmp_path, monkeypatch):
    """Review 2 (session 32): the full-disk fix made recall answer past any index failure in
    its catch-up (a damaged index, another embedding's dimension, EIO) with the note "the rest
    are indexed by a later recall", which never comes for those, and hid the repair. Only a
    disk with no room is answered past; the same Chroma text with room left is raised."""
    with _bank(tmp_path, False, monkeypatch) as bank:
        memory = bank.experiences
        memory.record(task="Migrate the orders table", outcome="failure",
                      feedback="Lock the orders table first.")
        (tmp_path / "upsert-error").write_text(full_disk.COMPACTION)  # room left: damage
        memory.record(task="Migrate the invoices table", outcome="failure",
                      feedback="Lock the invoices table first.")  # kept in the journal
        assert memory.index_behind  # so the recall's catch-up meets the damage
        with pytest.raises(Exception) as caught:
            memory.recall("Migrate the orders table")
        assert "compaction" in str(caught.value).lower()
