"""`experiences import` keeps a record's conversation (`thread`) and its run count
(`duplicates`) (hunt-exp #1, session 27): both were dropped, so a conversation moved to another
bank could not be continued there (its next turn started a second record, the first left
`unknown` for good), and importing a bank's own export folded each conversation record into
itself, one more run per import, while the report said "unchanged"."""

from __future__ import annotations

import json

import pytest
from typer.testing import CliRunner

from owner_client import bank_for
from skillbank import Scope, Skillbank
from skillbank.cli import app
from skillbank.embeddings import HashEmbedding

GOAL = "Set up CI for the repo"
DEPLOY = "Deploy the app"
REMOTE = pytest.mark.parametrize("remote", [False, True], ids=["in-process", "client-of-owner"])


def turn(memory, user: str, answer: str, **kw):
    return memory.record_messages([{"role": "user", "content": user},
                                   {"role": "assistant", "content": answer}],
                                  task=GOAL, thread="c1", **kw)


def source_export(tmp_path, out) -> tuple[str, str]:
    """A bank holding one open conversation and a run folded once; its export at `out` (and
    the target's folder made, for `bank_for`)."""
    (tmp_path / "target").mkdir()
    with Skillbank.open(tmp_path / "source", embedding_function=HashEmbedding(),
                        include_bundled=False) as source:
        memory = source.experiences
        conversation = turn(memory, GOAL, "Added a workflow file.")
        deploy = memory.record(task=DEPLOY, outcome="success", feedback="fine")
        assert memory.record(task=DEPLOY, outcome="success", feedback="fine").folded
        memory.export(out)
    return conversation, deploy


def view(memory) -> list[tuple]:
    return sorted((e.id, e.thread, e.duplicates, e.outcome, len(e.steps))
                  for e in memory.list(kind="experience"))


@REMOTE
def test_a_moved_conversation_goes_on_in_its_record(tmp_path, remote):
    out = tmp_path / "backup.jsonl"
    conversation, deploy = source_export(tmp_path, out)
    with bank_for(tmp_path / "target", remote) as target:
        memory = target.experiences
        assert sorted(memory.import_(out).added) == sorted([conversation, deploy])
        assert memory.get(conversation).thread == "c1"
        assert memory.get(deploy).duplicates == 1  # the run folded into it came along
        assert memory.open_thread("c1").id == conversation
        assert turn(memory, "also cache pip", "Cached pip.", outcome="success") == conversation
        record = memory.get(conversation)
        assert (record.outcome, len(record.steps)) == ("success", 3)
        assert memory.count(kind="experience") == 2


@REMOTE
def test_a_conversation_whose_thread_is_open_here_is_imported_as_a_past_run(tmp_path, remote):
    """review2 #2 (session 27): another bank's thread "c1" (LangGraph's ids repeat across
    banks), imported beside this bank's own open "c1" of the same request, took this bank's
    next turn. It is imported as a past run (no thread, a warning), once."""
    out = tmp_path / "backup.jsonl"
    conversation, _ = source_export(tmp_path, out)
    with bank_for(tmp_path / "target", remote) as target:
        memory = target.experiences
        ours = turn(memory, GOAL, "Wrote a GitHub Actions file.")
        report = memory.import_(out)
        assert any(f.code == "thread-taken" and ours in f.message for f in report.findings)
        assert memory.get(conversation).thread is None
        assert memory.open_thread("c1").id == ours
        assert turn(memory, "also run the linter", "Added ruff.") == ours
        assert len(memory.get(ours).steps) == 3 and len(memory.get(conversation).steps) == 1
        again = memory.import_(out)  # the same file again: nothing new
        assert again.added == [] and memory.count(kind="experience") == 3


@REMOTE
def test_a_line_folded_into_a_run_here_brings_its_runs(tmp_path, remote):
    out = tmp_path / "backup.jsonl"
    _, deploy = source_export(tmp_path, out)  # two runs of DEPLOY: one line, duplicates 1
    with bank_for(tmp_path / "target", remote) as target:
        here = target.experiences.record(task=DEPLOY, outcome="success", feedback="fine")
        report = target.experiences.import_(out)
        assert deploy not in report.added and report.unchanged == 1
        assert target.experiences.get(here).duplicates == 2  # three runs in all


@REMOTE
def test_importing_a_banks_own_export_changes_nothing(tmp_path, remote):
    out = tmp_path / "backup.jsonl"
    with bank_for(tmp_path, remote) as bank:
        memory = bank.experiences
        turn(memory, GOAL, "Added a workflow file.")
        memory.record(task=DEPLOY, outcome="success", feedback="fine")
        memory.record(task=DEPLOY, outcome="success", feedback="fine")
        memory.export(out)
        before = view(memory)
        journal = {p: p.stat().st_size for p in (tmp_path / "root" / "experiences").glob("*.jsonl")}
        for _ in range(2):
            report = memory.import_(out)
            assert (report.added, report.unchanged) == ([], 2)
            assert view(memory) == before
        assert {p: p.stat().st_size
                for p in (tmp_path / "root" / "experiences").glob("*.jsonl")} == journal


@REMOTE
def test_an_older_version_of_a_conversation_leaves_the_stored_one(tmp_path, remote):
    out = tmp_path / "backup.jsonl"
    with bank_for(tmp_path, remote) as bank:
        memory = bank.experiences
        conversation = turn(memory, GOAL, "Added a workflow file.")
        memory.export(out)
        turn(memory, "also cache pip", "Cached pip.", outcome="success")
        later = view(memory)
        report = memory.import_(out)
        assert (report.added, report.unchanged, report.skipped) == ([], 1, [])
        assert [(f.severity, f.code) for f in report.findings] == [("warning", "other-version")]
        assert conversation in report.findings[0].message
        assert view(memory) == later  # no second open record of the thread beside it
        assert memory.open_thread("c1") is None  # its outcome closed it


@REMOTE
def test_an_untrusted_import_keeps_the_thread_and_claims_no_runs(tmp_path, remote):
    out = tmp_path / "backup.jsonl"
    source_export(tmp_path, out)
    with bank_for(tmp_path / "target", remote) as target:
        agent = target.scoped(Scope(principal="agent", namespace="default", role="contributor",
                                    trusted=False, face="test"))
        added = agent.experiences.import_(out).added
        records = [target.experiences.get(i) for i in added]
        assert {r.task: (r.thread, r.duplicates, r.status) for r in records} == \
            {GOAL: ("c1", 0, "pending"), DEPLOY: (None, 0, "pending")}


@REMOTE
def test_a_bad_thread_is_named_and_the_other_lines_imported(tmp_path, remote):
    out = tmp_path / "lines.jsonl"
    out.write_text("\n".join(json.dumps(line) for line in [
        {"task": GOAL, "thread": 42},
        {"task": GOAL, "thread": "x" * 5000},
        {"task": DEPLOY, "outcome": "success", "duplicates": "many"},
    ]) + "\n")
    with bank_for(tmp_path, remote) as bank:
        report = bank.experiences.import_(out)
        assert report.skipped == ["lines.jsonl:1", "lines.jsonl:2"]
        assert all("thread" in f.message for f in report.findings)
        [added] = report.added
        assert bank.experiences.get(added).duplicates == 0  # not a count: starts at zero


@REMOTE
def test_a_later_turn_keeps_the_runs_folded_into_the_conversation(tmp_path, remote):
    with bank_for(tmp_path, remote) as bank:
        memory = bank.experiences
        conversation = turn(memory, GOAL, "Added a workflow file.")
        assert memory.record(task=GOAL).folded
        turn(memory, "also cache pip", "Cached pip.")
        assert memory.get(conversation).duplicates == 1  # was reset to 0 by the turn
    with Skillbank.open(tmp_path / "root", embedding_function=HashEmbedding(),
                        include_bundled=False) as bank:
        assert bank.experiences.get(conversation).duplicates == 1
        bank.reindex()  # the whole journal replayed says the same
        assert bank.experiences.get(conversation).duplicates == 1


def test_the_cli_moves_a_conversation_and_names_an_older_version(tmp_path, cli_root):
    out = tmp_path / "backup.jsonl"
    with Skillbank.open(cli_root, embedding_function=HashEmbedding(),
                        include_bundled=False) as bank:
        conversation = turn(bank.experiences, GOAL, "Added a workflow file.")
    runner = CliRunner()
    assert runner.invoke(app, ["experiences", "export", str(out)]).exit_code == 0
    other = tmp_path / "other"
    assert runner.invoke(app, ["--root", str(other), "experiences", "import",
                               str(out)]).exit_code == 0
    shown = json.loads(runner.invoke(app, ["--json", "--root", str(other), "experiences",
                                           "show", conversation]).stdout)
    assert shown["thread"] == "c1"
    with Skillbank.open(cli_root, embedding_function=HashEmbedding(),
                        include_bundled=False) as bank:
        turn(bank.experiences, "also cache pip", "Cached pip.", outcome="success")
    result = runner.invoke(app, ["experiences", "import", str(out)])
    assert result.exit_code == 0
    assert "other-version" in result.stdout and conversation in result.stdout


def test_in_team_mode_another_worker_continues_an_imported_conversation(two_machines,
                                                                       tmp_path):
    """The import writes the team's PostgreSQL rows: worker b reads the thread and the count."""
    out = tmp_path / "backup.jsonl"
    conversation, deploy = source_export(tmp_path, out)
    a, b = two_machines
    assert sorted(a.experiences.import_(out).added) == sorted([conversation, deploy])
    assert b.experiences.get(deploy).duplicates == 1
    assert b.experiences.open_thread("c1").id == conversation
    assert turn(b.experiences, "also cache pip", "Cached pip.", outcome="success") \
        == conversation
    assert (b.experiences.get(conversation).outcome, a.experiences.import_(out).added) == \
        ("success", [])


def test_migrate_brings_an_imported_conversation_and_its_counts(tmp_path, postgres,
                                                                chroma_server):
    """`skillbank migrate` moves the journal event by event: the imported thread and count
    (one `duplicate` event on the record itself) arrive as the root has them."""
    import uuid

    from skillbank.team.migrate import migrate_root

    out = tmp_path / "backup.jsonl"
    conversation, deploy = source_export(tmp_path, out)
    with Skillbank.open(tmp_path / "laptop", embedding_function=HashEmbedding(),
                        include_bundled=False) as laptop:
        laptop.experiences.import_(out)
    deployment = uuid.uuid4().hex[:16]
    migrate_root(tmp_path / "laptop", postgres.url, deployment=deployment)
    with Skillbank.open(tmp_path / "worker", embedding_function=HashEmbedding(),
                        include_bundled=False, chroma_url=chroma_server,
                        database_url=postgres.url, deployment=deployment) as worker:
        assert worker.experiences.get(deploy).duplicates == 1
        assert worker.experiences.open_thread("c1").id == conversation
