"""`skillbank migrate`'s warning about the skills left behind is worded for the deployment.

hunt-skillteam #4, session 32: migrating a personal root into a team deployment with no skills
repository (docs/team.md's setup) warned that "a team serves skills from its git repository"
and that a worker's save_skill "proposes them"; there, save_skill creates and serves a skill at
once, and the step that works (copy the folder into the team root's skills/, or `skills copy`)
was not named. Now: without `skills_repo` the warning names those steps (git as an "if"); with
one, it says to push them to that repository for review. Before, both gave the git text.
"""

from __future__ import annotations

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

REPO = "https://git.example.com/team/skills.git"


def personal_root(path):
    bank = Skillbank.open(path, embedding_function=HashEmbedding(), include_bundled=False,
                          share=False)
    try:
        bank.experiences.record("Vacuum the orders table", "success")
    finally:
        bank.close()
    write_skill(path / "skills", "pg-vacuum", "Vacuum and analyse a PostgreSQL table.")
    return path


def test_without_a_skills_repository_the_warning_names_the_skills_folder(tmp_path, postgres):
    root = personal_root(tmp_path / "laptop")
    report = migrate_root(root, postgres.url, deployment=uuid.uuid4().hex[:16])
    said = " ".join(" ".join(report.warnings).split())
    assert "pg-vacuum" in said and "not imported" in said
    assert "<team root>/skills" in said and "skills copy" in said, said
    assert "no skills repository is configured" in said, said
    assert "a team serves skills from its git repository" not in said, said
    assert "which proposes them" not in said, said


def test_with_a_skills_repository_the_warning_says_to_push_there(tmp_path, postgres):
    root = personal_root(tmp_path / "laptop")
    report = migrate_root(root, postgres.url, deployment=uuid.uuid4().hex[:16],
                          skills_repo=REPO)
    said = " ".join(" ".join(report.warnings).split())
    assert REPO in said and "push a branch" in said and "which proposes them" in said, said
    assert "<team root>/skills" not in said, said


def test_the_cli_words_it_for_the_skills_repository_its_settings_name(tmp_path, postgres):
    root = personal_root(tmp_path / "laptop")
    env = {**os.environ, "SKILLBANK_EMBEDDING": "hash", "SKILLBANK_CLI_OWNER": "0",
           "HOME": str(tmp_path / "home")}
    env.pop("SKILLBANK_DATABASE_URL", None)
    env.pop("SKILLBANK_SKILLS_REPO", None)
    said = {}
    for repo in ("", REPO):
        run_env = {**env, "SKILLBANK_SKILLS_REPO": repo} if repo else env
        done = subprocess.run([sys.executable, "-m", "skillbank.cli", "migrate", "--from",
                               str(root), "--database-url", postgres.url, "--deployment",
                               uuid.uuid4().hex[:16]], capture_output=True, text=True,
                              env=run_env, timeout=300)
        assert done.returncode == 0, done.stderr
        said[repo] = " ".join(done.stderr.split())
    assert "<team root>/skills" in said[""] and "which proposes them" not in said[""], said
    assert REPO in said[REPO] and "push a branch" in said[REPO], said
