"""Skills drafted from experience and adopted with skills in git (`skills_repo`), hunt-git s27.

In git mode adopting a draft makes a commit on the caller's proposal branch. The hunt found
it lost a read-only skill's scripts (#0), copied a revision over whatever the proposal was
built on — an edit pushed since, a fix-up on the branch, another root's adopted revision (#1)
— replaced a skill another root got merged (#2), drafted a duplicate `<name>-2` of a kind the
library serves (#3), locked a kind out for good once its proposal was deleted unmerged (#4),
and `skills history` / `versions` spoke as if there were no git (#5).

Real git throughout (a bare remote in a temporary folder, a reviewer's clone that merges), and
each memory operation both in process and through a client of another process owning the root.
"""

from __future__ import annotations

import json
import os
import shutil
import stat
from pathlib import Path

import pytest
from typer.testing import CliRunner

from owner_client import bank_for
from skillbank import Skillbank
from skillbank.embeddings import HashEmbedding
from skillbank.errors import AlreadyExistsError, InvalidInputError
from test_skills_repo import git, remote  # noqa: F401 - a fixture: a bare skills repository

pytestmark = pytest.mark.skipif(shutil.which("git") is None, reason="git is not installed")

WAYS = pytest.mark.parametrize("remote_client", [False, True],
                               ids=["in-process", "client-of-owner"])
LESSONS_A = ["Check the preferred language before the first message.",
             "Avoid jokes with customers who filed a complaint."]
LESSONS_B = ["Mention the support hours in the greeting email.",
             "Spell the company name exactly as registered."]


def git_root(tmp_path: Path, remote: Path, name: str = "root",  # noqa: F811
             skill_roots: tuple[Path, ...] = ()) -> Path:
    """A root whose skillbank.toml serves its skills from `remote` (following on demand)."""
    root = tmp_path / name
    root.mkdir(exist_ok=True)
    roots = ", ".join(json.dumps(str(p)) for p in skill_roots)
    (root / "skillbank.toml").write_text(f"skills_repo = {json.dumps(str(remote))}\n"
                                         f"skills_follow_seconds = 0\nskill_roots = [{roots}]\n")
    return root


def other_root(tmp_path: Path, remote: Path) -> Skillbank:  # noqa: F811
    """Another person's root on the same skills repository (as the same OS user: the same
    principal, so the same proposal branches)."""
    return Skillbank.open(git_root(tmp_path, remote, "other"), embedding_function=HashEmbedding(),
                          include_bundled=False)


def csv_runs(bank, who: str, tables=("orders", "users", "invoices")) -> None:
    for table in tables:
        bank.experiences.record(
            task=f"Import the {table} CSV file into a database table for {who}",
            outcome="success", when_to_use="Loading CSV exports into a database",
            steps=[{"action": "inspect the CSV header"}, {"action": "COPY the rows"}])


def failures(bank, skill: str, lessons: list[str], run: str = "") -> None:
    for i, lesson in enumerate(lessons):
        bank.experiences.record(task=f"Greet the new user {run}{i}", outcome="failure",
                                tags=[f"skill:{skill}"], lessons=[lesson])


def new_skill_draft(bank) -> str:
    drafted = [d.name for d in bank.skills.propose() if d.revises is None]
    assert len(drafted) == 1, drafted
    return drafted[0]


def push(tmp_path: Path, remote: Path, branch: str, edit, who: str) -> str:  # noqa: F811
    """A person's commit on `branch` of the remote (an edit of greet/SKILL.md); its id."""
    clone = tmp_path / f"clone-{who}"
    if not clone.exists():
        git(tmp_path, "clone", "--quiet", str(remote), str(clone))
    git(clone, "fetch", "--quiet", "origin")
    git(clone, "checkout", "--quiet", "-B", who, f"origin/{branch}")
    path = clone / "greet" / "SKILL.md"
    path.write_text(edit(path.read_text()))
    git(clone, "commit", "--quiet", "-am", f"{who}'s edit")
    git(clone, "push", "--quiet", "origin", f"HEAD:{branch}")
    return git(clone, "rev-parse", "HEAD")


def merge(tmp_path: Path, remote: Path, branch: str) -> None:  # noqa: F811
    """A reviewer merges a proposal branch into main."""
    clone = tmp_path / "reviewer"
    if not clone.exists():
        git(tmp_path, "clone", "--quiet", str(remote), str(clone))
    git(clone, "fetch", "--quiet", "origin")
    git(clone, "checkout", "--quiet", "-B", "main", "origin/main")
    git(clone, "merge", "--quiet", "--no-ff", "-m", f"merge {branch}", f"origin/{branch}")
    git(clone, "push", "--quiet", "origin", "HEAD:main")


def branches(remote: Path) -> list[str]:  # noqa: F811
    return git(remote, "for-each-ref", "--format=%(refname:short)", "refs/heads").split()


def ledger(root: Path) -> list[dict]:
    return [json.loads(line) for line in
            (root / "drafts" / ".ledger.jsonl").read_text().splitlines() if line.strip()]


# ------------------------------------------------------------------------- #0 the whole folder


@WAYS
def test_a_revision_of_a_read_only_skill_proposes_the_skills_whole_folder(
        tmp_path, remote, remote_client):  # noqa: F811
    ro = tmp_path / "ro" / "backup-db"
    (ro / "scripts").mkdir(parents=True)
    (ro / "references").mkdir()
    found = ("---\nname: backup-db\ndescription: Back up the database with the backup script."
             "\n---\n\n# Backup\n\n1. Run `scripts/backup.sh`.\n")
    (ro / "SKILL.md").write_text(found)
    (ro / "scripts" / "backup.sh").write_text("#!/bin/sh\npg_dump -Fc \"$1\"\n")
    os.chmod(ro / "scripts" / "backup.sh", 0o755)
    (ro / "references" / "restore.md").write_text("restore notes\n")
    git_root(tmp_path, remote, skill_roots=(ro.parent,))
    with bank_for(tmp_path, remote_client, skill_roots=(ro.parent,)) as bank:
        failures(bank, "backup-db", LESSONS_A)
        assert ("backup-db", "backup-db") in [(d.name, d.revises) for d in bank.skills.propose()]
        proposal = bank.skills.adopt("backup-db").proposal
    tree = git(remote, "ls-tree", "-r", proposal.branch, "--", "backup-db").splitlines()
    modes = {line.split("\t")[1]: line.split()[0] for line in tree}
    assert modes == {"backup-db/SKILL.md": "100644", "backup-db/scripts/backup.sh": "100755",
                     "backup-db/references/restore.md": "100644"}
    assert git(remote, "show", f"{proposal.branch}:backup-db/references/restore.md") == \
        "restore notes"
    # The skill as found is the first commit, so the proposal's own commit shows the revision.
    assert git(remote, "show", f"{proposal.branch}~1:backup-db/SKILL.md") == found.strip()
    revised = git(remote, "show", f"{proposal.branch}:backup-db/SKILL.md")
    assert LESSONS_A[0] in revised and "scripts/backup.sh" in revised
    assert git(remote, "diff", "--name-only", f"{proposal.branch}~1", proposal.branch) == \
        "backup-db/SKILL.md"
    assert stat.S_IMODE((ro / "scripts" / "backup.sh").stat().st_mode) == 0o755  # untouched


# --------------------------------------------------------------- #1 never over a newer text


@WAYS
def test_a_revision_is_not_adopted_over_an_edit_pushed_since_it_was_drawn(
        tmp_path, remote, remote_client):  # noqa: F811
    git_root(tmp_path, remote)
    with bank_for(tmp_path, remote_client) as bank:
        failures(bank, "greet", LESSONS_A)
        assert ("greet", "greet") in [(d.name, d.revises) for d in bank.skills.propose()]
        main = push(tmp_path, remote, "main",
                    lambda t: t + "\nCAROL: use the user's first name.\n", "carol")
        # This root's checkout has not followed main yet (on demand: it is a long-lived bank).
        assert not bank.skills.draft("greet").base_changed
        with pytest.raises(InvalidInputError, match="changed on main") as refused:
            bank.skills.adopt("greet")
        assert "skills follow" in str(refused.value) and main[:12] in str(refused.value)
        assert [d.name for d in bank.skills.drafts()] == ["greet"]
        assert branches(remote) == ["main"] and git(remote, "rev-parse", "main") == main
        bank.skills.follow()
        assert [d.name for d in bank.skills.propose()] == ["greet"]  # drawn again from carol's
        proposal = bank.skills.adopt("greet").proposal
    text = git(remote, "show", f"{proposal.branch}:greet/SKILL.md")
    assert "CAROL: use the user's first name." in text and LESSONS_A[0] in text


@WAYS
def test_a_fix_up_on_the_open_proposal_branch_is_never_replaced(tmp_path, remote, remote_client):  # noqa: F811
    git_root(tmp_path, remote)
    with bank_for(tmp_path, remote_client) as bank:
        failures(bank, "greet", LESSONS_A)
        bank.skills.propose()
        first = bank.skills.adopt("greet").proposal
        # More failures: the next revision (drawn from main, holding the first's lessons too)
        # continues the same open branch, as saving again does.
        failures(bank, "greet", LESSONS_B[:1], run="again ")
        bank.skills.propose()
        second = bank.skills.adopt("greet").proposal
        assert second.branch == first.branch
        git(remote, "merge-base", "--is-ancestor", first.commit, second.commit)
        text = git(remote, "show", f"{second.branch}:greet/SKILL.md")
        assert all(lesson in text for lesson in LESSONS_A + LESSONS_B[:1])
        # A reviewer rewords a pitfall on the branch; one more failure, one more revision.
        dave = push(tmp_path, remote, second.branch,
                    lambda t: t.replace(LESSONS_A[1], "DAVE: no jokes after a complaint."),
                    "dave")
        failures(bank, "greet", LESSONS_B[1:], run="third ")
        bank.skills.propose()
        with pytest.raises(InvalidInputError, match="open proposal branch") as refused:
            bank.skills.adopt("greet")
        assert second.branch in str(refused.value) and dave[:12] in str(refused.value)
        assert "greet" in [d.name for d in bank.skills.drafts()]
    assert git(remote, "rev-parse", second.branch) == dave


@WAYS
def test_another_roots_adopted_revision_on_the_shared_branch_is_never_replaced(
        tmp_path, remote, remote_client):  # noqa: F811
    with other_root(tmp_path, remote) as other:
        failures(other, "greet", LESSONS_A)
        other.skills.propose()
        first = other.skills.adopt("greet").proposal
    git_root(tmp_path, remote)
    with bank_for(tmp_path, remote_client) as bank:
        failures(bank, "greet", LESSONS_B)
        bank.skills.propose()
        with pytest.raises(InvalidInputError, match="open proposal branch"):
            bank.skills.adopt("greet")
        assert "greet" in [d.name for d in bank.skills.drafts()]
    assert git(remote, "rev-parse", first.branch) == first.commit
    assert LESSONS_A[0] in git(remote, "show", f"{first.branch}:greet/SKILL.md")


# ------------------------------------------------------------- #2 a taken name is refused


@WAYS
def test_a_new_skill_whose_name_another_root_got_merged_is_refused(
        tmp_path, remote, remote_client):  # noqa: F811
    git_root(tmp_path, remote)
    with bank_for(tmp_path, remote_client) as bank:
        csv_runs(bank, "us")
        name = new_skill_draft(bank)
        with other_root(tmp_path, remote) as other:
            csv_runs(other, "them")
            assert new_skill_draft(other) == name
            merge(tmp_path, remote, other.skills.adopt(name).proposal.branch)
        main = git(remote, "rev-parse", "main")
        # Not followed yet: main of the remote holds the skill.
        with pytest.raises(AlreadyExistsError, match="already exists on main"):
            bank.skills.adopt(name)
        bank.skills.follow()  # now served here: refused as in embedded mode
        with pytest.raises(AlreadyExistsError, match="discard the draft or rename"):
            bank.skills.adopt(name)
        assert name in [d.name for d in bank.skills.drafts()]
    assert git(remote, "rev-parse", "main") == main
    assert "for them" in git(remote, "show", f"main:{name}/SKILL.md")


# --------------------------------------------------------- #3 no duplicate of a served kind


@WAYS
def test_runs_of_a_kind_the_library_serves_draft_no_second_skill(tmp_path, remote, remote_client):  # noqa: F811
    with other_root(tmp_path, remote) as other:
        csv_runs(other, "them")
        name = new_skill_draft(other)
        merge(tmp_path, remote, other.skills.adopt(name).proposal.branch)
    git_root(tmp_path, remote)
    with bank_for(tmp_path, remote_client) as bank:  # clones main: serves the other's skill
        assert name in bank.skills.names()
        csv_runs(bank, "us")
        failures(bank, "greet", LESSONS_A + LESSONS_B[:1])  # three runs tagged skill:greet
        drafts = bank.skills.propose()
    assert [(d.name, d.revises) for d in drafts] == [("greet", "greet")]


# ------------------------------------------- #4 a proposal deleted unmerged is not "adopted"


@WAYS
def test_a_proposal_deleted_unmerged_lets_its_kind_be_drafted_again(
        tmp_path, remote, remote_client):  # noqa: F811
    root = git_root(tmp_path, remote)
    with bank_for(tmp_path, remote_client) as bank:
        csv_runs(bank, "us")
        name = new_skill_draft(bank)
        proposal = bank.skills.adopt(name).proposal
        csv_runs(bank, "us", ("payments",))
        assert bank.skills.propose() == []  # its proposal is open
        git(remote, "branch", "-D", proposal.branch)  # the reviewer says no
        csv_runs(bank, "us", ("refunds",))
        assert [(d.name, d.revises) for d in bank.skills.propose()] == [(name, None)]
    withdrawn = [e for e in ledger(root) if e["op"] == "withdrawn"]
    assert [(e["name"], e["proposal"]) for e in withdrawn] == [(name, proposal.branch)]


@WAYS
def test_a_merged_proposal_whose_branch_is_deleted_stays_adopted(tmp_path, remote, remote_client):  # noqa: F811
    root = git_root(tmp_path, remote)
    with bank_for(tmp_path, remote_client) as bank:
        csv_runs(bank, "us")
        name = new_skill_draft(bank)
        proposal = bank.skills.adopt(name).proposal
        merge(tmp_path, remote, proposal.branch)
        git(remote, "branch", "-D", proposal.branch)  # as a forge does after merging
        csv_runs(bank, "us", ("payments",))
        assert bank.skills.propose() == []  # not followed yet, but on main: still adopted
    assert not [e for e in ledger(root) if e["op"] == "withdrawn"]


# ---------------------------------------------------------------- #5 history is git's there


def run(*args: str) -> str:
    from skillbank.cli import app

    result = CliRunner().invoke(app, list(args))
    assert result.exit_code == 0, (result.stdout, result.stderr, result.exception)
    return " ".join(result.stdout.split())


def test_history_and_versions_point_at_git_in_git_mode(cli_root, remote, monkeypatch):  # noqa: F811
    plain = run("skills", "history", "greet")
    assert "no earlier versions" in plain  # embedded: no `greet` here, nothing kept
    monkeypatch.setenv("SKILLBANK_SKILLS_REPO", str(remote))
    monkeypatch.setenv("SKILLBANK_SKILLS_FOLLOW_SECONDS", "0")
    out = run("--root", str(cli_root.parent / "git-root"), "skills", "history", "greet")
    assert "no earlier versions" not in out, out
    assert "git log -p main -- greet/" in out and str(remote) in out, out
    out = run("--root", str(cli_root.parent / "git-root"), "skills", "versions", "greet")
    assert "skills restore greet@" not in out and "git log -p main -- greet/" in out, out
