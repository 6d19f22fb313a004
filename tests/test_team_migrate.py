"""`skillbank migrate` (issue 24): an embedded root's memory into a team deployment's
PostgreSQL, on a real private cluster and a real `chroma run` server; a team worker with its
own root then recalls what the embedded root had learnt, and running migrate again changes
nothing. Bad input (a wrong database URL, a folder that is no root) gives a clear error.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import uuid

import pytest

from skillbank import Skillbank
from skillbank.embeddings import HashEmbedding

pytest.importorskip("psycopg")


def _cli(*args: str, root=None) -> subprocess.CompletedProcess:
    env = {**os.environ, "SKILLBANK_EMBEDDING": "hash", "SKILLBANK_CLI_OWNER": "0"}
    env.pop("SKILLBANK_DATABASE_URL", None)
    return subprocess.run([sys.executable, "-m", "skillbank.cli", "--json", *args],
                          capture_output=True, text=True, env=env, timeout=300)


def _rows(url: str, deployment: str) -> dict[str, int]:
    import psycopg

    with psycopg.connect(url) as conn:
        return {table: conn.execute(f"SELECT count(*) FROM {table} WHERE deployment = %s",
                                    (deployment,)).fetchone()[0]
                for table in ("sb_experience_events", "sb_experiences", "sb_usage", "sb_audit",
                              "sb_forgotten", "sb_guidelines")}


def test_migrate_round_trip_then_a_team_worker_recalls_and_a_rerun_changes_nothing(
        tmp_path, postgres, chroma_server):
    embedded = tmp_path / "laptop"
    bank = Skillbank.open(embedded, embedding_function=HashEmbedding(), include_bundled=False)
    try:
        eid = bank.experiences.record(
            "Restore the nightly snapshot of the wiki database", "success",
            feedback="Stop the wiki first, then restore.",
            lessons=["Check the snapshot's checksum before restoring."])
        gone = bank.experiences.record("Print the seating plan", "success")
        for n in range(3):
            bank.experiences.record(f"Rotate the backup tapes of rack {n}", "success",
                                    when_to_use="When rotating a rack's backup tapes",
                                    steps=[{"action": "eject"}, {"action": "label"}])
        drafts = [d.name for d in bank.skills.propose(min_support=3)]
        assert drafts
        bank.experiences.mark(eid, helped=True)
        gid = bank.guidelines.learn("Never restore a snapshot over a running wiki.").ids()[0]
        bank.forget(gone)
    finally:
        bank.close()
    deployment = uuid.uuid4().hex[:16]
    args = ("migrate", "--from", str(embedded), "--database-url", postgres.url,
            "--deployment", deployment)

    first = _cli(*args)
    assert first.returncode == 0, first.stderr
    report = json.loads(first.stdout)
    assert report["changed"] and report["imported"]["experiences"] >= 3
    assert report["imported"]["guidelines"] == 1 and report["imported"]["usage"] >= 1
    assert report["imported"]["audit"] >= 3 and report["imported"]["drafts"] >= 2
    assert "test-password" not in first.stdout  # the URL is shown masked

    worker = Skillbank.open(tmp_path / "team-worker", embedding_function=HashEmbedding(),
                            include_bundled=False, chroma_url=chroma_server,
                            database_url=postgres.url, deployment=deployment)
    try:
        hits = worker.experiences.recall("restore the wiki database snapshot", k=3)
        assert hits and hits[0].id == eid and "Stop the wiki" in hits[0].record.feedback
        assert hits[0].record.usage.successes == 1  # the mark came along
        assert gone not in worker.experiences  # forgotten before: still forgotten
        assert worker.guidelines.get(gid).text == "Never restore a snapshot over a running wiki."
        assert any(e.id == eid for e in worker.audit.query(action="record"))
        assert [d.name for d in worker.skills.drafts()] == drafts
        assert worker.skills.propose(min_support=3) == []  # the ledger came along
    finally:
        worker.close()

    before_rerun = _rows(postgres.url, deployment)  # the worker's recall counted a use
    again = _cli(*args)
    assert again.returncode == 0, again.stderr
    report = json.loads(again.stdout)
    assert not report["changed"] and not any(report["imported"].values())
    assert _rows(postgres.url, deployment) == before_rerun


def test_migrate_says_nothing_changes_in_words(tmp_path, postgres):
    from skillbank.team.migrate import migrate_root

    embedded = tmp_path / "laptop"
    bank = Skillbank.open(embedded, embedding_function=HashEmbedding(), include_bundled=False)
    try:
        bank.experiences.record("Archive last year's tickets", "success")
    finally:
        bank.close()
    deployment = uuid.uuid4().hex[:16]
    assert migrate_root(embedded, postgres.url, deployment=deployment).changed
    second = migrate_root(embedded, postgres.url, deployment=deployment)
    assert not second.changed and "changes nothing" in second.summary()
    assert "Nothing to import" in second.summary()


def test_a_wrong_database_url_or_a_folder_that_is_no_root_is_a_clear_error(tmp_path, postgres):
    embedded = tmp_path / "laptop"
    bank = Skillbank.open(embedded, embedding_function=HashEmbedding(), include_bundled=False)
    bank.close()
    wrong = postgres.url.replace("test-password", "not-the-password")
    failed = _cli("migrate", "--from", str(embedded), "--database-url", wrong,
                  "--deployment", "d1")
    assert failed.returncode != 0
    error = json.loads(failed.stdout or failed.stderr)["error"]
    assert "database_url" in error and "password" in error and "not-the-password" not in error
    failed = _cli("migrate", "--from", str(embedded), "--database-url", "mysql://x",
                  "--deployment", "d1")
    assert "postgresql://" in json.loads(failed.stdout or failed.stderr)["error"]
    (tmp_path / "empty").mkdir()
    for where, says in ((tmp_path / "empty", "not a skillbank memory root"),
                        (tmp_path / "missing", "does not exist")):
        failed = _cli("migrate", "--from", str(where), "--database-url", postgres.url,
                      "--deployment", "d1")
        assert failed.returncode != 0
        assert says in json.loads(failed.stdout or failed.stderr)["error"]


def test_a_line_postgresql_refuses_leaves_nothing_half_written_and_a_rerun_finishes(
        tmp_path, postgres):
    from skillbank.errors import InvalidInputError
    from skillbank.team.migrate import migrate_root

    embedded = tmp_path / "laptop"
    bank = Skillbank.open(embedded, embedding_function=HashEmbedding(), include_bundled=False)
    try:
        bank.experiences.record("Renew the office's domain name", "success")
    finally:
        bank.close()
    month = sorted((embedded / "audit").glob("*.jsonl"))[-1]
    good = month.read_text()
    bad = {"at": "the day before yesterday", "principal": "me", "role": "admin", "face": "cli",
           "namespace": "default", "action": "record", "kind": "experience", "id": "exp-1"}
    month.write_text(good + json.dumps(bad) + "\n")
    deployment = uuid.uuid4().hex[:16]
    with pytest.raises(InvalidInputError, match="nothing was imported.*run migrate again"):
        migrate_root(embedded, postgres.url, deployment=deployment)
    assert not any(_rows(postgres.url, deployment).values())  # not one row of it
    month.write_text(good)
    assert migrate_root(embedded, postgres.url, deployment=deployment).imported["experiences"]
