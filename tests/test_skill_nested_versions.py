"""A skill nested in a collection keeps its undo: history, restore, rename and adopt work on the
folder it lives in (hunt-corpus #1 and #2, session 30).

The bank's library may hold collections (`skills/<collection>/plugins/x/skills/<name>/`, as the
curated corpus is laid out). `update` wrote such a skill where it lives and kept the replaced
SKILL.md beside it, but `history`, `versions` and `restore` looked in `skills/<name>/` alone: the
version was never listed nor restorable, and a folder of that name holding another skill had
*its* versions listed and its SKILL.md restored over as this skill's. Renaming a nested skill to
its folder's name (the fix `update` suggests for a name-mismatch) moved it out of its collection
to `skills/<name>/` with no version kept; an adopted revision of one became a second copy there.
In process and through a client of another process owning the root; the CLI too.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from owner_client import bank_for
from skillbank.errors import InvalidInputError, NotFoundError
from test_skill_drafts import DEPLOY_BODY, fail_with

#: Where the curated corpus keeps a plugin's skills, two collections deep.
NESTED = Path("collection-a") / "plugins" / "x" / "skills"
FUZZ = "Notes on fuzzing obstacles and how to get a fuzzer past them."


def nested_skill(root: Path, folder: str, name: str, description: str,
                 body: str = "# Steps\n1. Go.\n") -> Path:
    """A hand-written SKILL.md at `skills/collection-a/plugins/x/skills/<folder>/`."""
    path = root / "skills" / NESTED / folder / "SKILL.md"
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(f"---\nname: {name}\ndescription: {description}\n---\n{body}")
    return path


@pytest.mark.parametrize("remote", [False, True], ids=["in-process", "client-of-owner"])
def test_history_and_restore_follow_a_nested_skill(tmp_path, remote):
    """hunt-corpus #1, session 30: `history` of a nested skill was [] right after `update` kept
    a version beside it, and `restore` of that version raised NotFoundError ("has no version")."""
    root = tmp_path / "root"
    path = nested_skill(root, "fuzz-notes", "fuzz-notes", FUZZ)
    with bank_for(tmp_path, remote) as bank:
        bank.skills.sync()
        bank.skills.update("fuzz-notes", description="Curated notes on fuzzing obstacles.")
        versions = bank.skills.history("fuzz-notes")
        assert [Path(v.path).parent for v in versions] == [path.parent / ".versions"]
        assert versions[0].description == FUZZ and "before update" in versions[0].reason
        listed = bank.skills.skill_versions("fuzz-notes")  # `skills versions`: current, then kept
        assert [v.version for v in listed[1:]] == [versions[0].version]
        restored = bank.skills.restore("fuzz-notes", versions[0].version)
        assert Path(restored.path) == path and restored.description == FUZZ
        assert f"description: {FUZZ}" in path.read_text()
        assert len(bank.skills.history("fuzz-notes")) == 2  # "before restoring" kept too
        assert not (root / "skills" / "fuzz-notes").exists()  # nothing made at the top


@pytest.mark.parametrize("remote", [False, True], ids=["in-process", "client-of-owner"])
def test_a_folder_named_like_a_skill_holding_another_is_not_its_history(tmp_path, remote):
    """hunt-corpus #1, session 30 (t24): with `ledger-notes` filed by hand in `skills/fuzz-notes/`,
    `history('fuzz-notes')` listed ledger-notes' version, and restoring it rewrote ledger-notes'
    file as `name: fuzz-notes` (reported as success): ledger-notes left the index and the nested
    fuzz-notes was shadowed. Now only the nested skill's own versions are fuzz-notes', and
    ledger-notes' history is found where it lives. `update`'s hint no longer suggests renaming
    it to `fuzz-notes`, which is refused (another skill's name; hunt-corpus #2)."""
    root = tmp_path / "root"
    nested = nested_skill(root, "fuzz-notes", "fuzz-notes", FUZZ)
    with bank_for(tmp_path, remote) as bank:
        bank.skills.save("ledger-notes", "Ledger notes about reconciling accounts.", "# Ledger\n")
        bank.skills.update("ledger-notes", description="Ledger notes v2 about reconciling accounts.")
        folder = Path(bank.skills.load("ledger-notes").path).parent
        folder.rename(folder.parent / "fuzz-notes")  # filed under the nested skill's name
        bank.skills.sync()
        moved = root / "skills" / "fuzz-notes" / "SKILL.md"
        before = moved.read_text()
        assert bank.skills.history("fuzz-notes") == []
        [kept] = bank.skills.history("ledger-notes")
        assert Path(kept.path).parent.parent == moved.parent
        with pytest.raises(NotFoundError):
            bank.skills.restore("fuzz-notes", kept.version)
        assert moved.read_text() == before
        assert Path(bank.skills.load("fuzz-notes").path) == nested
        assert bank.skills.load("ledger-notes").description.startswith("Ledger notes v2")
        with pytest.raises(InvalidInputError, match="is another skill's name") as refused:
            bank.skills.update("ledger-notes", description="Ledger notes v3.")
        assert "skills rename ledger-notes fuzz-notes" not in str(refused.value)


@pytest.mark.parametrize("remote", [False, True], ids=["in-process", "client-of-owner"])
def test_a_nested_skill_renamed_to_its_folders_name_is_rewritten_in_place(tmp_path, remote):
    """hunt-corpus #2, session 30: `rename('Tidy Notes', 'tidy-notes')` of a skill in
    `.../skills/tidy-notes/` (the fix `update` names) deleted that folder and made
    `skills/tidy-notes/` with no `.versions/`; renamed to another name it left its collection
    too. Now `name:` is rewritten in place with the old file kept, and a rename to another name
    stays beside it, versions and all."""
    root = tmp_path / "root"
    path = nested_skill(root, "tidy-notes", "Tidy Notes", "Keep meeting notes tidy and short.")
    with bank_for(tmp_path, remote) as bank:
        bank.skills.sync()
        with pytest.raises(InvalidInputError,
                           match="skillbank skills rename 'Tidy Notes' tidy-notes"):
            bank.skills.update("Tidy Notes", description="Keep notes tidy.")
        renamed = bank.skills.rename("Tidy Notes", "tidy-notes")
        assert Path(renamed.path) == path and "name: tidy-notes" in path.read_text()
        assert not (root / "skills" / "tidy-notes").exists()
        [kept] = bank.skills.history("tidy-notes")
        assert "before rename" in kept.reason and "name: Tidy Notes" in Path(kept.path).read_text()
        restored = bank.skills.restore("tidy-notes", kept.version)  # under its current name
        assert Path(restored.path) == path and restored.name == "tidy-notes"
        moved = bank.skills.rename("tidy-notes", "neat-notes")
        assert Path(moved.path) == path.parent.parent / "neat-notes" / "SKILL.md"
        assert not path.parent.exists() and not (root / "skills" / "neat-notes").exists()
        assert len(bank.skills.history("neat-notes")) == 2  # its .versions/ went with it


@pytest.mark.parametrize("remote", [False, True], ids=["in-process", "client-of-owner"])
def test_a_revision_of_a_nested_skill_is_adopted_where_it_lives(tmp_path, remote):
    """hunt-corpus #1's kin, session 30: adopting a revision of a nested skill wrote a second
    copy at `skills/deploy-service/` (which then served the name) and kept its version there,
    leaving the nested skill as it was. Now the nested SKILL.md is the one revised, its old
    text kept beside it."""
    root = tmp_path / "root"
    path = nested_skill(root, "deploy-service", "deploy-service",
                        "Deploy a service with kubectl. Use for rollouts.", DEPLOY_BODY)
    with bank_for(tmp_path, remote) as bank:
        bank.skills.sync()
        fail_with(bank, "Run database migrations before switching traffic.", 2)
        [draft] = [d for d in bank.skills.propose() if d.revises]
        adopted = bank.skills.adopt(draft.name)
        assert Path(adopted.path) == path and "Run database migrations" in path.read_text()
        assert not (root / "skills" / "deploy-service").exists()
        [kept] = bank.skills.history("deploy-service")
        assert "revision" in kept.reason and Path(kept.path).read_text().endswith(DEPLOY_BODY)


def test_cli_history_versions_and_restore_of_a_nested_skill(cli_root):
    """hunt-corpus #1, session 30 (t5, t6): `skills history` said "no earlier versions",
    `skills versions` listed only the current one, and `skills restore NAME@V` and
    `skills history NAME --restore V` exited 3, for a version `skills update` had just kept."""
    from typer.testing import CliRunner

    from skillbank.cli import app

    path = nested_skill(cli_root, "fuzz-notes", "fuzz-notes", FUZZ)
    runner = CliRunner()

    def run(*args: str) -> str:
        result = runner.invoke(app, list(args))
        assert result.exit_code == 0, (args, result.stdout, result.stderr, result.exception)
        return result.stdout

    run("skills", "update", "fuzz-notes", "-d", "Curated notes on fuzzing obstacles.")
    [kept] = json.loads(run("--json", "skills", "history", "fuzz-notes"))
    assert Path(kept["path"]).parent == path.parent / ".versions"
    assert kept["version"] in run("skills", "versions", "fuzz-notes")
    assert "restored fuzz-notes" in run("skills", "restore", f"fuzz-notes@{kept['version']}")
    assert f"description: {FUZZ}" in path.read_text()
    newest = json.loads(run("--json", "skills", "history", "fuzz-notes"))[0]["version"]
    assert "restored fuzz-notes" in run("skills", "history", "fuzz-notes", "--restore", newest)
    assert "Curated notes" in path.read_text()
    assert not (cli_root / "skills" / "fuzz-notes").exists()


def test_a_stale_index_never_sends_history_or_restore_into_another_skills_folder(tmp_path):
    """Review (session 30): the index found a nested skill's folder by its indexed path
    without looking at what is there now. With folders moved by hand and no re-check yet (a
    server without --watch never re-checks), `history('alpha-notes')` listed the versions of
    the skill now filed in alpha's old folder, and restoring one rewrote that skill's SKILL.md
    as alpha. Fails before: beta's version listed as alpha's, and beta overwritten."""
    from skillbank import Skillbank
    from skillbank.embeddings import HashEmbedding
    from skillbank.memories.skills.versions import keep_version

    root = tmp_path / "root"
    alpha = nested_skill(root, "fa", "alpha-notes", "Alpha notes about alpha things.")
    beta = nested_skill(root, "fb", "beta-notes", "Beta notes about beta things.")
    with Skillbank.open(root, embedding_function=HashEmbedding(), include_bundled=False,
                        skills_recheck_seconds=0) as bank:
        keep_version(beta.parent, beta.read_text().replace("Beta notes", "Old beta notes"),
                     "by hand")
        alpha.parent.rename(alpha.parent.with_name("fa-moved"))
        beta.parent.rename(alpha.parent)  # beta now lives where the index has alpha
        before = alpha.read_text()
        assert bank.skills.history("alpha-notes") == []
        with pytest.raises(NotFoundError):
            bank.skills.restore("alpha-notes", "20260101T000000000000Z")
        assert alpha.read_text() == before  # beta, untouched
        bank.skills.sync()
        assert [v.description for v in bank.skills.history("beta-notes")] == \
            ["Old beta notes about beta things."]


def test_a_skill_whose_yaml_name_is_a_number_keeps_its_history(tmp_path):
    """Review (session 30): `name: 2048` is the skill "2048", but the check for a folder that
    holds another skill compared the YAML integer with the name and found "another skill":
    history was [] and restore refused. Fails before the fix of that check."""
    from skillbank import Skillbank
    from skillbank.embeddings import HashEmbedding
    from skillbank.memories.skills.versions import keep_version

    root = tmp_path / "root"
    path = root / "skills" / "2048" / "SKILL.md"
    path.parent.mkdir(parents=True)
    path.write_text("---\nname: 2048\ndescription: Play the 2048 puzzle well.\n---\n# Steps\n")
    with Skillbank.open(root, embedding_function=HashEmbedding(), include_bundled=False) as bank:
        kept = keep_version(path.parent, path.read_text().replace("well", "badly"), "by hand")
        assert [v.version for v in bank.skills.history("2048")] == [kept.stem]
