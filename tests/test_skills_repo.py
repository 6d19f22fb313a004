"""Skills in git (issue 24 item 4): served checkouts that follow a branch, writes as proposals.

Real git throughout: one bare "remote" repository in a temporary folder, two banks with
separate roots (two workers) each serving their own checkout of its `main`, and a reviewer's
clone that merges proposal branches the way a person would. No mock of git.
"""

from __future__ import annotations

import shutil
import subprocess
import time
from pathlib import Path
from typing import Any

import pytest

from skillbank import Skillbank
from skillbank import scope as scopes
from skillbank.embeddings import HashEmbedding
from skillbank.errors import NotFoundError, PermissionDeniedError, ReadOnlyError
from skillbank.team.skills_repo import SkillsRepoError, identity, principal_slug

pytestmark = pytest.mark.skipif(shutil.which("git") is None, reason="git is not installed")

ADA = scopes.Scope(principal="Ada <ada@example.org>", namespace="ada", role="contributor")
BOT = scopes.Scope(principal="agent-7", namespace="agents", role="contributor", trusted=False)
REVIEWER = scopes.Scope(principal="rita@example.org", namespace="team", role="reviewer",
                        reads=("*",))
FOLLOW = 0.3
DEADLINE = 60.0  # generous: tests run on a loaded machine; the follow interval is FOLLOW
GREET = "---\nname: greet\ndescription: Say hello to a new user politely.\n---\n\n# Greet\n\nSay hello.\n"


def git(cwd: Path, *args: str) -> str:
    env = {"GIT_AUTHOR_NAME": "Rev", "GIT_AUTHOR_EMAIL": "rev@example.org",
           "GIT_COMMITTER_NAME": "Rev", "GIT_COMMITTER_EMAIL": "rev@example.org",
           "PATH": "/usr/bin:/bin:/usr/local/bin", "HOME": str(cwd), "LC_ALL": "C"}
    done = subprocess.run(["git", *args], cwd=cwd, env=env, capture_output=True, text=True)
    assert done.returncode == 0, (args, done.stderr)
    return done.stdout.strip()


@pytest.fixture
def remote(tmp_path) -> Path:
    """A bare repository whose `main` holds one skill, as a team's skills repository would."""
    bare = tmp_path / "skills.git"
    git(tmp_path, "init", "--quiet", "--bare", "--initial-branch=main", str(bare))
    seed = tmp_path / "seed"
    git(tmp_path, "clone", "--quiet", str(bare), str(seed))
    (seed / "greet").mkdir()
    (seed / "greet" / "SKILL.md").write_text(GREET)
    git(seed, "add", ".")
    git(seed, "commit", "--quiet", "-m", "greet")
    git(seed, "push", "--quiet", "origin", "HEAD:main")
    return bare


@pytest.fixture
def reviewer(tmp_path, remote) -> Path:
    """A reviewer's own clone (merges proposal branches and pushes main)."""
    clone = tmp_path / "reviewer"
    git(tmp_path, "clone", "--quiet", str(remote), str(clone))
    return clone


def open_bank(root: Path, remote: Path, **kw: Any) -> Skillbank:
    kw.setdefault("skills_follow_seconds", FOLLOW)
    return Skillbank.open(root, skill_roots=[], embedding_function=HashEmbedding(),
                          include_bundled=False, share=False, skills_repo=str(remote), **kw)


@pytest.fixture
def workers(tmp_path, remote):
    banks = [open_bank(tmp_path / "worker-a", remote), open_bank(tmp_path / "worker-b", remote)]
    yield banks
    for bank in banks:
        bank.close()


def served_state(bank: Skillbank) -> tuple[str, str, list[str], dict[str, str]]:
    """What a worker serves: HEAD, `git status`, worktrees, and every file's bytes."""
    checkout = bank.root / "skills"
    files = {p.relative_to(checkout).as_posix(): p.read_text()
             for p in sorted(checkout.rglob("*")) if p.is_file() and ".git" not in p.parts}
    return (git(checkout, "rev-parse", "HEAD"), git(checkout, "status", "--porcelain"),
            git(checkout, "worktree", "list").splitlines(), files)


def save(bank: Skillbank, who: scopes.Scope, name: str = "deploy-app", body: str = "Steps.\n"):
    with scopes.using(who):
        return bank.skills.save(name, "Deploy the app to production with its checks.", body)


def wait_for(check, what: str) -> float:
    started = time.monotonic()
    while not check():
        assert time.monotonic() - started < DEADLINE, f"not within {DEADLINE} s: {what}"
        time.sleep(0.05)
    return time.monotonic() - started


# ----------------------------------------------------------------------------- proposals


def test_a_saved_skill_is_a_branch_authored_by_the_principal_and_not_served(workers, remote):
    a, b = workers
    main_before = git(remote, "rev-parse", "main")
    served_before = served_state(a)
    skill = save(a, ADA)
    proposal = skill.proposal
    assert proposal is not None and not proposal.published
    assert proposal.branch == f"skillbank/proposals/{principal_slug(ADA.principal)}/deploy-app"
    assert proposal.branch in skill.notes[0] and proposal.commit[:12] in skill.notes[0]
    # The branch is in the remote, authored by Ada, and holds the skill with her as its author.
    assert git(remote, "rev-parse", proposal.branch) == proposal.commit
    assert git(remote, "log", "-1", "--format=%an <%ae>", proposal.branch) == \
        "Ada <ada@example.org>"
    text = git(remote, "show", f"{proposal.branch}:deploy-app/SKILL.md")
    assert "skillbank-author: Ada <ada@example.org>" in text and "Steps." in text
    assert git(remote, "rev-parse", f"{proposal.branch}~1") == main_before  # from main's tip
    # Nothing is served until merged: not on main, not in either worker, not after following.
    assert git(remote, "rev-parse", "main") == main_before
    for bank in (a, b):
        bank.skills.follow()
        assert bank.skills.names() == ["greet"]
        with pytest.raises(NotFoundError):
            bank.skills.load("deploy-app")
    assert served_state(a) == served_before  # the served checkout never moved
    # Saving again continues the same proposal branch; the same text is no new commit.
    again = save(a, ADA, body="Steps, with a rollback.\n")
    assert git(remote, "rev-parse", f"{again.proposal.branch}~1") == proposal.commit
    same = save(a, ADA, body="Steps, with a rollback.\n")
    assert same.proposal.commit == again.proposal.commit and not same.proposal.changed


def test_after_a_merge_both_workers_serve_it_within_their_follow_interval(workers, remote,
                                                                          reviewer):
    a, b = workers
    proposal = save(a, BOT).proposal  # an untrusted contributor may propose
    assert git(remote, "log", "-1", "--format=%an", proposal.branch) == "agent-7"
    git(reviewer, "fetch", "--quiet", "origin")
    git(reviewer, "merge", "--quiet", "--no-ff", "-m", "merge", f"origin/{proposal.branch}")
    git(reviewer, "push", "--quiet", "origin", "HEAD:main")
    merged = git(reviewer, "rev-parse", "HEAD")
    for bank in (a, b):  # no call to follow: each worker's own interval picks it up
        wait_for(lambda: "deploy-app" in bank.skills.names(), "the merged skill served")
        assert bank.skills.load("deploy-app").body == "Steps.\n"
        assert bank.skills.search("deploy the app to production")[0].name == "deploy-app"
        status = bank.stats()["skills_repo"]
        assert status["branch"] == "main" and status["commit"] == merged
        assert status["error"] is None
    assert git(a.root / "skills", "status", "--porcelain") == ""
    # Once merged, saving what is served proposes nothing, and says so.
    again = save(a, BOT).proposal
    assert not again.changed and "nothing was proposed" in again.note
    assert git(remote, "rev-parse", proposal.branch) == proposal.commit


def test_an_adopted_draft_is_a_proposal_too(tmp_path, remote):
    bank = open_bank(tmp_path / "root", remote)
    try:
        for task in ("Deploy the billing service to the staging cluster with kubectl",
                     "Deploy the search service to the production cluster with kubectl",
                     "Deploy the auth service to the staging cluster with kubectl"):
            bank.experiences.record(task=task, outcome="success",
                                    when_to_use="When rolling out a service with kubectl",
                                    steps=[{"action": "kubectl apply"}],
                                    lessons=[{"kind": "success_pattern",
                                              "text": "Wait for rollout status first."}])
        draft = bank.skills.propose(min_support=3)[0]
        secret = tmp_path / "secret.txt"
        secret.write_text("not for the repository\n")
        (Path(draft.path).parent / "notes.md").symlink_to(secret)  # planted in the draft
        with scopes.using(REVIEWER):
            adopted = bank.skills.adopt(draft.name)
        assert adopted.proposal is not None and draft.name in adopted.proposal.branch
        assert git(remote, "log", "-1", "--format=%an", adopted.proposal.branch) == \
            "rita@example.org"
        assert "Wait for rollout status" in git(
            remote, "show", f"{adopted.proposal.branch}:{draft.name}/SKILL.md")
        assert draft.name not in bank.skills.names() and bank.skills.drafts() == []
        files = git(remote, "ls-tree", "-r", "--name-only", adopted.proposal.branch)
        assert f"{draft.name}/SKILL.md" in files.splitlines()
        assert "notes.md" not in files and ".draft.json" not in files
        assert not (bank.root / "skills" / draft.name).exists()
    finally:
        bank.close()


# ------------------------------------------------------------------------------- publishing


def test_untrusted_never_publishes_and_reviewers_only_where_allowed(tmp_path, remote):
    bank = open_bank(tmp_path / "root", remote, skills_direct_publish=True)
    closed = open_bank(tmp_path / "other", remote)  # the default: publishing off
    try:
        main = git(remote, "rev-parse", "main")
        save(bank, BOT)
        with scopes.using(BOT), pytest.raises(PermissionDeniedError, match="never publish"):
            bank.skills.publish("deploy-app")
        contributor = scopes.Scope(principal="agent-7", namespace="agents", role="contributor")
        with scopes.using(contributor), pytest.raises(PermissionDeniedError, match="reviewer"):
            bank.skills.publish("deploy-app")
        save(closed, REVIEWER, name="rotate-keys")
        with scopes.using(REVIEWER), pytest.raises(PermissionDeniedError,
                                                   match="skills_direct_publish"):
            closed.skills.publish("rotate-keys")
        assert git(remote, "rev-parse", "main") == main and bank.skills.names() == ["greet"]
        # A trusted reviewer, where the deployment allows it: merged, pushed and served here.
        with scopes.using(REVIEWER):
            published = bank.skills.publish("deploy-app", principal="agent-7")
        assert published.proposal.published and published.name == "deploy-app"
        assert git(remote, "rev-parse", "main") == published.proposal.commit
        assert git(remote, "log", "-1", "--format=%an", "main") == "rita@example.org"
        assert "deploy-app" in bank.skills.names()
        wait_for(lambda: "deploy-app" in closed.skills.names(), "the other worker follows")
    finally:
        bank.close()
        closed.close()


# ------------------------------------------------------------------------------ bad input


def test_a_proposal_branch_that_no_longer_applies_is_refused_and_nothing_changes(
        tmp_path, remote, reviewer):
    bank = open_bank(tmp_path / "root", remote, skills_follow_seconds=0)  # follows on demand
    try:
        branch = save(bank, ADA).proposal.branch
        tip = git(remote, "rev-parse", branch)
        # main gets another deploy-app meanwhile: Ada's branch no longer merges into it.
        (reviewer / "deploy-app").mkdir()
        (reviewer / "deploy-app" / "SKILL.md").write_text(
            "---\nname: deploy-app\ndescription: Deploy differently.\n---\n\nOther steps.\n")
        git(reviewer, "add", ".")
        git(reviewer, "commit", "--quiet", "-m", "other deploy-app")
        git(reviewer, "push", "--quiet", "origin", "HEAD:main")
        before = served_state(bank)
        with pytest.raises(SkillsRepoError, match="no longer applies") as caught:
            save(bank, ADA, body="Steps, revised.\n")
        assert branch in str(caught.value) and "deploy-app/SKILL.md" in str(caught.value)
        assert "nothing was written" in str(caught.value)
        assert git(remote, "rev-parse", branch) == tip
        assert served_state(bank) == before
        assert not any((bank.root / ".skills-work").iterdir())
    finally:
        bank.close()


def test_a_dirty_or_conflicted_checkout_is_not_moved_and_is_refused_at_open(
        tmp_path, remote, reviewer):
    bank = open_bank(tmp_path / "root", remote, skills_follow_seconds=0)
    checkout = bank.root / "skills"
    try:
        (checkout / "greet" / "SKILL.md").write_text(GREET.replace("Say hello.", "Wave."))
        (reviewer / "greet" / "SKILL.md").write_text(GREET.replace("Say hello.", "Hello!"))
        git(reviewer, "commit", "--quiet", "-am", "greet: shorter")
        git(reviewer, "push", "--quiet", "origin", "HEAD:main")
        head = git(checkout, "rev-parse", "HEAD")
        with pytest.raises(SkillsRepoError, match="local changes") as caught:
            bank.skills.follow()
        assert "greet/SKILL.md" in str(caught.value) and f"git -C {checkout}" in str(caught.value)
        assert git(checkout, "rev-parse", "HEAD") == head
        assert "Wave." in (checkout / "greet" / "SKILL.md").read_text()
        assert "local changes" in bank.stats()["skills_repo"]["error"]
    finally:
        bank.close()
    with pytest.raises(SkillsRepoError, match="local changes"):
        open_bank(tmp_path / "root", remote)
    # An unmerged index (a merge by hand that stopped on a conflict) is named at open.
    git(checkout, "commit", "--quiet", "-am", "local wave")
    subprocess.run(["git", "-c", "user.name=x", "-c", "user.email=x@x", "merge", "origin/main"],
                   cwd=checkout, capture_output=True)
    assert git(checkout, "diff", "--name-only", "--diff-filter=U") == "greet/SKILL.md"
    with pytest.raises(SkillsRepoError, match="unmerged files") as caught:
        open_bank(tmp_path / "root", remote)
    assert "merge --abort" in str(caught.value)


def test_a_missing_remote_is_named_and_nothing_is_written(tmp_path, remote):
    with pytest.raises(SkillsRepoError, match="cannot clone") as caught:
        open_bank(tmp_path / "fresh", tmp_path / "no-such.git")
    assert "skills_repo" in str(caught.value)
    assert not any((tmp_path / "fresh" / "skills").glob("*"))  # no half clone
    bank = open_bank(tmp_path / "root", remote, skills_follow_seconds=0)
    try:
        before = served_state(bank)
        moved = remote.rename(tmp_path / "moved.git")
        with pytest.raises(SkillsRepoError, match="cannot reach") as caught:
            save(bank, ADA)
        assert str(remote) in str(caught.value) and "nothing was written" in str(caught.value)
        with pytest.raises(SkillsRepoError, match="cannot reach"):
            bank.skills.follow()
        assert served_state(bank) == before and bank.skills.names() == ["greet"]
        moved.rename(remote)
    finally:
        bank.close()
    git(bank.root / "skills", "remote", "remove", "origin")
    with pytest.raises(SkillsRepoError, match="no remote 'origin'") as caught:
        open_bank(tmp_path / "root", remote)
    assert f"remote add origin {remote}" in str(caught.value)


def test_a_non_git_folder_or_a_missing_branch_is_refused(tmp_path, remote):
    skills = tmp_path / "plain" / "skills" / "greet"
    skills.mkdir(parents=True)
    (skills / "SKILL.md").write_text(GREET)
    with pytest.raises(SkillsRepoError, match="is not a git checkout"):
        open_bank(tmp_path / "plain", remote)
    assert (skills / "SKILL.md").read_text() == GREET
    with pytest.raises(SkillsRepoError, match="no branch 'release'") as caught:
        open_bank(tmp_path / "other", remote, skills_branch="release")
    assert "skills_branch" in str(caught.value)


def test_git_mode_refuses_writes_that_would_bypass_review(tmp_path, remote):
    bank = open_bank(tmp_path / "root", remote, skills_follow_seconds=0)
    try:
        with pytest.raises(ReadOnlyError, match="reviewer merge"):
            bank.skills.delete("greet")
        with pytest.raises(ReadOnlyError, match="git mode"):
            bank.skills.rename("greet", "hello")
        assert bank.skills.names() == ["greet"] and git(bank.root / "skills",
                                                        "status", "--porcelain") == ""
    finally:
        bank.close()


def test_the_embedded_default_needs_no_git(tmp_path):
    bank = Skillbank.open(tmp_path / "root", embedding_function=HashEmbedding(), share=False)
    try:
        skill = bank.skills.save("deploy-app", "Deploy the app to production.", "Steps.\n")
        assert skill.proposal is None and Path(skill.path).is_file()
        assert bank.stats()["skills_repo"] is None
        assert not (bank.root / "skills" / ".git").exists()
        with pytest.raises(Exception, match="skills_repo"):
            bank.skills.follow()
    finally:
        bank.close()


def test_commit_identities_and_branch_names():
    assert identity("Ada <ada@example.org>") == ("Ada", "ada@example.org")
    assert identity("ada@example.org") == ("ada@example.org", "ada@example.org")
    name, email = identity("agent 7")
    assert name == "agent 7" and email.endswith("@skillbank.invalid")
    assert principal_slug("alice") == "alice"
    assert principal_slug("a b") != principal_slug("a-b")  # never one branch for two people
    assert principal_slug("../../x") .startswith("x-")


async def test_an_untrusted_mcp_client_proposes_through_save_skill(tmp_path, remote):
    """Untrusted MCP clients could not save skills at all; with skills in git their skill is a
    proposal (action "proposed", the branch in the note), and the embedded default still
    refuses them."""
    from mcp import Client

    from skillbank.mcp_server import build_server

    args = {"name": "release-notes", "description": "Write release notes for a version.",
            "body": "# Steps\n\nList the changes.\n"}
    bank = open_bank(tmp_path / "root", remote, skills_follow_seconds=0)
    plain = Skillbank.open(tmp_path / "plain", embedding_function=HashEmbedding(), share=False)
    try:
        async with Client(build_server(bank, trusted=False)) as client:
            result = await client.call_tool("save_skill", args)
            assert not result.is_error, result.content[0].text
            saved = result.structured_content
        assert saved["action"] == "proposed" and "skillbank/proposals/" in saved["note"]
        branch = saved["note"].split("branch ", 1)[1].split(" ", 1)[0]
        assert "Proposed through skillbank" in git(remote, "log", "-1", "--format=%B", branch)
        assert "untrusted" in git(remote, "log", "-1", "--format=%B", branch)
        assert "release-notes" not in bank.skills.names()
        async with Client(build_server(plain, trusted=False)) as client:
            result = await client.call_tool("save_skill", args)
            assert result.is_error and "--trust" in result.content[0].text
    finally:
        bank.close()
        plain.close()


async def test_readyz_names_the_branch_and_commit_a_worker_serves(tmp_path, remote):
    import httpx

    from skillbank.team.server import HealthRoutes

    bank = open_bank(tmp_path / "root", remote, skills_follow_seconds=0)
    try:
        routes = HealthRoutes(None, bank)
        async with httpx.AsyncClient(transport=httpx.ASGITransport(app=routes),
                                     base_url="http://worker") as client:
            body = (await client.get("/readyz")).json()
        assert body["skills"]["branch"] == "main"
        assert body["skills"]["commit"] == git(remote, "rev-parse", "main")
        assert body["skills"]["remote"] == str(remote)
    finally:
        bank.close()


def test_a_rewritten_branch_is_not_followed(tmp_path, remote, reviewer):
    """The served commit moves only forward along its branch: a force-pushed main whose history
    no longer holds the served commit stops the following, and the worker keeps serving."""
    bank = open_bank(tmp_path / "root", remote, skills_follow_seconds=0)
    try:
        served = git(bank.root / "skills", "rev-parse", "HEAD")
        git(reviewer, "checkout", "--quiet", "--orphan", "rewritten")
        (reviewer / "greet" / "SKILL.md").write_text(GREET.replace("Say hello.", "Rewritten."))
        git(reviewer, "add", ".")
        git(reviewer, "commit", "--quiet", "-m", "rewritten history")
        git(reviewer, "push", "--quiet", "--force", "origin", "HEAD:main")
        with pytest.raises(SkillsRepoError, match="was rewritten") as caught:
            bank.skills.follow()
        assert served[:12] in str(caught.value)
        assert git(bank.root / "skills", "rev-parse", "HEAD") == served
        assert "Say hello." in bank.skills.load("greet").body
    finally:
        bank.close()


def test_the_git_wrapper_names_the_command_and_finds_conflicts(tmp_path, remote, reviewer):
    from skillbank.team.git import Git, GitError

    repo = Git(reviewer)
    with pytest.raises(GitError, match="`git rev-parse --verify no-such-ref` failed"):
        repo.run("rev-parse", "--verify", "no-such-ref")
    assert repo.commit_of("no-such-ref") is None and repo.is_work_tree()
    assert not Git(tmp_path).is_work_tree()
    base = repo.commit_of("HEAD")
    for branch, text in (("one", "One."), ("two", "Two.")):
        git(reviewer, "checkout", "--quiet", "-b", branch, base)
        (reviewer / "greet" / "SKILL.md").write_text(GREET.replace("Say hello.", text))
        git(reviewer, "commit", "--quiet", "-am", branch)
    assert repo.conflicts("one", "two") == ["greet/SKILL.md"]
    assert repo.conflicts("one", base) is None
    assert git(reviewer, "status", "--porcelain") == ""  # asking touched nothing
    from skillbank.team.git import MIN_VERSION, version

    assert version("git version 2.39.5") == (2, 39, 5) >= MIN_VERSION
    assert version("git version 2.37.1.windows.1") < MIN_VERSION


def test_saves_while_the_branch_moves_never_deadlock(tmp_path, remote, reviewer):
    """A save holds the library's sync lock, then the repository's; following takes them in
    the same order (it once took the repository's first, and a save meeting a follow that had
    something to merge waited for ever)."""
    import threading

    bank = open_bank(tmp_path / "root", remote, skills_follow_seconds=0.02)
    errors: list[BaseException] = []

    def saves() -> None:
        try:
            for n in range(12):
                save(bank, ADA, name=f"skill-{n}")
        except BaseException as exc:  # noqa: BLE001 - reported below
            errors.append(exc)

    try:
        writer = threading.Thread(target=saves, daemon=True)
        writer.start()
        for n in range(12):  # main moves all the while: every follow has something to merge
            (reviewer / f"moved-{n}").mkdir()
            (reviewer / f"moved-{n}" / "SKILL.md").write_text(
                f"---\nname: moved-{n}\ndescription: Moved number {n}.\n---\n\nBody.\n")
            git(reviewer, "add", ".")
            git(reviewer, "commit", "--quiet", "-m", f"moved {n}")
            git(reviewer, "push", "--quiet", "origin", "HEAD:main")
            time.sleep(0.05)
        writer.join(timeout=DEADLINE)
        assert not writer.is_alive(), "a save and a follow are waiting for each other"
        assert errors == []
        wait_for(lambda: "moved-11" in bank.skills.names(), "the last move served")
    finally:
        bank.close()


def test_anyone_may_propose_a_change_to_a_served_skill(workers, remote):
    """In git mode a change to another author's skill (here one written by hand) is only a
    proposal, so a contributor, even untrusted, may make it (the embedded default still
    needs the reviewer role); the commit names who proposed it, and the served skill is
    unchanged until merged."""
    a, _ = workers
    with scopes.using(BOT):
        changed = a.skills.update("greet", body="Say hello, then ask how to help.\n")
    branch = changed.proposal.branch
    assert git(remote, "log", "-1", "--format=%an", branch) == "agent-7"
    assert "ask how to help" in git(remote, "show", f"{branch}:greet/SKILL.md")
    assert a.skills.load("greet").body.strip() == "# Greet\n\nSay hello."


def test_a_proposal_cut_short_leaves_nothing_behind(tmp_path, remote):
    """A process killed while building a proposal leaves a worktree nobody pushed: the next
    open removes it, and a proposal whose push fails removes its own at once."""
    bank = open_bank(tmp_path / "root", remote, skills_follow_seconds=0)
    checkout = bank.root / "skills"
    try:
        bank.skills.skills_repo.git.run("worktree", "add", "--quiet", "--detach",
                                        str(bank.root / ".skills-work" / "proposal-x" / "tree"))
    finally:
        bank.close()
    assert len(git(checkout, "worktree", "list").splitlines()) == 2
    bank = open_bank(tmp_path / "root", remote, skills_follow_seconds=0)
    try:
        assert len(git(checkout, "worktree", "list").splitlines()) == 1
        assert not any((bank.root / ".skills-work").iterdir())
        (remote / "hooks" / "pre-receive").write_text("#!/bin/sh\necho refused >&2\nexit 1\n")
        (remote / "hooks" / "pre-receive").chmod(0o755)
        with pytest.raises(SkillsRepoError, match="could not push") as caught:
            save(bank, ADA)
        assert "nothing was written" in str(caught.value)
        assert "pre-receive hook declined" in str(caught.value)
        assert "moved meanwhile" not in str(caught.value)  # a refusal, not a race
        assert not any((bank.root / ".skills-work").iterdir())
        assert len(git(checkout, "worktree", "list").splitlines()) == 1
        assert "skillbank/proposals" not in git(remote, "branch", "--list", "--all")
    finally:
        bank.close()


def test_a_checkout_moved_by_another_worker_on_the_same_root_is_synced(tmp_path, remote,
                                                                       reviewer):
    """Workers that share one root share its checkout: the first to follow fast-forwards it,
    and the others, finding it at the branch's tip already, must still index the change."""
    bank = open_bank(tmp_path / "root", remote)
    checkout = bank.root / "skills"
    try:
        (reviewer / "rotate-keys").mkdir()
        (reviewer / "rotate-keys" / "SKILL.md").write_text(
            "---\nname: rotate-keys\ndescription: Rotate the API keys safely.\n---\n\nSteps.\n")
        git(reviewer, "add", ".")
        git(reviewer, "commit", "--quiet", "-m", "rotate-keys")
        git(reviewer, "push", "--quiet", "origin", "HEAD:main")
        # The other worker's follow, on the shared checkout: it holds the checkout's file lock
        # as a worker process does (without it, this fetch raced the bank's own follow for
        # git's ref lock: "cannot lock ref 'refs/remotes/origin/main'" on a loaded machine).
        from filelock import FileLock

        from skillbank.team.skills_repo import LOCK_FILE
        with bank.skills._sync_lock, FileLock(str(checkout.parent / LOCK_FILE)):
            git(checkout, "fetch", "--quiet", "origin")
            git(checkout, "merge", "--quiet", "--ff-only", "origin/main")
        wait_for(lambda: "rotate-keys" in bank.skills.names(), "the moved checkout indexed")
    finally:
        bank.close()


async def test_two_team_workers_serve_a_merged_proposal(tmp_path, remote, reviewer,
                                                        chroma_server, postgres):
    """The same through `skillbank server`: two real worker processes (PostgreSQL, a Chroma
    server, one root and its checkout between them, as docs/team.md deploys them), untrusted
    MCP clients. A skill saved on A is a proposal nobody serves; merged by the reviewer, both
    workers route to it within their follow interval, and /readyz names the commit."""
    import asyncio
    import sys
    import uuid

    import httpx

    from conftest import free_port, stop_process
    from mcp_http import bearer_session, call_ok, team_env, wait_until_serving

    root = tmp_path / "root"
    root.mkdir()
    deployment = uuid.uuid4().hex[:12]
    env = {**team_env(), "SKILLBANK_SKILLS_REPO": str(remote),
           "SKILLBANK_SKILLS_FOLLOW_SECONDS": "0.5"}
    workers = []
    try:
        for n in range(2):
            port = free_port()
            proc = subprocess.Popen(
                [sys.executable, "-m", "skillbank.team.server", "--root", str(root),
                 "--chroma-url", chroma_server, "--database-url", postgres.url,
                 "--deployment", deployment, "--port", str(port), "--token", "t0ken"],
                env=env, stdout=(tmp_path / f"w{n}.log").open("w"), stderr=subprocess.STDOUT,
                cwd=str(tmp_path))
            workers.append((proc, f"http://127.0.0.1:{port}"))
        for n, (proc, url) in enumerate(workers):
            wait_until_serving(proc, url, tmp_path / f"w{n}.log", probe="/healthz", status=200,
                               seconds=180)
        (_, a), (_, b) = workers
        async with bearer_session(a, "t0ken", timeout=60) as on_a, \
                bearer_session(b, "t0ken", timeout=60) as on_b:
            saved = await call_ok(on_a, "save_skill", {
                "name": "rotate-keys", "body": "# Steps\n\nRotate, then revoke the old key.\n",
                "description": "Rotate the service's API keys without downtime."})
            assert saved["action"] == "proposed"
            branch = saved["note"].split("branch ", 1)[1].split(" ", 1)[0]
            for client in (on_a, on_b):
                found = await call_ok(client, "find_skills", {"task": "rotate the api keys"})
                assert "rotate-keys" not in {s["name"] for s in found["skills"]}
            git(reviewer, "fetch", "--quiet", "origin")
            git(reviewer, "merge", "--quiet", "--no-ff", "-m", "merge", f"origin/{branch}")
            git(reviewer, "push", "--quiet", "origin", "HEAD:main")
            merged = git(reviewer, "rev-parse", "HEAD")
            started = time.monotonic()
            for client in (on_a, on_b):
                while True:
                    found = await call_ok(client, "find_skills", {"task": "rotate the api keys"})
                    if "rotate-keys" in {s["name"] for s in found["skills"]}:
                        break
                    assert time.monotonic() - started < DEADLINE, "not served after the merge"
                    await asyncio.sleep(0.1)
        for _, url in workers:
            ready = httpx.get(url + "/readyz", timeout=30).json()
            assert ready["skills"]["commit"] == merged and ready["skills"]["branch"] == "main"
    finally:
        for proc, _ in workers:
            stop_process(proc)


def test_a_proposal_crosses_the_wire_to_a_client_process():
    """A client of an embedded owner (skillbank.sharing) gets the branch and commit too."""
    from skillbank.records import Skill, SkillProposal
    from skillbank.sharing import wire

    skill = Skill(name="deploy-app", description="Deploy.", proposal=SkillProposal(
        branch="skillbank/proposals/ada/deploy-app", commit="a" * 40, author="Ada",
        email="ada@example.org", remote="/srv/skills.git", served_branch="main", note="n"))
    back = wire.decode(wire.encode(skill))
    assert back == skill and isinstance(back.proposal, SkillProposal)


def test_a_linked_skill_folder_in_the_repository_is_not_served(tmp_path, remote, reviewer):
    """A commit adding `leak -> /a/host/folder` is one line in review; every worker served the
    host folder's SKILL.md as a team skill (hunt, session 17). It is refused and named."""
    host = tmp_path / "host-folder"
    host.mkdir()
    (host / "SKILL.md").write_text(GREET.replace("greet", "leak"))
    (reviewer / "leak").symlink_to(host, target_is_directory=True)
    git(reviewer, "add", "leak")
    git(reviewer, "commit", "--quiet", "-m", "add leak")
    git(reviewer, "push", "--quiet", "origin", "HEAD:main")
    bank = open_bank(tmp_path / "worker", remote)
    try:
        assert bank.skills.names() == ["greet"]
        report = bank.skills.sync()
        assert [f.code for f in report.findings] == ["linked-folder"]
        assert "leak" in report.findings[0].path
    finally:
        bank.close()
