"""Export then import keeps `Experience.updated`, a conversation's last turn time (session 33,
left item 1 of session 32's threads work). Import dropped it: a moved conversation whose first
turn was old looked as old as that turn, so `open_thread` (and a face that lost its state of
the thread) started a new goal instead of going on with it, and importing a bank's own export
warned "other-version" for every conversation that had a later turn. An older export, without
`updated`, still imports as before."""

from __future__ import annotations

import json
from datetime import datetime, timedelta, timezone

import pytest
from typer.testing import CliRunner

from owner_client import bank_for
from skillbank import Skillbank
from skillbank.cli import app
from skillbank.embeddings import HashEmbedding

GOAL = "Set up CI for the repo"
REMOTE = pytest.mark.parametrize("remote", [False, True], ids=["in-process", "client-of-owner"])
NOW = datetime.now(timezone.utc).replace(microsecond=0)
FIRST_TURN = NOW - timedelta(days=2)  # older than thread_pickup_seconds (3600)
LAST_TURN = NOW - timedelta(minutes=5)


def read_time(text: str) -> datetime:
    return datetime.fromisoformat(text.replace("Z", "+00:00"))


def turn(memory, user: str, answer: str) -> str:
    return memory.record_messages([{"role": "user", "content": user},
                                   {"role": "assistant", "content": answer}],
                                  task=GOAL, thread="c1")


def conversation_export(tmp_path, out, *, with_updated: bool = True) -> str:
    """An export holding one open conversation begun two days ago whose last turn was five
    minutes ago (its line's times set so; without `updated` when not `with_updated`, as an
    export written before it was kept)."""
    with Skillbank.open(tmp_path / "source", embedding_function=HashEmbedding(),
                        include_bundled=False) as source:
        conversation = turn(source.experiences, GOAL, "Added a workflow file.")
        source.experiences.export(out)
    line = json.loads(out.read_text())
    line["created"] = FIRST_TURN.isoformat()
    line.pop("updated", None)
    if with_updated:
        line["updated"] = LAST_TURN.isoformat()
    out.write_text(json.dumps(line) + "\n")
    (tmp_path / "target").mkdir()
    return conversation


@REMOTE
def test_an_imported_conversation_keeps_its_last_turn_time(tmp_path, remote):
    """Before: `updated` was None after the import, and `open_thread("c1")` None (the
    conversation taken for two days old)."""
    out = tmp_path / "backup.jsonl"
    conversation = conversation_export(tmp_path, out)
    with bank_for(tmp_path / "target", remote) as target:
        memory = target.experiences
        assert memory.import_(out).added == [conversation]
        record = memory.get(conversation)
        assert (record.created, record.updated) == (FIRST_TURN, LAST_TURN)
        assert memory.open_thread("c1").id == conversation  # recent: its last turn counts
        again = tmp_path / "again.jsonl"
        memory.export(again)
        assert read_time(json.loads(again.read_text())["updated"]) == LAST_TURN
        report = memory.import_(again)  # its own export: the same record, no other version
        assert (report.added, report.unchanged) == ([], 1)
        assert report.findings == []


@REMOTE
def test_an_export_without_updated_still_imports(tmp_path, remote):
    """An export written before `updated` was kept: the record's last turn is its `created`,
    as before (two days old, so no open episode to pick up)."""
    out = tmp_path / "backup.jsonl"
    conversation = conversation_export(tmp_path, out, with_updated=False)
    with bank_for(tmp_path / "target", remote) as target:
        memory = target.experiences
        assert memory.import_(out).added == [conversation]
        assert memory.get(conversation).updated is None
        assert memory.open_thread("c1") is None


def test_an_unreadable_updated_names_the_line_and_keeps_the_record(tmp_path):
    """The record comes with its `created` as its last turn, and a warning names the line
    (review of session 33: the whole record was dropped, where the import before `updated`
    stored it)."""
    out = tmp_path / "backup.jsonl"
    conversation_export(tmp_path, out)
    line = json.loads(out.read_text())
    line["updated"] = "yesterday"
    out.write_text(json.dumps(line) + "\n")
    with bank_for(tmp_path / "target", False) as target:
        report = target.experiences.import_(out)
        assert report.added == [line["id"]] and report.skipped == []
        (finding,) = report.findings
        assert finding.severity == "warning" and finding.path == "backup.jsonl:1"
        assert "updated 'yesterday'" in finding.message
        assert target.experiences.get(line["id"]).updated is None


def test_the_cli_moves_the_last_turn_time(tmp_path, cli_root):
    out = tmp_path / "backup.jsonl"
    conversation = conversation_export(tmp_path, out)
    runner = CliRunner()
    assert runner.invoke(app, ["experiences", "import", str(out)]).exit_code == 0
    moved = tmp_path / "moved.jsonl"
    assert runner.invoke(app, ["experiences", "export", str(moved)]).exit_code == 0
    other = tmp_path / "other"
    assert runner.invoke(app, ["--root", str(other), "experiences", "import",
                               str(moved)]).exit_code == 0
    shown = json.loads(runner.invoke(app, ["--json", "--root", str(other), "experiences",
                                           "show", conversation]).stdout)
    assert read_time(shown["updated"]) == LAST_TURN
