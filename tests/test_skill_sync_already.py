"""A sync someone asks for tells what syncs no one asked for already changed (hunt-corpus #4,
session 30).

At a terminal the CLI attaches to a background owner whose watcher syncs the skill folders:
a curator who added a skill folder and typed `skillbank skills sync` was told "0 added, 0
changed, 0 removed" (the watcher had applied it a moment before, and told no one); likewise
after removing it. The report's `already` now says what the watcher (or the opening sync)
applied since the last sync asked for, and `skills sync` prints it."""

from __future__ import annotations

import contextlib
import shutil
import time
from typing import Any, Callable, Iterator

import pytest

from conftest import write_skill
from owner_client import client_bank, owner_process


@contextlib.contextmanager
def watched_bank(tmp_path, remote: bool, folder) -> Iterator[Any]:
    """A bank whose skill folders are watched: in this process, or a client of an owner
    process that watches them (as the CLI's background owner does)."""
    root = tmp_path / "root"
    if remote:
        root.mkdir()
        with owner_process(root, (folder,), watch=True), client_bank(root) as bank:
            yield bank
        return
    from skillbank import Skillbank
    from skillbank.embeddings import HashEmbedding

    with Skillbank.open(root, embedding_function=HashEmbedding(), include_bundled=False,
                        skill_roots=[folder]) as bank:
        bank.watch()
        yield bank


def until(check: Callable[[], bool], wait: float = 120.0) -> None:
    """Wait for the watcher (bounded only against a hang; nothing is timed)."""
    deadline = time.monotonic() + wait
    while not check():
        assert time.monotonic() < deadline, "the watcher never synced the change"
        time.sleep(0.2)


@pytest.mark.parametrize("remote", [False, True], ids=["in-process", "client-of-owner"])
def test_a_sync_tells_what_the_watcher_applied(tmp_path, remote):
    """Fails before: both syncs said nothing was added or removed, and nothing else."""
    folder = tmp_path / "extra"
    write_skill(folder, "ledger", "Reconcile the monthly ledger.")
    with watched_bank(tmp_path, remote, folder) as bank:
        bank.skills.sync()  # what the opening sync did is told here; from now on, the watcher
        write_skill(folder / "zz-plain", "otter-care", "Otter care routines.")
        until(lambda: "otter-care" in bank.skills.names())
        report = bank.skills.sync()
        assert (report.added, report.removed) == ([], [])
        assert report.already == {"added": ["otter-care"]}, report
        assert bank.skills.sync().already == {}  # told once
        shutil.rmtree(folder / "zz-plain")
        until(lambda: "otter-care" not in bank.skills.names())
        report = bank.skills.sync()
        assert report.removed == [] and report.already == {"removed": ["otter-care"]}, report


@pytest.mark.parametrize("remote", [False, True], ids=["in-process", "client-of-owner"])
def test_the_opening_sync_is_told_too(tmp_path, remote):
    """The background owner starts with the first command after it ended (idle): its opening
    sync applied the change, and that command's `skills sync` said "0 added"."""
    folder = tmp_path / "extra"
    write_skill(folder, "ledger", "Reconcile the monthly ledger.")
    with watched_bank(tmp_path, remote, folder) as bank:
        report = bank.skills.sync()
        assert report.added == [] and report.already == {"added": ["ledger"]}, report


def test_net_change_of_unasked_syncs():
    from skillbank.memories.skills.unasked import Unasked
    from skillbank.records import SyncReport

    kept = Unasked()
    kept.keep(SyncReport(added=["a", "b"], removed=["c"], changed=["d"]))
    kept.keep(SyncReport(removed=["a"], added=["c"], changed=["b"]))
    assert kept.take() == {"added": ["b"], "changed": ["c", "d"]}
    assert kept.take() == {}


def test_skills_sync_prints_it(capsys):
    from skillbank.cli.common import Output
    from skillbank.cli.skills import render_sync_report
    from skillbank.records import SyncReport

    render_sync_report(Output(False), SyncReport(unchanged=3, already={
        "added": ["otter-care"], "removed": ["ledger"]}))
    out = " ".join(capsys.readouterr().out.split())
    assert "0 added, 0 changed, 0 removed, 3 unchanged" in out
    assert ("synced already, since the last sync asked for (the skill folders are watched): "
            "1 added: otter-care; 1 removed: ledger") in out, out


def test_a_delete_that_unshadows_a_skill_keeps_what_the_watcher_applied(tmp_path):
    """Deleting the bank's own copy of a name a read-only root also has syncs, so the shadowed
    skill is served again; that sync took the watcher's pending changes as asked for and
    dropped them, so the next `skills sync` said nothing of them. Fails before: `already` empty."""
    from skillbank import Skillbank
    from skillbank.embeddings import HashEmbedding

    vendor = tmp_path / "vendor"
    write_skill(vendor, "csv-report", "Summarise a CSV file into a short report.")
    root = tmp_path / "root"
    with Skillbank.open(root, embedding_function=HashEmbedding(), include_bundled=False,
                        skill_roots=[vendor]) as bank:
        bank.skills.save("csv-report", "Our own CSV report. Use when asked for a CSV "
                           "report.", "Sum each column.")
        write_skill(root / "skills", "otter-care", "Feed and groom a pet otter.")
        bank.skills.sync(asked=False)  # as the watcher does
        bank.skills.delete("csv-report")  # the vendor's copy is served again
        assert "otter-care" in bank.skills.sync().already.get("added", [])


def test_an_mcp_servers_start_leaves_the_watchers_changes_to_be_told(tmp_path):
    """Review (session 30): the MCP server's start-up sync (`skillbank serve`'s loader; also
    `skills eval`, `skills watch`, a server-mode re-sync) took the watcher's pending changes as
    asked for and dropped them, so a curator's `skills sync` after an editor started an MCP
    session said nothing of them. Fails before: `already` empty."""
    from skillbank import Skillbank
    from skillbank.embeddings import HashEmbedding
    from skillbank.mcp_server.loader import BankHandle

    root = tmp_path / "root"
    bank = Skillbank.open(root, embedding_function=HashEmbedding(), include_bundled=False)
    write_skill(root / "skills", "otter-care", "Feed and groom a pet otter.")
    bank.skills.sync(asked=False)  # as the watcher does
    handle = BankHandle(bank, sync=True, warm=False)
    try:
        served = handle.get("experiences", timeout=300)
        assert "otter-care" in served.skills.names()
        assert "otter-care" in served.skills.sync().already.get("added", [])
    finally:
        handle.close()


def test_a_sync_that_fails_to_embed_keeps_what_it_would_have_told(tmp_path):
    """A sync asked for took what the watcher had applied, staged its own changes, then lost
    the Chroma server while embedding: its caller got the error, not the report, and the next
    sync said nothing of either (review 2, session 30). Now both ride on the next one."""
    from skillbank import Skillbank
    from skillbank.embeddings import HashEmbedding
    from skillbank.index_outage import ChromaUnavailableError

    folder = tmp_path / "extra"
    write_skill(folder, "ledger", "Reconcile the monthly ledger.")
    with Skillbank.open(tmp_path / "root", embedding_function=HashEmbedding(),
                        include_bundled=False, skill_roots=[folder]) as bank:
        bank.skills.sync()
        write_skill(folder, "otter-care", "Otter care routines.")
        bank.skills.sync(asked=False)  # as the watcher does
        write_skill(folder, "kiln-firing", "Fire a pottery kiln.")
        index = bank.skills.index
        upsert = index.upsert

        def server_gone(items):  # the server went away between staging and embedding
            index.upsert = upsert
            raise ChromaUnavailableError("the Chroma server at http://127.0.0.1:9 is unreachable")

        index.upsert = server_gone
        with pytest.raises(ChromaUnavailableError):
            bank.skills.sync()
        report = bank.skills.sync()
        assert report.already == {"added": ["kiln-firing", "otter-care"]}, report


def test_given_back_changes_come_before_those_kept_since():
    from skillbank.memories.skills.unasked import Unasked
    from skillbank.records import SyncReport

    kept = Unasked()
    failed = SyncReport(added=["b"], already={"added": ["a"]})
    kept.keep(SyncReport(removed=["a"]))  # kept after the failed sync took its changes
    kept.give_back(failed)
    assert kept.take() == {"added": ["b"]}  # a came and went before anyone was told


def test_a_failed_sync_gives_back_only_what_still_holds(tmp_path):
    """Review 1 (session 31): a sync asked for took its changes ("added kiln-firing"), then
    another asked sync ran while it embedded and told its own caller "removed kiln-firing",
    then the first lost the Chroma server: it gave back "added kiln-firing", and the next sync
    said a skill was added that was gone. What is given back is now checked against the index:
    the next report tells nothing of kiln-firing. In process only: the failure is made in the
    index of the process that syncs (a client's sync runs in its owner's)."""
    from skillbank import Skillbank
    from skillbank.embeddings import HashEmbedding
    from skillbank.index_outage import ChromaUnavailableError

    folder = tmp_path / "extra"
    write_skill(folder, "ledger", "Reconcile the monthly ledger.")
    with Skillbank.open(tmp_path / "root", embedding_function=HashEmbedding(),
                        include_bundled=False, skill_roots=[folder]) as bank:
        bank.skills.sync()
        write_skill(folder, "kiln-firing", "Fire a pottery kiln.")
        write_skill(folder, "otter-care", "Otter care routines.")
        index = bank.skills.index
        upsert = index.upsert
        between: list = []

        def server_gone(items):  # another asked sync ran while this one embedded
            index.upsert = upsert
            shutil.rmtree(folder / "kiln-firing")
            between.append(bank.skills.sync(embed=False))
            raise ChromaUnavailableError("the Chroma server at http://127.0.0.1:9 is unreachable")

        index.upsert = server_gone
        with pytest.raises(ChromaUnavailableError):
            bank.skills.sync()
        assert between[0].removed == ["kiln-firing"]
        report = bank.skills.sync()
        assert report.already == {"added": ["otter-care"]}, report
        assert "kiln-firing" not in bank.skills.names()
