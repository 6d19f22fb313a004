"""A process that asked for no bundled skills is told when the root's owner serves them.

A Python agent (bundled skills off by default) on a root that `skillbank serve` owns (on by
default) got skillbank's own skills in its searches and catalog without a word, while a
missing skill folder is noted. It is now told in `note`, `stats()["served_note"]` and on search
results.
"""

from __future__ import annotations

from owner_client import client_bank, owner_process


def test_a_client_without_bundled_skills_is_told_they_are_served(tmp_path):
    root = tmp_path / "root"
    with owner_process(root, bundled=True), client_bank(root) as bank:
        assert bank.note and "bundled skills are served too" in bank.note
        assert bank.stats()["served_note"] == bank.note
        hits = bank.skills.search("record what I tried as an experience")
        assert getattr(hits, "note", None) == bank.note


def test_a_client_asking_as_served_is_told_nothing(tmp_path):
    root = tmp_path / "root"
    with owner_process(root), client_bank(root) as bank:
        assert bank.note is None


def test_after_a_takeover_the_note_does_not_name_this_process_as_another(tmp_path):
    """A client without the bundled skills takes over a root served with them: it serves them
    (as .served.json says). The note said the root "is served by process <its own pid>" and
    to stop that process (hunt-ops #7); it now says this process serves it as recorded."""
    import os
    import signal

    root = tmp_path / "root"
    with owner_process(root, bundled=True) as owner, client_bank(root) as bank:
        assert bank.note and f"process {owner.pid}" in bank.note
        os.kill(owner.pid, signal.SIGKILL)
        owner.wait(timeout=60)
        bank.experiences.count(namespace="*")  # the first call after the owner died takes over
        assert not bank.is_remote
        note = bank.note
        assert note and note.startswith("this process now serves") and ".served.json" in note
        assert f"process {os.getpid()}" not in note and "bundled skills are served too" in note
