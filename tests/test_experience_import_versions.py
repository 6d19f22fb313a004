"""`experiences import` of another bank's version of a record, and of a lesson line before its
experience's line (hunt-expimport #1 and #4, session 38).

#1: a line whose id is stored here (where the caller reads it) as another version of its record
(a lesson forgotten in the other bank; a conversation that became a past run there) was stored
as a second copy of the run under a new id, and every later import of the same file folded it
into that copy, one more run each time, while the report said "unchanged". Now the stored one
is kept and the line is counted in `unchanged` with a warning finding "other-version"; a record
that only shares an id with one in a namespace the caller does not read is still imported under
an id derived for its namespace (docs/scope.md), and one that only shares an id with a different
record gets a new id (tests/test_experience_input.py).

#4: a namespace-scoped import of a file whose lesson line came before its experience's line
kept the lesson's `source` at the file's id while the experience got a derived one, so a
`forget` of the experience left the lesson's text recallable. Through the API and the CLI, in
process and as a client of an owner process.
"""

from __future__ import annotations

import contextlib
import json
from pathlib import Path

import pytest
from typer.testing import CliRunner

from owner_client import bank_for, owner_process
from skillbank import Scope, Skillbank
from skillbank.cli import app
from skillbank.embeddings import HashEmbedding

REMOTE = pytest.mark.parametrize("remote", [False, True], ids=["in-process", "client-of-owner"])
TASK = "Migrate the orders table"
LEAD = Scope(principal="lead", namespace="team", role="reviewer", face="test")


def other_bank(path: Path) -> Skillbank:
    return Skillbank.open(path, embedding_function=HashEmbedding(), include_bundled=False)


def view(memory) -> list[tuple]:
    return sorted((e.id, e.kind, e.thread, e.duplicates, e.source)
                  for e in memory.list(namespace="*", include_retired=True, limit=100))


@REMOTE
def test_another_banks_version_of_a_record_leaves_the_stored_one(tmp_path, remote):
    moved, back = tmp_path / "x.jsonl", tmp_path / "y.jsonl"
    with bank_for(tmp_path, remote) as bank:
        memory = bank.experiences
        eid = memory.record(task=TASK, outcome="failure",
                            lessons=["Lock the table first.", "Check replication lag first."])
        memory.export(moved)
        with other_bank(tmp_path / "y") as other:  # Y takes the run, forgets one lesson of it
            assert eid in other.experiences.import_(moved).added
            [lag] = [e.id for e in other.experiences.list(kind="lesson")
                     if "replication" in e.task]
            other.experiences.forget(lag)
            other.experiences.export(back)
        before = view(memory)
        for _ in range(3):  # a nightly sync: the same file again and again
            report = memory.import_(back)
            assert (report.added, report.skipped, report.unchanged) == ([], [], 2)
            assert [(f.severity, f.code) for f in report.findings] == [("warning",
                                                                        "other-version")]
            assert eid in report.findings[0].message
            assert view(memory) == before  # no second copy, no run counted again
        hits = memory.recall(TASK, k=5, count_use=False, kind="experience")
        assert [h.id for h in hits] == [eid]


@REMOTE
def test_a_conversation_back_from_another_bank_is_not_folded_into_itself(tmp_path, remote):
    moved, back = tmp_path / "x.jsonl", tmp_path / "y.jsonl"
    chat = [{"role": "user", "content": "Plan the Q3 offsite in Lisbon"},
            {"role": "assistant", "content": "Booked the venue."}]
    with bank_for(tmp_path, remote) as bank:
        memory = bank.experiences
        ours = memory.record_messages(chat, thread="chat-1")
        memory.export(moved)
        with other_bank(tmp_path / "y") as other:  # its own thread "chat-1" is open there
            other.experiences.record_messages(
                [{"role": "user", "content": "Fix the flaky login test"},
                 {"role": "assistant", "content": "Added a retry."}], thread="chat-1")
            report = other.experiences.import_(moved)
            assert [f.code for f in report.findings] == ["thread-taken"]  # a past run there
            other.experiences.export(back)
        first = memory.import_(back)
        assert any(f.code == "other-version" and ours in f.message for f in first.findings)
        after = view(memory)
        for _ in range(3):
            again = memory.import_(back)
            assert (again.added, again.unchanged) == ([], 2)
            assert view(memory) == after
        record = memory.get(ours)
        assert (record.thread, record.duplicates) == ("chat-1", 0)
        assert memory.open_thread("chat-1").id == ours
        assert memory.count() == 2  # ours, and theirs as a past run


@REMOTE
def test_an_id_stored_where_the_caller_cannot_read_is_still_imported(tmp_path, remote):
    """The same id, task and time as alice's record, imported by bob (who cannot read hers): his
    own record under a derived id, exactly as in a bank where the id is free (no oracle)."""
    alice_scope = Scope(principal="alice", namespace="alice", role="contributor", face="test")
    bob_scope = Scope(principal="bob", namespace="bob", role="contributor", face="test")
    with bank_for(tmp_path, remote) as bank:
        alice = bank.scoped(alice_scope).experiences
        hers = alice.record(task=TASK, outcome="success")
        line = json.loads(json.dumps(alice.get(hers).model_dump(mode="json")))
        line.update(namespace="bob", lessons=[], outcome="failure")
        path = tmp_path / "bob.jsonl"
        path.write_text(json.dumps(line) + "\n")
        bob = bank.scoped(bob_scope).experiences
        report = bob.import_(path)
        with other_bank(tmp_path / "fresh") as fresh:
            elsewhere = fresh.scoped(bob_scope).experiences.import_(path)
        assert report.added == elsewhere.added and len(report.added) == 1
        assert hers not in report.added and report.findings == []
        assert bob.get(report.added[0]).outcome == "failure"
        assert alice.get(hers).outcome == "success"
        assert bob.import_(path).added == []  # again: nothing


def lesson_first(path: Path) -> Path:
    exp = {"id": "exp-aaaaaaaaaaaa", "task": "Write the weekly report", "outcome": "success",
           "lessons": ["The finance numbers come from the Q3 sheet."], "namespace": "team"}
    lsn = {"id": "lsn-bbbbbbbbbbbb", "kind": "lesson", "source": exp["id"], "namespace": "team",
           "task": "The finance numbers come from the Q3 sheet.", "outcome": "success",
           "lessons": ["The finance numbers come from the Q3 sheet."]}
    path.write_text(json.dumps(lsn) + "\n" + json.dumps(exp) + "\n")  # a re-sorted file
    return path


@REMOTE
def test_a_scoped_import_of_a_lesson_before_its_experience_keeps_them_together(tmp_path,
                                                                                remote):
    path = lesson_first(tmp_path / "f.jsonl")
    with bank_for(tmp_path, remote) as bank:
        team = bank.scoped(LEAD).experiences
        report = team.import_(path)
        assert len(report.added) == 2 and report.findings == []
        [eid] = [i for i in report.added if i.startswith("exp-")]
        [lesson] = team.list(kind="lesson")
        assert lesson.source == eid  # was the file's exp-aaaaaaaaaaaa: nothing
        assert team.forget(eid)["lessons"] == [lesson.id]
        assert team.list(namespace="*", include_retired=True) == []
        assert team.recall("weekly report finance numbers", k=5, count_use=False) == []
        assert team.import_(path).added == []  # forget means gone, on the next import too


def _cli(*args: str) -> tuple[int, str]:
    result = CliRunner().invoke(app, ["--no-bundled", *args])
    return result.exit_code, result.output


@pytest.mark.parametrize("remote", [False, True], ids=["in-process", "client-of-owner"])
def test_the_cli_scoped_import_of_a_lesson_before_its_experience(cli_root, tmp_path, remote):
    cli_root.mkdir(parents=True, exist_ok=True)
    path = lesson_first(tmp_path / "f.jsonl")
    with owner_process(cli_root) if remote else contextlib.nullcontext():
        code, out = _cli("--json", "--namespace", "team", "experiences", "import", str(path))
        assert code == 0, out
        added = json.JSONDecoder().raw_decode(out)[0]["result"]["added"]
        [eid] = [i for i in added if i.startswith("exp-")]
        code, out = _cli("--namespace", "team", "forget", eid, "--yes")
        assert code == 0, out
    with other_bank(cli_root) as bank:
        left = bank.experiences.list(namespace="*", include_retired=True)
        assert [(e.id, e.task) for e in left] == []  # the lesson went with its experience
