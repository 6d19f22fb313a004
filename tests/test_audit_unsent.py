"""A write whose audit event cannot be written yet answers done, and its event is written later.

hunt-pg #1, session 28: the memories note a write after its own transaction; PostgreSQL dropped
between the two, so a committed `add_guideline` (or `record_experience`) answered "unreachable"
and sb_audit never named who added the rule. The write is answered as done and its event is kept
(`skillbank.audit.UnsentEvents`), then written by the next audited change.

The drop is real: a trigger on sb_audit that ends its own backend for this deployment (what a
PostgreSQL restart does to the connection), no patched Python. Run on an in-process team bank and
through a real `skillbank server` worker (another process owning the root, its MCP clients); the
file-backed log the same way on an embedded root (in process and a client of its owner).
"""

from __future__ import annotations

import asyncio
import contextlib
import uuid

import psycopg
import pytest

from conftest import stop_process
from owner_client import bank_for
from team_worker import open_bank, start_server

TOKEN = "audit-unsent-token"
RULE = "Always tag the Quillon release builds before deploying them"
TASK = "Rotate the Quillon cache keys"


@contextlib.contextmanager
def audit_inserts_dropped(url: str, deployment: str):
    """sb_audit's INSERTs for `deployment` end their own connection until the block ends."""
    name = f"drop_audit_{deployment}"
    with psycopg.connect(url, autocommit=True) as admin:
        admin.execute(f"CREATE FUNCTION {name}() RETURNS trigger LANGUAGE plpgsql AS $$ "
                      "BEGIN PERFORM pg_terminate_backend(pg_backend_pid()); RETURN NEW; END $$")
        admin.execute(f"CREATE TRIGGER {name} BEFORE INSERT ON sb_audit FOR EACH ROW "
                      f"WHEN (NEW.deployment = '{deployment}') EXECUTE FUNCTION {name}()")
        try:
            yield
        finally:
            admin.execute(f"DROP TRIGGER {name} ON sb_audit")
            admin.execute(f"DROP FUNCTION {name}()")


def audited(url: str, deployment: str) -> list[tuple[str, str]]:
    with psycopg.connect(url, autocommit=True) as conn:
        return [tuple(r) for r in conn.execute(
            "SELECT action, item_id FROM sb_audit WHERE deployment = %s ORDER BY seq",
            (deployment,)).fetchall()]


async def _through_worker(url: str, writes: list[tuple[str, dict]]) -> list[str]:
    from mcp_http import bearer_session, call_ok

    ids = []
    async with bearer_session(url, TOKEN, timeout=120) as client:
        for tool, args in writes:
            answer = await call_ok(client, tool, args)  # asserts the call succeeded
            ids.append(answer.get("guideline_id") or answer.get("id"))
    return ids


@pytest.mark.parametrize("remote", [False, True], ids=["in-process", "client-of-owner"])
def test_team_write_answers_done_when_its_audit_insert_drops_and_is_audited_later(
        tmp_path, chroma_server, postgres, remote):
    deployment = "d" + uuid.uuid4().hex[:12]
    root = tmp_path / "root"
    rule = {"text": RULE, "topic": "release"}
    experience = {"task": TASK, "outcome": "success"}
    later = {"task": "Drain the Quillon queue", "outcome": "success"}
    if remote:
        proc, url = start_server(root, chroma_server, postgres.url, "--token", TOKEN, "--trust",
                                 deployment=deployment)
        try:
            with audit_inserts_dropped(postgres.url, deployment):
                gid, eid = asyncio.run(_through_worker(
                    url, [("add_guideline", rule), ("record_experience", experience)]))
                assert audited(postgres.url, deployment) == []
            (next_id,) = asyncio.run(_through_worker(url, [("record_experience", later)]))
        finally:
            stop_process(proc)
    else:
        bank = open_bank(root, chroma_server, postgres.url, deployment)
        try:
            with audit_inserts_dropped(postgres.url, deployment):
                gid = bank.guidelines.add(rule["text"], topic=rule["topic"]).guideline_id
                eid = bank.experiences.record(**experience)
                assert audited(postgres.url, deployment) == []
            assert bank.guidelines.get(gid).status == "active"  # committed, and served
            next_id = bank.experiences.record(**later)
        finally:
            bank.close()
    assert gid.startswith("gl-") and eid.startswith("exp-")
    assert audited(postgres.url, deployment) == [
        ("add", gid), ("record", eid), ("record", next_id)]


@pytest.mark.parametrize("remote", [False, True], ids=["in-process", "client-of-owner"])
def test_file_audit_event_not_written_is_written_by_the_next_write(tmp_path, remote):
    with bank_for(tmp_path, remote) as bank:
        folder = tmp_path / "root" / "audit"
        held = folder.with_name("audit-held")
        folder.rename(held) if folder.exists() else None
        folder.write_text("not a folder: every append fails (OSError)")
        first = bank.experiences.record(task=TASK, outcome="success")
        folder.unlink()
        if held.exists():
            held.rename(folder)
        second = bank.experiences.record(task="Drain the Quillon queue", outcome="success")
        from skillbank.audit import open_log

        assert [(e.action, e.id) for e in open_log(tmp_path / "root").query()] == [
            ("record", first), ("record", second)]


def test_an_unwritten_audit_event_is_logged_without_its_id(tmp_path, caplog):
    """The events themselves were logged at ERROR, so a draft's or skill's name stayed in the
    worker's log after a forget (docs/team.md: ids and names are never logged; review of
    session 28). The log names how many of which action, not which item. A log message, so in
    this process only (an owner process logs in its own)."""
    import logging

    from skillbank import Skillbank
    from skillbank.embeddings import HashEmbedding

    with Skillbank.open(tmp_path / "root", embedding_function=HashEmbedding()) as bank:
        folder = tmp_path / "root" / "audit"
        if folder.exists():
            folder.rename(folder.with_name("audit-held"))
        folder.write_text("not a folder: every append fails (OSError)")
        with caplog.at_level(logging.ERROR, logger="skillbank.audit"):
            eid = bank.experiences.record(task=TASK, outcome="success")
        folder.unlink()
    said = " ".join(r.getMessage() for r in caplog.records)
    assert "could not write the audit log" in said and "record experience x1" in said, said
    assert eid not in said


def test_a_batch_written_in_part_is_kept_in_part(tmp_path):
    """A batch over two month files of which only one could be written was kept whole, and its
    written events were written again at every later append (review of session 28). A file
    log unit: no bank operation is under test."""
    from datetime import datetime, timezone

    from skillbank.audit import FileAuditLog, event

    log = FileAuditLog(tmp_path / "audit")
    nov = lambda i: event("add", "guideline", i, at=datetime(2026, 11, 30, 23, 59, tzinfo=timezone.utc))  # noqa: E731
    dec = lambda i: event("add", "guideline", i, at=datetime(2026, 12, 1, 0, 1, tzinfo=timezone.utc))  # noqa: E731
    log.append([nov("gl-nov-0")])
    (tmp_path / "audit" / "2026-12.jsonl").mkdir()  # December's file cannot be written
    for batch in ([nov("gl-nov-1"), dec("gl-dec-1")], [dec("gl-dec-2")]):
        with pytest.raises(OSError):
            log.append(batch)
    (tmp_path / "audit" / "2026-12.jsonl").rmdir()
    log.append([dec("gl-dec-3")])
    assert [e.id for e in log.query()] == ["gl-nov-0", "gl-nov-1", "gl-dec-1", "gl-dec-2",
                                           "gl-dec-3"]
