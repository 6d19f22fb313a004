"""`skillbank migrate --namespace NS` (hunt): an embedded root's memory is in namespace
"default", which the tokens docs/team.md shows (`--namespace alice --reads team`) do not read.
After a successful migrate the team saw nothing, and neither the output nor the docs said where
the memory was. Now migrate can put it in a namespace, and says where it landed. Real private
PostgreSQL cluster; the CLI through its own process."""

from __future__ import annotations

import json
import subprocess
import sys
import uuid

import pytest

from skillbank import Skillbank
from skillbank.embeddings import HashEmbedding
from test_multiprocess import env_for

pytest.importorskip("psycopg")


def _root(path):
    with Skillbank.open(path, embedding_function=HashEmbedding(), include_bundled=False,
                        share=False) as bank:
        bank.experiences.record(task="Rotate the staging database password", outcome="failure",
                                lessons=["Update the app secrets before rotating."])
        bank.guidelines.add("Never put SQL in f-strings.")
    return path


def _namespaces(url: str, deployment: str) -> dict[str, set[str]]:
    import psycopg

    with psycopg.connect(url) as conn:
        return {table: {row[0] for row in conn.execute(sql, (deployment,))} for table, sql in (
            ("experiences", "SELECT record->>'namespace' FROM sb_experiences "
                            "WHERE deployment = %s"),
            ("guidelines", "SELECT namespace FROM sb_guidelines WHERE deployment = %s"))}


def test_migrate_into_a_namespace_and_say_where(tmp_path, postgres):
    from skillbank.team.migrate import migrate_root

    root = _root(tmp_path / "laptop")
    deployment = uuid.uuid4().hex[:16]
    report = migrate_root(root, postgres.url, deployment=deployment, namespace="team")
    assert _namespaces(postgres.url, deployment) == {"experiences": {"team"},
                                                     "guidelines": {"team"}}
    assert "namespace 'team'" in report.summary() and "--reads team" in report.summary()
    assert report.to_json()["namespaces"] == ["team"]
    assert not migrate_root(root, postgres.url, deployment=deployment,
                            namespace="team").changed


def test_by_default_memory_keeps_its_namespace_and_the_cli_says_which(tmp_path, postgres):
    root = _root(tmp_path / "laptop")
    deployment = uuid.uuid4().hex[:16]
    done = subprocess.run(
        [sys.executable, "-m", "skillbank.cli", "migrate", "--from", str(root),
         "--database-url", postgres.url, "--deployment", deployment],
        env=env_for(root), capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    assert "namespace 'default'" in done.stdout and "--reads default" in done.stdout
    assert "--namespace" in done.stdout
    assert _namespaces(postgres.url, deployment) == {"experiences": {"default"},
                                                     "guidelines": {"default"}}

    other = uuid.uuid4().hex[:16]
    done = subprocess.run(
        [sys.executable, "-m", "skillbank.cli", "--json", "migrate", "--from", str(root),
         "--database-url", postgres.url, "--deployment", other, "--namespace", "team"],
        env=env_for(root), capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    assert json.loads(done.stdout)["namespaces"] == ["team"]
    assert _namespaces(postgres.url, other)["experiences"] == {"team"}


def test_a_namespace_that_is_not_one_is_refused_before_anything_is_written(tmp_path, postgres):
    from skillbank.errors import InvalidInputError
    from skillbank.team.migrate import migrate_root

    root = _root(tmp_path / "laptop")
    with pytest.raises(InvalidInputError, match="namespace"):
        migrate_root(root, postgres.url, deployment=uuid.uuid4().hex[:16], namespace="*")
