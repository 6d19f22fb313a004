"""`skillbank migrate` after the other ways memory moves (hunt-roundtrip, session 33).

- #1: `migrate --from` a team worker's root answered "Nothing to import … already holds
  everything" (exit 0): it read the worker's near-empty folders, never its memory (which is in
  PostgreSQL), and wrote `sb_imports` rows that made the empty target look like a deployment in
  use. Now it is a clear error naming the root's deployment, with nothing written.
- #2 (left): `experiences import` of a root's export into a deployment, then `migrate` of that
  root into it, adds the usage counts a second time. The first fix (a root's first run took
  what the deployment held of its items as the root's) dropped the counts of a second root
  with a same-named skill (review, session 33): reverted; the guard below keeps both roots'.
- #4: the summary counted journal events as experiences ("Imported 11 experiences" for 9
  records). Now `experiences` counts records new to the deployment and `experience_changes`
  the other events (a turn, an approval, a forget).
Real private PostgreSQL cluster (and a `chroma run` server for the team worker).
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
from skillbank.scope import Scope

pytest.importorskip("psycopg")

CAROL = Scope(principal="carol", namespace="carol", reads=("default",), role="contributor")


def _embedded(root):
    return Skillbank.open(root, embedding_function=HashEmbedding(), include_bundled=False)


def _worker(root, postgres, chroma_server, deployment):
    return Skillbank.open(root, embedding_function=HashEmbedding(), include_bundled=False,
                          chroma_url=chroma_server, database_url=postgres.url,
                          deployment=deployment)


def _imports(url: str, deployment: str) -> int:
    import psycopg

    with psycopg.connect(url) as conn:
        return conn.execute("SELECT count(*) FROM sb_imports WHERE deployment = %s",
                            (deployment,)).fetchone()[0]


def test_migrate_from_a_team_workers_root_is_a_clear_error_with_nothing_written(
        tmp_path, postgres, chroma_server):
    """#1: it said "Nothing to import … already holds everything in w1", exit 0, and wrote
    sb_imports rows for the (still empty) target deployment."""
    from skillbank import remember

    team, worker_root = uuid.uuid4().hex[:12], tmp_path / "w1"
    with _worker(worker_root, postgres, chroma_server, team) as worker:
        worker.experiences.record("Restart the ingest queue after a deploy", "success")
    remember.mark_team(worker_root)  # as `skillbank server --root w1 --deployment …` leaves it
    remember.keep_setting(worker_root, "deployment", team)
    target = uuid.uuid4().hex[:12]
    env = {**os.environ, "SKILLBANK_EMBEDDING": "hash", "SKILLBANK_CLI_OWNER": "0"}
    env.pop("SKILLBANK_DATABASE_URL", None)
    done = subprocess.run([sys.executable, "-m", "skillbank.cli", "--json", "migrate", "--from",
                           str(worker_root), "--database-url", postgres.url, "--deployment",
                           target], capture_output=True, text=True, env=env, timeout=300)
    assert done.returncode != 0, done.stdout  # was 0, "changed": false
    error = json.loads(done.stdout or done.stderr)["error"]
    assert "team worker's root" in error and repr(team) in error and "nothing" in error
    assert _imports(postgres.url, target) == 0  # was 4 rows (origin, experiences, drafts, audit)

    from skillbank.errors import InvalidInputError
    from skillbank.team.migrate import migrate_root

    with pytest.raises(InvalidInputError, match="team worker's root"):
        migrate_root(worker_root, postgres.url, deployment=team)
def test_the_summary_counts_records_and_changes_apart(tmp_path, postgres):
    """#4: "Imported 11 experiences" for a root of 9 records; a rerun after an approval, a
    forget, a turn and one new record said "Imported 4 experiences"."""
    from skillbank.team.migrate import migrate_root

    root = tmp_path / "laptop"
    with _embedded(root) as bank:
        ids = [bank.experiences.record(f"Rebuild the search index of shard {n}", "success",
                                       feedback=f"shard {n} took an hour")
               for n in range(3)]
        gone = bank.experiences.record("Print the seating plan", "success")
        bank.forget(gone)
        held = len(bank.experiences.export(tmp_path / "held.jsonl") and
                   (tmp_path / "held.jsonl").read_text().splitlines())
    deployment = uuid.uuid4().hex[:12]
    first = migrate_root(root, postgres.url, deployment=deployment)
    assert first.imported["experiences"] == held == 3, first.imported
    assert "Imported 3 experiences" in first.summary()
    with _embedded(root) as bank:
        bank.forget(ids[0])
        bank.experiences.record("Drain the old load balancer", "success")
    second = migrate_root(root, postgres.url, deployment=deployment)
    assert second.imported["experiences"] == 1, second.imported  # was 2: the forget counted
    assert second.imported["experience_changes"] >= 1
    assert "Imported 1 experiences, " in second.summary()
    assert "experience changes" in second.summary()
    assert json.loads(json.dumps(second.to_json()))["imported"]["experiences"] == 1


def test_two_roots_using_a_same_named_skill_both_count(tmp_path, postgres):
    """Skill usage is keyed by the skill's name: alice's 3 uses and bob's 2 of their own
    `deploy` make 5 in the deployment (the first fix of #2 left 3)."""
    from conftest import write_skill

    from skillbank.team.migrate import migrate_root

    deployment = uuid.uuid4().hex[:12]
    for name, uses in (("alice", 3), ("bob", 2)):
        root = tmp_path / name
        write_skill(root / "skills", "deploy", "Deploy the service to production safely.")
        with _embedded(root) as bank:
            for _ in range(uses):
                bank.skills.record_use("deploy", success=True)
        migrate_root(root, postgres.url, deployment=deployment)
    import psycopg

    with psycopg.connect(postgres.url) as conn:
        (total,) = conn.execute(
            "SELECT sum(uses) FROM sb_usage WHERE deployment = %s AND memory = 'skills' "
            "AND item_id = 'deploy'", (deployment,)).fetchone()
    assert total == 5
