"""hunt-teamchurn #1, session 33: a write PostgreSQL committed was answered as failed when the
connection dropped just after the commit.

The record's own transaction commits (the experience journal row, the rule, the vote); then the
index write's hook announces it on the change feed in a second transaction. With PostgreSQL
going down in between, that announcement raised `StoreUnavailableError` ("PostgreSQL ... is
unreachable") out of `record` / `add` / `vote`: the caller was told nothing was saved, and a
retry counted the vote twice or folded the experience in as a second run. Now the announcement
failing is logged and the call answers done; the write is there once.

Run on a private PostgreSQL cluster and a real `chroma run`; the post-commit step is made to
fail as the hunter saw it (psycopg's OperationalError from the feed's own transaction). Team
mode has no owner-process client (its clients are workers over MCP, which call this same core
path), so it runs in-process only.
"""

from __future__ import annotations

import logging
import uuid

import pytest

psycopg = pytest.importorskip("psycopg")


def _bank(root, chroma_url: str, database_url: str, deployment: str):
    from skillbank import Skillbank
    from skillbank.embeddings import HashEmbedding

    return Skillbank.open(root, embedding_function=HashEmbedding(), include_bundled=False,
                          chroma_url=chroma_url, database_url=database_url,
                          deployment=deployment)


@pytest.fixture
def notice_fails(monkeypatch):
    from skillbank.store.postgres.changes import PostgresChangeFeed

    calls = []

    def wrote(self, kind, ids=None):
        calls.append(kind)
        raise psycopg.OperationalError(
            "consuming input failed: server closed the connection unexpectedly")

    monkeypatch.setattr(PostgresChangeFeed, "wrote", wrote)
    return calls


def _one(url: str, sql: str, params) -> tuple:
    with psycopg.connect(url) as conn:
        return conn.execute(sql, params).fetchone()


def test_a_committed_write_whose_change_notice_fails_is_answered_done_and_saved_once(
        tmp_path, chroma_server, postgres, notice_fails, caplog):
    deployment = uuid.uuid4().hex[:12]
    with _bank(tmp_path / "root", chroma_server, postgres.url, deployment) as bank:
        caplog.set_level(logging.WARNING, logger="skillbank.index")
        task = f"post-commit probe {uuid.uuid4().hex}"
        bank.experiences.record(task=task, outcome="success")  # raised before the fix
        gid = bank.guidelines.add("Quote the ticket number in every commit message",
                                 topic="git").guideline_id
        voted = bank.guidelines.vote(gid, helpful=True)
        assert voted.helpful == 1
        assert notice_fails, "the change feed was never asked to announce the writes"
        assert "is saved, but telling the other processes failed" in caplog.text

    assert _one(postgres.url, "SELECT count(*) FROM sb_experiences WHERE deployment = %s "
                "AND record->>'task' = %s", (deployment, task)) == (1,)
    assert _one(postgres.url, "SELECT count(*) FROM sb_guidelines WHERE deployment = %s "
                "AND id = %s", (deployment, gid)) == (1,)
    with _bank(tmp_path / "again", chroma_server, postgres.url, deployment) as again:
        assert again.guidelines.get(gid).helpful == 1  # counted once
        assert [h.record.task for h in again.experiences.recall(task)][:1] == [task]


def test_an_experience_whose_index_checkpoint_fails_after_the_commit_is_answered_done(
        tmp_path, chroma_server, postgres, monkeypatch, caplog):
    """hunt-teamchurn #1, session 33 (found again while fixing it): after the experience is
    committed and indexed, the shared index checkpoint is moved in a fenced statement; with
    PostgreSQL going down it raised LockLostError ("trying it again is safe") out of `record`
    although the experience was saved. Now it is logged and the next sync re-applies."""
    from skillbank.store.postgres.experiences import PostgresExperienceLog
    from skillbank.store.postgres.locks import LockLostError

    def write_checkpoint(self, checkpoint):
        raise LockLostError("this deployment's write lock was lost (the session ended)")

    deployment = uuid.uuid4().hex[:12]
    task = f"checkpoint probe {uuid.uuid4().hex}"
    with _bank(tmp_path / "root", chroma_server, postgres.url, deployment) as bank:
        caplog.set_level(logging.WARNING, logger="skillbank")
        monkeypatch.setattr(PostgresExperienceLog, "write_checkpoint", write_checkpoint)
        bank.experiences.record(task=task, outcome="success")  # raised before the fix
        assert "the index checkpoint was not moved" in caplog.text
        monkeypatch.undo()
    assert _one(postgres.url, "SELECT count(*) FROM sb_experiences WHERE deployment = %s "
                "AND record->>'task' = %s", (deployment, task)) == (1,)
    with _bank(tmp_path / "again", chroma_server, postgres.url, deployment) as again:
        assert [h.record.task for h in again.experiences.recall(task)][:1] == [task]
