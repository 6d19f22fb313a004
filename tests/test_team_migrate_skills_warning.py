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
from pathlib import Path

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


def test_the_warnings_copy_command_run_verbatim_copies_one_skill_and_records_nothing(
        tmp_path, postgres, chroma_server):
    """hunt-teamport #3, session 35: the command the warning gave for one skill,
    `skillbank --root TEAM-ROOT --skills-dir PERSONAL/skills skills copy NAME`, recorded the
    member's whole personal skills folder in the team root's `skill_roots` (the first
    `--skills-dir` is remembered), so the team's workers served every skill in it, a private
    one included. Now the command carries `--no-remember`: run as the warning words it (only
    TEAM-ROOT and NAME filled in), it copies that skill and leaves the team root's settings
    without the personal folder."""
    import json
    import re
    import shlex

    root = personal_root(tmp_path / "my laptop")  # a space: the path is pasted as it is
    write_skill(root / "skills", "my-diary", "Private diary of performance review notes.")
    deployment = uuid.uuid4().hex[:16]
    report = migrate_root(root, postgres.url, deployment=deployment)
    said = " ".join(" ".join(report.warnings).split())
    command = re.search(r"or run `(skillbank [^`]*)`", said).group(1)
    team = tmp_path / "team-root"
    words = [{"TEAM-ROOT": str(team), "NAME": "pg-vacuum"}.get(w, w)
             for w in shlex.split(command)]
    env = {**os.environ, "SKILLBANK_EMBEDDING": "hash", "SKILLBANK_CLI_OWNER": "0",
           "HOME": str(tmp_path / "home"), "SKILLBANK_DATABASE_URL": postgres.url,
           "SKILLBANK_CHROMA_URL": chroma_server, "SKILLBANK_DEPLOYMENT": deployment}
    env.pop("SKILLBANK_SKILLS_REPO", None)
    done = subprocess.run([sys.executable, "-m", "skillbank.cli", *words[1:]],
                          capture_output=True, text=True, env=env, timeout=300)
    assert done.returncode == 0, done.stderr
    assert (team / "skills" / "pg-vacuum" / "SKILL.md").is_file()
    settings = team / "skillbank.toml"
    assert str(root) not in (settings.read_text() if settings.exists() else ""), \
        settings.read_text()
    listed = subprocess.run([sys.executable, "-m", "skillbank.cli", "--root", str(team),
                             "--json", "skills", "list"], capture_output=True, text=True,
                            env=env, timeout=300)
    assert listed.returncode == 0, listed.stderr
    served = {s["name"]: s for s in json.loads(listed.stdout)}
    assert "my-diary" not in served and Path(served["pg-vacuum"]["path"]).is_relative_to(team)
