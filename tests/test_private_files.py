"""What a memory holds is its owner's alone on a shared host (soak #5).

Under the usual umask 022 a new root was 0755 and the experiences journal (every task and
feedback an agent recorded: "new password is hunter2"), the usage journals, Chroma's
`chroma.sqlite3` and the keyword snapshot's `mirror.json` were 0644, readable by every account
on the machine, while guideline files and the audit log beside them were 0600. Now a new root
is 0700 with its `chroma/` and `.cache/`, journals are created 0600 and snapshots 0700/0600.
A root someone made before keeps its mode (a group's shared folder is theirs to set).
"""

from __future__ import annotations

import contextlib
import os
import stat
from pathlib import Path
from typing import Any, Iterator

import pytest

from owner_client import client_bank, owner_process
from workers.common import open_bank

SECRET = "new password is hunter2"


def _mode(path: Path) -> int:
    return stat.S_IMODE(path.stat().st_mode)


@pytest.fixture
def umask_022() -> Iterator[None]:
    """The usual umask, whatever the test runner's (a child process inherits it too)."""
    old = os.umask(0o022)
    try:
        yield
    finally:
        os.umask(old)


@contextlib.contextmanager
def _bank(root: Path, remote: bool) -> Iterator[Any]:
    """In this process, or a client of another process that made and owns the root."""
    if not remote:
        with open_bank(root) as bank:
            yield bank
        return
    with owner_process(root), client_bank(root) as bank:
        yield bank


def _remember_a_secret(bank: Any) -> None:
    eid = bank.experiences.record(task="Rotate the prod DB password", outcome="success",
                                  feedback=SECRET)
    assert [hit.id for hit in bank.experiences.recall("rotate the database password")] == [eid]


@pytest.mark.parametrize("remote", [False, True], ids=["in-process", "client-of-owner"])
def test_a_new_root_and_what_it_holds_are_private(tmp_path, umask_022, remote):
    root = tmp_path / "root"
    with _bank(root, remote) as bank:
        _remember_a_secret(bank)
    assert _mode(root) == 0o700
    assert _mode(root / "chroma") == 0o700 and _mode(root / ".cache") == 0o700
    journals = list((root / "experiences").glob("*.jsonl")) + list(root.glob("usage/*.jsonl"))
    assert any(SECRET in p.read_text() for p in journals)
    assert any(p.parent.name == "usage" for p in journals), journals
    assert {p.name: _mode(p) for p in journals} == {p.name: 0o600 for p in journals}
    snapshots = list((root / ".cache" / "index").glob("*/snap-*"))
    assert snapshots
    for snap in snapshots:
        assert _mode(snap) == 0o700, snap
        assert _mode(snap / "mirror.json") == 0o600, snap


@pytest.mark.parametrize("remote", [False, True], ids=["in-process", "client-of-owner"])
def test_a_root_made_before_keeps_its_mode_and_new_journals_are_private(tmp_path, umask_022,
                                                                        remote):
    """A folder someone set up (a group's shared root) is not changed; the journals skillbank
    creates in it are still 0600, and the `chroma/` and `.cache/` it creates 0700 (they were
    0755, with a 0644 `chroma.sqlite3` holding the secret: hunt-upgrade #5)."""
    root = tmp_path / "root"
    root.mkdir(mode=0o755)
    with _bank(root, remote) as bank:
        _remember_a_secret(bank)
    assert _mode(root) == 0o755
    journal, = (root / "experiences").glob("*.jsonl")
    assert _mode(journal) == 0o600
    assert _mode(root / "chroma") == 0o700 and _mode(root / ".cache") == 0o700


def test_an_existing_journal_keeps_its_mode(tmp_path, umask_022):
    """Appending never changes a journal's mode (one a user opened to their group stays so)."""
    from skillbank.fsutil import append_line

    journal = tmp_path / "2026-01.jsonl"
    journal.write_text("{}\n")
    journal.chmod(0o640)
    append_line(journal, "{}")
    assert _mode(journal) == 0o640
    assert journal.read_text() == "{}\n{}\n"


@pytest.mark.parametrize("remote", [False, True], ids=["in-process", "client-of-owner"])
def test_the_skill_timeline_is_private(tmp_path, umask_022, remote):
    """A rename and a delete append to the skills' outcome timeline, which was opened with
    `open("a")` and so came out 0644 under umask 022, beside 0600 journals."""
    root = tmp_path / "root"
    with _bank(root, remote) as bank:
        bank.skills.create("release-notes", "Write release notes from merged changes.", "# Steps\n")
        bank.skills.rename("release-notes", "changelog")
        bank.skills.delete("changelog")
    timeline, = root.rglob("timeline.jsonl")
    assert '"from": "release-notes"' in timeline.read_text()
    assert _mode(timeline) == 0o600


def test_the_background_owner_log_is_private(tmp_path, umask_022):
    """The CLI's background owner writes its start-up and any traceback (which can quote a
    task) to `.cli-owner.log`, which was 0644."""
    from test_cli_owner import cli

    root = tmp_path / "root"
    done = cli(root, "--no-bundled", "--json", "stats", SKILLBANK_CLI_OWNER="1",
               SKILLBANK_CLI_OWNER_IDLE="5")
    assert done.returncode == 0, done.stderr
    assert _mode(root / ".cli-owner.log") == 0o600
