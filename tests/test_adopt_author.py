"""A skill adopted from a draft names its author, as a saved one does (hunt-scope #3, session 28).

docs/scope.md: "a skill written through skillbank records `metadata: {skillbank-author:
<principal>}`". Adopt wrote the draft as drafted, with no author, so a contributor changing the
adopted skill was refused "(a skill written outside skillbank)". Now adopt records the adopter
(a revision keeps the author of the skill it revises, as `save` and `update` do), everything
else in the draft's frontmatter as drafted; in git mode the proposal commit holds it too. A
crash after the swap is still told from another skill of that name.

In process and through a client of an owner process; git mode with a real repository.
"""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from owner_client import bank_for
from skillbank.errors import PermissionDeniedError
from skillbank.memories.skills.authoring import author_of
from skillbank.memories.skills.skill_file import parse_skill_text
from skillbank.scope import Scope, local_principal
from test_skill_author_edits_kept import CSV, CSV_DESCRIPTION, OLD_BODY, fail_twice, revision
from test_skill_drafts_git import csv_runs, git_root, new_skill_draft
from test_skills_repo import git, remote  # noqa: F401 - a fixture: a bare skills repository

BOTH = pytest.mark.parametrize("remote_client", [False, True],
                               ids=["in-process", "client-of-owner"])
ALICE = Scope(principal="alice", namespace="alice", role="contributor", face="test")
ALICE_REVIEWER = Scope(principal="arev", namespace="alice", role="reviewer", face="test")


def as_adopted(drafted: str, by: str | None = None) -> str:
    """The SKILL.md text adopt serves for the draft text `drafted` (a draft written by
    skillbank, no metadata): the same, its frontmatter naming the adopter (`by`, else the local
    user) last."""
    head, closing, body = drafted[4:].partition("\n---\n")
    assert drafted.startswith("---\n") and closing and "metadata:" not in head
    return f"---\n{head}\nmetadata:\n  skillbank-author: {by or local_principal()}{closing}{body}"


def _frontmatter(text: str) -> dict:
    doc, _ = parse_skill_text(text)
    assert doc is not None
    return doc.frontmatter


@BOTH
def test_an_adopted_skill_names_its_adopter(tmp_path, remote_client):
    with bank_for(tmp_path, remote_client) as bank:
        alice = bank.scoped(ALICE)
        csv_runs(alice, "alice")
        [draft] = alice.skills.propose()
        drafted_text = Path(draft.path).read_text(encoding="utf-8")
        drafted = _frontmatter(drafted_text)
        skill = bank.scoped(ALICE_REVIEWER).skills.adopt(draft.name)
        written = Path(skill.path).read_text(encoding="utf-8")
        # Fails before: no metadata at all.
        assert _frontmatter(written) == {**drafted, "metadata": {"skillbank-author": "arev"}}
        assert written == as_adopted(drafted_text, "arev")  # all else as drafted
        with pytest.raises(PermissionDeniedError, match=r"\(arev's skill\)"):
            alice.skills.update(skill.name, body="# Steps\n\nmore\n")
        assert "more" in bank.scoped(ALICE_REVIEWER).skills.update(
            skill.name, body="# Steps\n\nmore\n").body


@BOTH
def test_a_draft_adopted_before_a_crash_is_taken_as_adopted(tmp_path, remote_client):
    """A crash after the swap, before the draft was closed: the draft is still pending, and the
    skill holds its text naming the adopter. It is taken as adopted, not listed again."""
    with bank_for(tmp_path, remote_client) as bank:
        alice = bank.scoped(ALICE)
        csv_runs(alice, "alice")
        [draft] = alice.skills.propose()
        folder = Path(draft.path).parent
        shutil.copytree(folder, tmp_path / "pending")
        skill = bank.scoped(ALICE_REVIEWER).skills.adopt(draft.name)
        assert author_of(skill.frontmatter) == "arev"
        shutil.copytree(tmp_path / "pending", folder)  # as the crash left it
        assert bank.scoped(ALICE_REVIEWER).skills.drafts() == []
        assert not folder.exists()  # closed as adopted


@BOTH
def test_an_adopted_revision_names_the_author_save_would(tmp_path, remote_client):
    """A revision keeps the author of the skill it revises; of a skill written by hand (no
    author), the adopter becomes its author, as the first `update` through skillbank does."""
    with bank_for(tmp_path, remote_client) as bank:
        alice = bank.scoped(ALICE)
        alice.skills.create(CSV, CSV_DESCRIPTION, OLD_BODY)
        by_hand = Path(bank.skills.load(CSV).path).parent.parent / "notes" / "SKILL.md"
        by_hand.parent.mkdir()
        by_hand.write_text("---\nname: notes\ndescription: Write release notes.\n---\n"
                           "# Steps\n\n1. List the merged changes.\n", encoding="utf-8")
        bank.skills.sync()
        fail_twice(alice)
        fail_twice(alice, "notes", "Link every change to its ticket")
        alice.skills.propose()
        reviewer = bank.scoped(ALICE_REVIEWER)
        skill = reviewer.skills.adopt(revision(alice).name)
        assert "Truncate the staging table" in skill.body
        assert author_of(skill.frontmatter) == "alice"  # hers still: she may change it
        alice.skills.update(CSV, description="Load CSV exports into a table.")
        notes = reviewer.skills.adopt(revision(alice, "notes").name)
        assert "Link every change to its ticket" in notes.body
        assert author_of(notes.frontmatter) == "arev"  # fails before: no author
        with pytest.raises(PermissionDeniedError, match=r"\(arev's skill\)"):
            alice.skills.update("notes", description="Write the release notes.")


@BOTH
def test_a_persons_edits_to_a_draft_are_adopted_as_written(tmp_path, remote_client):
    """Adopt rendered an edited draft again to add the author: comments and quoting went and
    `version: 1.10` was served as `1.1` (review of session 28). One line is added now."""
    with bank_for(tmp_path, remote_client) as bank:
        alice = bank.scoped(ALICE)
        csv_runs(alice, "alice")
        [draft] = alice.skills.propose()
        text = Path(draft.path).read_text(encoding="utf-8")
        head, closing, body = text[4:].partition("\n---\n")
        edited = (f"---\n{head}\n# reviewed by arev: keep the version as written\n"
                  "metadata:\n  owner-team: 'ops'   # the on-call team\n"
                  f"version: 1.10\n{closing}{body}")
        reviewer = bank.scoped(ALICE_REVIEWER)
        reviewer.skills.edit_draft(draft.name, edited)
        skill = reviewer.skills.adopt(draft.name)
        written = Path(skill.path).read_text(encoding="utf-8")
        assert written == edited.replace("metadata:\n", "metadata:\n  skillbank-author: arev\n")
        assert skill.frontmatter["version"] == 1.10 and "# the on-call team" in written


@BOTH
def test_a_revised_read_only_skill_takes_no_author_from_its_file(tmp_path, remote_client):
    """A third-party SKILL.md naming a contributor as its author made the bank's adopted copy
    hers to change (review of session 28): the adopter is the author of the copy."""
    third = tmp_path / "third-party"
    (third / "notes").mkdir(parents=True)
    (third / "notes" / "SKILL.md").write_text(
        "---\nname: notes\ndescription: Write release notes from merged changes.\n"
        "metadata:\n  skillbank-author: alice\n---\n# Steps\n\n1. List the merged changes.\n",
        encoding="utf-8")
    with bank_for(tmp_path, remote_client, skill_roots=(third,)) as bank:
        alice = bank.scoped(ALICE)
        fail_twice(alice, "notes", "Link every change to its ticket")
        alice.skills.propose()
        skill = bank.scoped(ALICE_REVIEWER).skills.adopt(revision(alice, "notes").name)
        assert skill.writable and author_of(skill.frontmatter) == "arev"
        with pytest.raises(PermissionDeniedError, match=r"\(arev's skill\)"):
            alice.skills.update("notes", description="Anything alice likes now.")


@BOTH
def test_a_proposal_commit_names_the_adopter(tmp_path, remote, remote_client):  # noqa: F811
    git_root(tmp_path, remote)
    with bank_for(tmp_path, remote_client) as bank:
        csv_runs(bank, "us")
        name = new_skill_draft(bank)
        proposal = bank.skills.adopt(name).proposal
        committed = git(remote, "show", f"{proposal.branch}:{name}/SKILL.md")
        assert _frontmatter(committed)["metadata"] == {"skillbank-author": local_principal()}
