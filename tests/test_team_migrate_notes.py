"""`skillbank migrate` says what it leaves behind and when a deployment looks mistyped (team
hunt, session 19, defect 8).

(a) A personal root's own skills were left behind with `"skipped": []` and no word; (b)
`--deployment teem` (a typo) imported into a deployment no worker had ever opened, exit 0. Now
both are named in `warnings` (and on stderr): the skills with what to do (push them to the skills
repository), the deployment with the ones the database does hold. A warning, not a refusal (see
skillbank/team/migrate_notes.py): importing before the first worker starts is legitimate.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import uuid

import pytest

from conftest import write_skill
from skillbank import Skillbank
from skillbank.embeddings import HashEmbedding
from skillbank.team.migrate import migrate_root

pytest.importorskip("psycopg")


def personal_root(path, task: str):
    bank = Skillbank.open(path, embedding_function=HashEmbedding(), include_bundled=False,
                          share=False)
    try:
        bank.experiences.record(task, "success")
    finally:
        bank.close()
    return path


def test_the_skills_left_behind_are_named_with_what_to_do(tmp_path, postgres):
    root = personal_root(tmp_path / "laptop", "Purge the CDN cache")
    write_skill(root / "skills", "restore-db", "Restore a database from a dump.")
    deployment = uuid.uuid4().hex[:16]
    report = migrate_root(root, postgres.url, deployment=deployment)
    assert report.skills_not_imported == ["restore-db"]
    said = " ".join(report.warnings)
    assert "restore-db" in said and "skills repository" in said and "not imported" in said
    assert report.to_json()["skills_not_imported"] == ["restore-db"]


def test_a_deployment_no_worker_opened_is_warned_and_the_used_ones_named(tmp_path, postgres):
    team = "team-" + uuid.uuid4().hex[:8]
    first = migrate_root(personal_root(tmp_path / "alice", "Rotate the keys"), postgres.url,
                         deployment=team)
    assert any("held nothing before this run" in w for w in first.warnings)  # new: said once
    again = migrate_root(personal_root(tmp_path / "bob", "Renew the certificate"),
                         postgres.url, deployment=team)
    assert again.changed and again.warnings == []  # a deployment in use: no warning

    # A database holding many deployments (CI's, shared by every test) named ten others, in
    # alphabetical order, and not the one meant: the closest come first.
    import psycopg

    with psycopg.connect(postgres.url) as conn:
        for n in range(12):
            conn.execute("INSERT INTO sb_index_checkpoints (deployment, memory, data) VALUES "
                         "(%s, 'experiences', '{}') ON CONFLICT DO NOTHING", (f"aaa-{n:02d}",))
    typo = team.replace("team", "teem")
    env = {**os.environ, "SKILLBANK_EMBEDDING": "hash", "SKILLBANK_CLI_OWNER": "0"}
    env.pop("SKILLBANK_DATABASE_URL", None)
    done = subprocess.run([sys.executable, "-m", "skillbank.cli", "migrate", "--from",
                           str(personal_root(tmp_path / "carol", "Purge the cache")),
                           "--database-url", postgres.url, "--deployment", typo],
                          capture_output=True, text=True, env=env, timeout=300)
    assert done.returncode == 0, done.stderr
    said = " ".join(done.stderr.split())
    assert f"warning: deployment '{typo}' held nothing before this run" in said, said
    assert repr(team) in said  # the deployment the user most likely meant
    rerun = subprocess.run([sys.executable, "-m", "skillbank.cli", "--json", "migrate",
                            "--from", str(tmp_path / "carol"), "--database-url", postgres.url,
                            "--deployment", typo], capture_output=True, text=True, env=env,
                           timeout=300)
    assert json.loads(rerun.stdout)["warnings"] == []  # imported into before: in use now
