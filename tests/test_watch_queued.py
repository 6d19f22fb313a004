"""A watch event says how many texts it left to embed, not "0 texts embedded" (hunt-clicorpus #4,
session 36).

A watcher's sync stages what changed and its own thread embeds it (`watching.Filler`, hunt-git
#5), so the report of a skill just added said `embedded: 0` ("0 texts embedded"), though its
vector was in a moment later. The report now carries `queued` (texts left to that thread);
`embedded` keeps meaning what the call itself embedded."""

from __future__ import annotations

import queue

import pytest

from conftest import watching, write_skill
from owner_client import bank_for
from skillbank.cli.sync_report import sync_summary
from skillbank.records import SyncReport


@pytest.mark.parametrize("remote", [False, True], ids=["in-process", "client-of-owner"])
def test_a_watch_event_counts_what_it_queued(tmp_path, remote):
    """Fails before: the event for the added skill had no `queued` (it said embedded 0)."""
    folder = tmp_path / "root" / "skills"
    with bank_for(tmp_path, remote) as bank:
        write_skill(folder, "alpha", "Use when filling PDF forms.")
        assert bank.skills.sync().queued == 0  # an asked-for sync embeds what it staged
        with watching(bank) as reports:
            told = None
            for take in range(60):  # a ceiling for a loaded machine, not a speed
                write_skill(folder, "gamma", f"Use when pruning fruit trees, take {take}.")
                try:
                    report = reports.get(timeout=5)
                except queue.Empty:
                    continue
                if "gamma" in report.added or "gamma" in report.changed:
                    told = report
                    break
            assert told is not None, "the watcher told nothing"
            assert told.embedded == 0 and told.queued >= 1, told


def test_sync_counts_texts_left_to_embed_and_the_summary_says_so(tmp_path):
    with bank_for(tmp_path, False) as bank:
        write_skill(tmp_path / "root" / "skills", "alpha", "Use when filling PDF forms.",
                    body="# Steps\n\nOpen the form and fill each field in turn.\n")
        staged = bank.skills.sync(embed=False)
        assert staged.added == ["alpha"] and staged.embedded == 0 and staged.queued >= 1
        assert "texts queued for embedding" in sync_summary(staged)
        assert "0 texts embedded" not in sync_summary(staged)
    assert sync_summary(SyncReport(embedded=3)) == \
        "0 added, 0 changed, 0 removed, 0 unchanged (3 texts embedded, 0.0 s)"
    assert sync_summary(SyncReport()) == \
        "0 added, 0 changed, 0 removed, 0 unchanged (0 texts embedded, 0.0 s)"
    assert sync_summary(SyncReport(embedded=1, queued=2)).endswith(
        "(1 texts embedded, 2 texts queued for embedding, 0.0 s)")
