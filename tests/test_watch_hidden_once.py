"""`skills watch` names the hidden folders holding skills once, and again only when they
change (review 1, session 36: every event repeated the same five-line block)."""

from __future__ import annotations

from skillbank.cli.sync_report import hidden_folders_once
from skillbank.records import Finding, SyncReport


def _report(*folders: str) -> SyncReport:
    return SyncReport(findings=[Finding(severity="warning", code="hidden-folder", path=f,
                                        message="2 SKILL.md files here are not indexed")
                                for f in folders] + [
        Finding(severity="error", code="yaml", path="x/SKILL.md", message="bad YAML")])


def test_the_same_hidden_folders_are_said_once():
    told: list = [set()]
    first = hidden_folders_once(_report(".curated"), told)
    assert [f.code for f in first.findings] == ["hidden-folder", "yaml"]
    again = hidden_folders_once(_report(".curated"), told)
    assert [f.code for f in again.findings] == ["yaml"]  # the other findings stay
    changed = hidden_folders_once(_report(".curated", ".system"), told)
    assert [f.path for f in changed.findings if f.code == "hidden-folder"] == [".curated",
                                                                                ".system"]
