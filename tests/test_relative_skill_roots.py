"""A relative `skill_roots` entry in `<root>/skillbank.toml` is the root's, whatever folder a
command runs in; a relative `--skills-dir` on the command line stays the current folder's.

What users met (docs hunt): with `skill_roots = [".agents/skills"]` the same root, synced from a
project folder, added the project's skill; synced from anywhere else it removed it again (and
the next run embedded it again), while `[skill_trust]` paths beside it were the root's.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from conftest import write_skill
from owner_client import client_bank, owner_process
from skillbank import remember
from skillbank.settings import load_settings


def _root(tmp_path: Path) -> Path:
    """A root whose settings name `.agents/skills` (under the root) relatively, and a decoy
    folder of the same name under a project folder a command may run in."""
    root = tmp_path / "root"
    write_skill(root / ".agents" / "skills", "local-one", "Summarise the weekly sales figures")
    write_skill(tmp_path / "proj" / ".agents" / "skills", "decoy", "Not this root's skill")
    (tmp_path / "elsewhere").mkdir()
    (root / "skillbank.toml").write_text('skill_roots = [".agents/skills"]\n')
    return root


def _names(bank) -> set[str]:
    return {s.name for s in bank.skills.list()}


def test_settings_resolve_a_relative_entry_against_the_root(tmp_path, monkeypatch):
    root = _root(tmp_path)
    monkeypatch.delenv("SKILLBANK_SKILL_ROOTS", raising=False)
    for folder in ("proj", "elsewhere"):
        monkeypatch.chdir(tmp_path / folder)
        assert load_settings(root).skill_roots == (root / ".agents" / "skills",)
        assert remember.recorded(root) == [str(root / ".agents" / "skills")]
    # given by the caller (an argument, the environment): the current folder's, as before
    monkeypatch.setenv("SKILLBANK_SKILL_ROOTS", "lib")
    assert load_settings(root).skill_roots == (Path("lib"),)


def test_a_relative_model_dir_in_the_settings_file_is_the_roots_too(tmp_path, monkeypatch):
    root = tmp_path / "root"
    root.mkdir()
    (root / "skillbank.toml").write_text('model_dir = "models/minilm"\n')
    monkeypatch.delenv("SKILLBANK_MODEL_DIR", raising=False)
    monkeypatch.chdir(tmp_path)
    assert load_settings(root).model_dir == root / "models" / "minilm"


def test_the_index_does_not_follow_the_current_folder(tmp_path, monkeypatch):
    from skillbank import Skillbank
    from skillbank.embeddings import HashEmbedding

    root = _root(tmp_path)
    for folder in ("proj", "elsewhere", "proj"):
        monkeypatch.chdir(tmp_path / folder)
        with Skillbank.open(root, embedding_function=HashEmbedding(),
                            include_bundled=False) as bank:
            assert _names(bank) == {"local-one"}


def test_through_a_client_of_an_owner(tmp_path, monkeypatch):
    """The owner runs in the root's parent folder (owner_client), the client elsewhere; the
    owner is given no folders, so it serves what the root's settings name."""
    import owner_client

    monkeypatch.setattr(owner_client, "OWNER", owner_client.OWNER.replace(
        "skill_roots=roots)", "skill_roots=roots or None)"))
    assert "roots or None" in owner_client.OWNER
    root = _root(tmp_path)
    monkeypatch.chdir(tmp_path / "proj")
    with owner_process(root), client_bank(root) as bank:
        assert _names(bank) == {"local-one"}


@pytest.fixture
def run(cli_root):
    from test_cli import Run

    return Run()


def test_a_relative_skills_dir_on_the_command_line_is_the_current_folders(
        run, cli_root, tmp_path, monkeypatch):
    project = tmp_path / "proj"
    write_skill(project / ".agents" / "skills", "project-skill", "Deploy this project's app")
    cli_root.mkdir()
    (cli_root / "skillbank.toml").write_text('skill_roots = ["team"]\n')
    write_skill(cli_root / "team", "team-skill", "Review a pull request the team's way")
    monkeypatch.chdir(project)
    synced = json.loads(run("--no-bundled", "--skills-dir", ".agents/skills", "--json",
                            "skills", "sync").stdout)
    assert sorted(synced["added"]) == ["project-skill", "team-skill"]
    # recorded as the folder the shell meant; the entry written by hand stays as written
    text = (cli_root / "skillbank.toml").read_text()
    assert f'"team", "{(project / ".agents" / "skills").resolve()}"' in text
    monkeypatch.chdir(tmp_path)
    assert json.loads(run("--no-bundled", "--json", "stats").stdout)["skills"] == 2
    run("--no-bundled", "config", "remove-skills-dir", project / ".agents" / "skills")
    assert 'skill_roots = ["team"]' in (cli_root / "skillbank.toml").read_text()
