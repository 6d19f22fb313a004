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
