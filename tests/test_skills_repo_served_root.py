"""The CLI on a team worker's root, when the worker serves its skills from git (hunt).

Users met this: `skillbank server --skills-repo URL` recorded `--deployment` in the root's
skillbank.toml but not the repository; `skillbank --root R skills new hotfix` then wrote
`R/skills/hotfix/` straight into the served checkout (no proposal, no review), and the next merge
to main was never followed by any worker ("local changes") while /readyz said ready.

Now the worker records the repository, a bank opened on such a root without the setting refuses
to write into the checkout (naming the setting), and a checkout that cannot follow its branch
makes /readyz answer 503. Real git throughout.
"""

from __future__ import annotations

import argparse
import shutil

import pytest

from owner_client import bank_for
from skillbank import Skillbank
from skillbank.embeddings import HashEmbedding
from skillbank.errors import ReadOnlyError
from test_skills_repo import git, open_bank, remote  # noqa: F401 - a fixture

pytestmark = pytest.mark.skipif(shutil.which("git") is None, reason="git is not installed")


def test_the_worker_records_its_skills_repo_so_the_cli_on_the_root_proposes(tmp_path, remote):
    from skillbank.team.server import _remember_serving

    root = tmp_path / "root"
    open_bank(root, remote, skills_follow_seconds=0).close()  # the worker's checkout
    _remember_serving(root, argparse.Namespace(deployment="team", skills_repo=str(remote),
                                               skills_branch=None))
    # The worker also records `team = true`, and then an open without a database_url is
    # refused (test_team_root_needs_team_env.py); a root recorded by a worker from before that
    # (no such line) is what an embedded CLI can still open, and it must propose there too.
    config = root / "skillbank.toml"
    config.write_text(config.read_text().replace("team = true\n", ""))
    bank = Skillbank.open(root, skill_roots=[], embedding_function=HashEmbedding(),
                          include_bundled=False, share=False)  # the CLI: no skills setting given
    try:
        skill = bank.skills.create("hotfix", "Ship an urgent hotfix to production safely.",
                                   "# Steps\n\n1. Ship.\n")
        assert skill.proposal is not None, "the CLI wrote into the served checkout"
    finally:
        bank.close()
    assert not (root / "skills" / "hotfix").exists()
    assert git(root / "skills", "status", "--porcelain") == ""


@pytest.mark.parametrize("remote_client", [False, True], ids=["in-process", "client-of-owner"])
def test_a_bank_without_the_setting_refuses_to_write_into_a_served_checkout(
        tmp_path, remote, remote_client):
    open_bank(tmp_path / "root", remote, skills_follow_seconds=0).close()
    with bank_for(tmp_path, remote_client) as bank:
        with pytest.raises(ReadOnlyError, match="skills_repo"):
            bank.skills.create("hotfix", "Ship an urgent hotfix to production safely.",
                               "# Steps\n\n1. Ship.\n")
    assert not (tmp_path / "root" / "skills" / "hotfix").exists()
    assert git(tmp_path / "root" / "skills", "status", "--porcelain") == ""


@pytest.mark.parametrize("remote_client", [False, True], ids=["in-process", "client-of-owner"])
def test_the_refusal_names_the_mark_to_delete_once_no_worker_serves_the_checkout(
        tmp_path, remote, remote_client):
    """The mark (`.skills-repo.lock`) outlives the worker: a root that once ran in git mode was
    refused for good, and the error named only the setting (review)."""
    open_bank(tmp_path / "root", remote, skills_follow_seconds=0).close()
    mark = (tmp_path / "root" / ".skills-repo.lock").resolve()
    with bank_for(tmp_path, remote_client) as bank:
        with pytest.raises(ReadOnlyError, match="skills_repo") as caught:
            bank.skills.create("hotfix", "Ship an urgent hotfix to production safely.",
                               "# Steps\n\n1. Ship.\n")
        assert str(mark) in str(caught.value)
        mark.unlink()  # no worker serves it any more: the way out the error named
        bank.skills.create("hotfix", "Ship an urgent hotfix to production safely.",
                           "# Steps\n\n1. Ship.\n")
    assert (tmp_path / "root" / "skills" / "hotfix" / "SKILL.md").is_file()


def test_a_skills_folder_of_ones_own_in_git_stays_writable(tmp_path):
    """A personal root whose skills folder is a git repository (no worker serves it)."""
    root = tmp_path / "root"
    (root / "skills").mkdir(parents=True)
    git(root / "skills", "init", "--quiet")
    with Skillbank.open(root, embedding_function=HashEmbedding(), include_bundled=False,
                        share=False) as bank:
        bank.skills.create("notes", "Keep my own notes on deploys.", "# Steps\n\n1. Write.\n")
    assert (root / "skills" / "notes" / "SKILL.md").is_file()


async def test_readyz_is_not_ready_while_the_checkout_cannot_follow(tmp_path, remote):
    import httpx

    from skillbank.team.server import HealthRoutes, readiness

    bank = open_bank(tmp_path / "root", remote, skills_follow_seconds=0)
    try:
        (bank.root / "skills" / "stray").mkdir()  # a change made by hand in the checkout
        (bank.root / "skills" / "stray" / "SKILL.md").write_text("local\n")
        seed = tmp_path / "seed"  # a reviewer merges something into main
        (seed / "greet" / "SKILL.md").write_text((seed / "greet" / "SKILL.md").read_text()
                                                 + "\nMore.\n")
        git(seed, "commit", "--quiet", "-am", "tweak")
        git(seed, "push", "--quiet", "origin", "HEAD:main")
        with pytest.raises(Exception, match="local changes"):
            bank.skills.follow()
        ready, checks = readiness(bank)
        assert not ready and "local changes" in checks["skills"]
        async with httpx.AsyncClient(transport=httpx.ASGITransport(app=HealthRoutes(None, bank)),
                                     base_url="http://worker") as client:
            answer = await client.get("/readyz")
        assert answer.status_code == 503

        shutil.rmtree(bank.root / "skills" / "stray")  # fixed: following works, ready again
        bank.skills.follow()
        assert readiness(bank)[0]
    finally:
        bank.close()
