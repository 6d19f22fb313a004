"""A force-push of the team's skills branch must not take the whole team service out (review).

Users met this: a maintainer amended the last commit of the skills repository's `main` and
force-pushed it; every worker's /readyz then answered 503 at once ("was rewritten"), so the load
balancer took every worker out, although each could still serve the commit it had. Now only a
cause in a worker's own checkout (local changes, an unmerged index) makes it unready; a branch
rewritten on the remote is named in the /readyz body ("behind") and in /metrics
(`skillbank_skills_not_following{cause="remote"}`), and the worker stays ready. Real git.
"""

from __future__ import annotations

import shutil

import httpx
import pytest
from prometheus_client import generate_latest
from prometheus_client.parser import text_string_to_metric_families

from test_skills_repo import git, open_bank, remote  # noqa: F401 - a fixture

pytestmark = pytest.mark.skipif(shutil.which("git") is None, reason="git is not installed")


def force_push_amended_main(tmp_path) -> None:
    seed = tmp_path / "seed"  # the fixture's clone: a maintainer amends and force-pushes main
    (seed / "greet" / "SKILL.md").write_text((seed / "greet" / "SKILL.md").read_text()
                                             + "\nFix.\n")
    git(seed, "commit", "--quiet", "--amend", "-am", "greet (amended)")
    git(seed, "push", "--quiet", "--force", "origin", "HEAD:main")


def not_following(bank) -> dict[str, float]:
    from skillbank.team.metrics import Metrics

    metrics = Metrics()
    metrics.instrument_bank(bank)
    text = generate_latest(metrics.registry).decode()
    return {sample.labels["cause"]: sample.value
            for family in text_string_to_metric_families(text)
            for sample in family.samples if sample.name == "skillbank_skills_not_following"}


async def test_a_force_pushed_branch_leaves_every_worker_ready_and_says_so(tmp_path, remote):
    from skillbank.team.server import HealthRoutes, readiness

    banks = [open_bank(tmp_path / "worker-a", remote, skills_follow_seconds=0),
             open_bank(tmp_path / "worker-b", remote, skills_follow_seconds=0)]
    try:
        served = git(banks[0].root / "skills", "rev-parse", "HEAD")
        force_push_amended_main(tmp_path)
        for bank in banks:
            with pytest.raises(Exception, match="was rewritten"):
                bank.skills.follow()
            ready, checks = readiness(bank)
            assert ready, checks
            assert "skills" not in checks
            async with httpx.AsyncClient(transport=httpx.ASGITransport(
                    app=HealthRoutes(None, bank)), base_url="http://worker") as client:
                answer = await client.get("/readyz")
            assert answer.status_code == 200
            body = answer.json()["skills"]
            assert "was rewritten" in body["behind"] and body["stuck"] is None
            assert body["commit"] == served  # still serves the commit it had
            assert bank.skills.load("greet").body.rstrip().endswith("Say hello.")
            assert not_following(bank) == {"remote": 1.0, "local": 0.0}
    finally:
        for bank in banks:
            bank.close()


def test_a_local_change_still_makes_the_worker_unready_even_when_the_branch_is_rewritten(
        tmp_path, remote):
    from skillbank.team.server import readiness

    bank = open_bank(tmp_path / "root", remote, skills_follow_seconds=0)
    try:
        (bank.root / "skills" / "stray").mkdir()  # a change made by hand in the checkout
        (bank.root / "skills" / "stray" / "SKILL.md").write_text("local\n")
        force_push_amended_main(tmp_path)
        with pytest.raises(Exception, match="was rewritten"):
            bank.skills.follow()
        ready, checks = readiness(bank)
        assert not ready and "local changes" in checks["skills"]
        assert not_following(bank) == {"remote": 1.0, "local": 1.0}
        shutil.rmtree(bank.root / "skills" / "stray")  # the local cause fixed: ready again
        with pytest.raises(Exception, match="was rewritten"):
            bank.skills.follow()
        assert readiness(bank)[0]
        assert not_following(bank) == {"remote": 1.0, "local": 0.0}
    finally:
        bank.close()


def test_a_commit_made_in_the_served_checkout_makes_the_worker_unready_and_is_named(
        tmp_path, remote):
    """An operator's quick fix committed in `<root>/skills` was served unreviewed, then blamed
    on a "rewritten" main once main moved on, with advice that threw the commit away (hunt,
    session 17). It is named as a local commit now, with how to propose it; the worker is
    unready until it is dealt with; nothing is thrown away."""
    from skillbank.team.server import readiness

    bank = open_bank(tmp_path / "root", remote, skills_follow_seconds=0)
    checkout = bank.root / "skills"
    try:
        (checkout / "greet" / "SKILL.md").write_text(
            (checkout / "greet" / "SKILL.md").read_text() + "\nQuick fix.\n")
        git(checkout, "commit", "--quiet", "-am", "quick fix on the server")
        for round_ in range(2):  # before main moves, and after it moved on
            with pytest.raises(Exception, match="has commits made in it") as named:
                bank.skills.follow()
            assert "quick fix on the server" in str(named.value)
            assert "was rewritten" not in str(named.value)
            ready, checks = readiness(bank)
            assert not ready and "commits made in it" in checks["skills"]
            seed = tmp_path / "seed"  # main moves on meanwhile
            (seed / "greet" / "notes.md").write_text(f"More, round {round_}.\n")
            git(seed, "add", ".")
            git(seed, "commit", "--quiet", "-m", "notes")
            git(seed, "push", "--quiet", "origin", "HEAD:main")
        assert "Quick fix." in (checkout / "greet" / "SKILL.md").read_text()  # nothing lost
        git(checkout, "reset", "--quiet", "--hard", "origin/main")  # the advice, once pushed
        bank.skills.follow()
        assert readiness(bank)[0]
        assert (checkout / "greet" / "notes.md").exists()
    finally:
        bank.close()


def test_no_skills_in_git_no_following_samples(tmp_path):
    from skillbank import Skillbank
    from skillbank.embeddings import HashEmbedding

    with Skillbank.open(tmp_path / "root", embedding_function=HashEmbedding(),
                        include_bundled=False, share=False) as bank:
        assert not_following(bank) == {}
