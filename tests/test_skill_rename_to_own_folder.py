"""A skill whose `name:` differs from its folder is fixed by renaming it to its folder's name
(hunt session 20).

Users met `skills rename changelog changelog-writer` refused "skill 'changelog-writer' already
exists" (that folder was the skill itself), and `skills update changelog -d ...` refused "name
does not match its folder" without saying how to fix it. Now the rename rewrites `name:` in place
(atomic, the old file kept as a version, usage carried) and the refusal names the fix. In
process and through a client of another process owning the root.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from owner_client import bank_for
from skillbank.errors import InvalidInputError


def _check(bank) -> None:
    bank.skills.save("changelog-writer", "Write a changelog from merged PRs.", "# Steps\n")
    path = Path(bank.skills.load("changelog-writer").path)
    path.write_text(path.read_text().replace("name: changelog-writer", "name: changelog"))
    bank.skills.sync()
    assert "changelog" in bank.skills.names()
    bank.rate("skill:changelog", helpful=True)
    with pytest.raises(InvalidInputError,
                       match="skillbank skills rename changelog changelog-writer"):
        bank.skills.update("changelog", description="Write a changelog.")
    renamed = bank.skills.rename("changelog", "changelog-writer")
    assert renamed.name == "changelog-writer" and Path(renamed.path) == path
    assert "name: changelog-writer" in path.read_text()
    assert "changelog" not in bank.skills.names()
    assert renamed.usage.successes == 1  # its rating went with it
    assert (path.parent / ".versions").is_dir()  # the old file is kept, as for any edit
    bank.skills.update("changelog-writer", description="Write a changelog.")  # valid again


@pytest.mark.parametrize("remote", [False, True], ids=["in-process", "client-of-owner"])
def test_rename_to_its_own_folder(tmp_path, remote):
    with bank_for(tmp_path, remote) as bank:
        _check(bank)


def test_rename_in_place_never_shadows_another_skill_of_that_name(tmp_path):
    """Review of session 20: a writable folder `deploy/` holding `name: notes` (a hand edit),
    renamed to `deploy` in place, shadowed the read-only team skill `deploy` and replaced its
    usage counts. The rename is refused like any rename onto an existing name."""
    from skillbank import Skillbank
    from skillbank.embeddings import HashEmbedding
    from skillbank.errors import AlreadyExistsError

    team = tmp_path / "team-skills" / "deploy"
    team.mkdir(parents=True)
    (team / "SKILL.md").write_text("---\nname: deploy\ndescription: Team skill for deploying "
                                   "services.\n---\n# Steps\n1. Deploy.\n")
    with Skillbank.open(tmp_path / "root", embedding_function=HashEmbedding(),
                        include_bundled=False, skill_roots=[tmp_path / "team-skills"]) as bank:
        bank.skills.sync()
        for _ in range(3):
            bank.rate("skill:deploy", helpful=True)
        bank.skills.save("notes", "Write release notes.", "# Steps\n")
        folder = Path(bank.skills.load("notes").path).parent
        folder.rename(folder.parent / "deploy")
        bank.skills.sync()
        bank.rate("skill:notes", helpful=False)
        with pytest.raises(AlreadyExistsError):
            bank.skills.rename("notes", "deploy")
        deploy = bank.skills.load("deploy")
        assert Path(deploy.path) == team / "SKILL.md"
        assert (deploy.usage.successes, deploy.usage.failures) == (3, 0)
