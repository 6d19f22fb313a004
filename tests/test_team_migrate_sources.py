"""Which root `skillbank migrate` thinks it is reading (skillbank/team/migrate_source.py).

Users met two ways a root's records were skipped or counted twice:
- a root copied with `cp -r` (a starter root handed to a colleague) shares the original's
  `.skillbank-id`; migrated into the same deployment, the copy was read from the original's
  journal offsets and its own experiences and audit said "Nothing to import";
- a root with no id file (an older skillbank's, or the file lost) was keyed by its path, and once
  any command created the id, the next migrate imported everything again (usage, audit doubled).
Real private PostgreSQL cluster.
"""

from __future__ import annotations

import shutil
import uuid

import pytest

from skillbank import Skillbank
from skillbank.embeddings import HashEmbedding

pytest.importorskip("psycopg")


def _open(root):
    return Skillbank.open(root, embedding_function=HashEmbedding(), include_bundled=False,
                          share=False)


def _count(url: str, sql: str, *args) -> int:
    import psycopg

    with psycopg.connect(url) as conn:
        return conn.execute(sql, args).fetchone()[0]


def _tasks(url: str, deployment: str) -> list[str]:
    import psycopg

    with psycopg.connect(url) as conn:
        return sorted(r[0] for r in conn.execute(
            "SELECT record->>'task' FROM sb_experiences WHERE deployment = %s", (deployment,)))


def test_a_copied_root_is_imported_as_its_own_and_the_shared_history_once(tmp_path, postgres):
    from skillbank.team.migrate import migrate_root

    alice, bob = tmp_path / "alice", tmp_path / "bob"
    bank = _open(alice)
    try:
        bank.experiences.record(task="Starter: read the onboarding page", outcome="success")
    finally:
        bank.close()
    shutil.copytree(alice, bob)  # cp -r: bob's root has alice's .skillbank-id
    bank = _open(alice)
    try:
        bank.experiences.record(task="Alice: tune the Kafka consumer lag", outcome="success")
    finally:
        bank.close()
    bank = _open(bob)
    try:
        bank.experiences.record(task="Bob: rotate the TLS certificates", outcome="failure",
                                lessons=["Check the certificate chain order."])
    finally:
        bank.close()
    audit_lines = {root: sum(len(p.read_text().splitlines())
                             for p in (root / "audit").glob("*.jsonl"))
                   for root in (alice, bob)}

    deployment = uuid.uuid4().hex[:16]
    first = migrate_root(alice, postgres.url, deployment=deployment)
    second = migrate_root(bob, postgres.url, deployment=deployment)
    assert second.changed, "the copy's records were skipped: " + second.summary()
    assert first.copy_of is None and second.copy_of == str(alice.resolve())
    assert "copy" in second.summary()

    tasks = _tasks(postgres.url, deployment)
    assert "Bob: rotate the TLS certificates" in tasks
    assert tasks.count("Starter: read the onboarding page") == 1
    starter_events = _count(
        postgres.url, "SELECT count(*) FROM sb_experience_events WHERE deployment = %s "
        "AND event->'record'->>'task' = 'Starter: read the onboarding page'", deployment)
    assert starter_events == 1, "the history both roots share was imported twice"
    shared_audit = audit_lines[alice] + audit_lines[bob] - _count(
        postgres.url, "SELECT count(*) FROM sb_audit WHERE deployment = %s", deployment)
    assert shared_audit > 0, "the audit events from before the copy were imported twice"

    # Each one run again changes nothing, in either order.
    assert not migrate_root(alice, postgres.url, deployment=deployment).changed
    assert not migrate_root(bob, postgres.url, deployment=deployment).changed
    # A root moved to another folder is the same root (its id file keeps its inode).
    moved = tmp_path / "alice-moved"
    alice.rename(moved)
    again = migrate_root(moved, postgres.url, deployment=deployment)
    assert not again.changed and again.copy_of is None


def _usage(url: str, deployment: str) -> list[tuple]:
    import psycopg

    with psycopg.connect(url) as conn:
        return sorted(conn.execute("SELECT memory, item_id, uses, successes FROM sb_usage "
                                   "WHERE deployment = %s", (deployment,)).fetchall())


def test_a_root_without_an_id_is_imported_once(tmp_path, postgres):
    from skillbank.index_ownership import IDENTITY_FILE
    from skillbank.team.migrate import migrate_root

    root = tmp_path / "old"
    bank = _open(root)
    try:
        bank.skills.create("deploy", "Deploy the service.", "# Steps\n\n1. Ship.\n")
        bank.skills.record_use("deploy", success=True)
        bank.experiences.record(task="Deploy the billing service", outcome="success")
    finally:
        bank.close()
    (root / IDENTITY_FILE).unlink()
    deployment = uuid.uuid4().hex[:16]
    migrate_root(root, postgres.url, deployment=deployment)
    usage = _usage(postgres.url, deployment)
    audit = _count(postgres.url, "SELECT count(*) FROM sb_audit WHERE deployment = %s",
                   deployment)
    assert usage and audit

    _open(root).close()  # any command on the root: its id file exists from here on
    assert not migrate_root(root, postgres.url, deployment=deployment).changed
    assert _usage(postgres.url, deployment) == usage
    assert _count(postgres.url, "SELECT count(*) FROM sb_audit WHERE deployment = %s",
                  deployment) == audit


def test_what_an_older_run_kept_under_the_roots_path_is_taken_over_by_its_id(
        tmp_path, postgres):
    """An older skillbank keyed a root with no id by its path: a run that finds the id now
    continues from what that run imported."""
    import psycopg

    from skillbank.index_ownership import IDENTITY_FILE
    from skillbank.team.migrate import migrate_root

    root = tmp_path / "old"
    bank = _open(root)
    try:
        bank.experiences.record(task="Deploy the billing service", outcome="success")
    finally:
        bank.close()
    deployment = uuid.uuid4().hex[:16]
    migrate_root(root, postgres.url, deployment=deployment)
    identity = (root / IDENTITY_FILE).read_text().strip()
    with psycopg.connect(postgres.url) as conn:  # as the older run left it
        conn.execute("UPDATE sb_imports SET source = %s WHERE deployment = %s AND source = %s",
                     (str(root.resolve()), deployment, identity))
    assert not migrate_root(root, postgres.url, deployment=deployment).changed
