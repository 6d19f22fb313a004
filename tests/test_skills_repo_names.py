"""Proposal branch names (issue 24, review): two principals never share one. The slug of a
principal that is not branch-safe carries a hash of it; a principal that merely *looks* like
such a slug (`alice-<that hash>`, a name anyone can compute and sign up as) must not get the
other person's branch — it would continue their proposal and list it as its own."""

from __future__ import annotations

import hashlib

from skillbank.team.skills_repo import principal_slug, proposal_branch


def test_a_principal_named_like_anothers_slug_gets_its_own_branch():
    victim = principal_slug("Alice")
    assert victim.startswith("alice-")
    assert principal_slug(victim) != victim
    assert proposal_branch(victim, "deploy") != proposal_branch("Alice", "deploy")
    # Brute force over names that slug alike ("alice-…" + any punctuation) needs the whole
    # hash to match, not a few hex digits.
    tail = victim.rsplit("-", 1)[1]
    assert len(tail) >= 12
    assert tail == hashlib.sha256(b"Alice").hexdigest()[:len(tail)]
    assert principal_slug("alice") == "alice" and principal_slug("bob.smith") == "bob.smith"


def test_every_principal_tokens_add_accepts_gets_a_branch_git_accepts(tmp_path):
    """`frank.lock` (accepted by `skillbank tokens add`) kept its name as slug; git refuses a
    ref component ending in `.lock`, so every proposal of frank's failed (team hunt, s19)."""
    import shutil
    import subprocess

    import pytest

    from skillbank.team.skills_repo import ref_component_ok

    if shutil.which("git") is None:
        pytest.skip("git is not installed")
    for name in ("frank.lock", "a.lock.lock", "x-y.lock", "alice", "bob.smith", "ci_bot-7"):
        slug = principal_slug(name)
        assert ref_component_ok(slug), (name, slug)
        branch = proposal_branch(name, "x")
        done = subprocess.run(["git", "check-ref-format", f"refs/heads/{branch}"])
        assert done.returncode == 0, (name, slug)
    assert principal_slug("frank.lock") != "frank.lock"
    assert principal_slug("frank.lock") != principal_slug("frank-lock")
    assert principal_slug("bob.smith") == "bob.smith"  # a branch-safe name stays as it is


def test_a_refused_branch_name_is_named_as_such_not_as_an_unreachable_remote(tmp_path):
    import shutil

    import pytest

    from skillbank.team.git import run_once
    from skillbank.team.skills_repo import SkillsRepo, SkillsRepoError

    if shutil.which("git") is None:
        pytest.skip("git is not installed")
    bare = tmp_path / "skills.git"
    run_once(["init", "--quiet", "--bare", "--initial-branch=main", str(bare)], tmp_path)
    seed = tmp_path / "seed"
    run_once(["clone", "--quiet", str(bare), str(seed)], tmp_path)
    run_once(["-c", "user.name=t", "-c", "user.email=t@example.org", "commit", "--quiet",
              "--allow-empty", "-m", "first"], seed)
    run_once(["push", "--quiet", "origin", "HEAD:main"], seed)
    repo = SkillsRepo(tmp_path / "root" / "skills", str(bare), follow_seconds=0).prepare()
    with pytest.raises(SkillsRepoError) as caught:
        repo._fetch("main", "skillbank/proposals/frank.lock/")  # a name git refuses
    assert "cannot reach" not in str(caught.value)
    assert "not a valid ref" in str(caught.value) and "frank.lock" in str(caught.value)
