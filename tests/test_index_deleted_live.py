"""`chroma/` deleted while a process has the root open: `reindex` opens the index again and
rebuilds it (hunt-ops #3).

With `skillbank serve` owning a root, deleting `chroma/` (docs/operating.md: run `skillbank
reindex` after it) made `reindex`, `reindex --fresh` and every `memory_context` fail with
SQLite's "attempt to write a readonly database" until the server was restarted: chromadb's
per-folder system still held the deleted database file. The owner's reindex now lets go of it
and opens the folder afresh before rebuilding from the files.
"""

from __future__ import annotations

import shutil

import pytest

from owner_client import bank_for
from skillbank.cli.reporting import _error_details


def _populate(bank) -> tuple[str, str]:
    eid = bank.experiences.record(task="Migrate the orders table", outcome="failure",
                                  feedback="Lock the table before migrating.")
    gid = bank.guidelines.add("Never deploy to production on Fridays.").guideline_id
    return eid, gid


@pytest.mark.parametrize("remote", [False, True], ids=["in-process", "client-of-owner"])
def test_reindex_after_chroma_was_deleted_under_the_owner(tmp_path, remote):
    with bank_for(tmp_path, remote) as bank:
        eid, gid = _populate(bank)
        shutil.rmtree(tmp_path / "root" / "chroma")
        report = bank.reindex()
        assert eid in report["experiences"].added and gid in report["guidelines"].added
        assert (tmp_path / "root" / "chroma" / "chroma.sqlite3").exists()
        assert [hit.id for hit in bank.experiences.recall("migrate the orders table")] == [eid]
        context = bank.context_for("migrate the orders table before deploying on friday")
        assert eid in context.ids and gid in context.ids
        again = bank.experiences.record(task="Rotate the TLS certificate", outcome="success")
        assert bank.experiences.recall("rotate the TLS certificate")[0].id == again
    with bank_for(tmp_path, False) as bank:  # the rebuilt index is the one on disk
        assert {eid, again} <= set(bank.index("experiences").ids())


def test_a_stale_index_error_names_the_repair():
    """Before the reindex, a read meets SQLite's error: the CLI says what to run."""
    code, message, _ = _error_details(RuntimeError(
        "the owner process raised InternalError: Query error: Database error: error returned "
        "from database: (code: 1032) attempt to write a readonly database"))
    assert code == 1 and "`skillbank reindex`" in message and "chroma/" in message
