"""A skills repository given as `https://user:TOKEN@forge/...` (team hunt, session 19, defect 2).

The token was shown to anyone: the unauthenticated `/readyz`, `stats` for readers, every
`save_skill` note (untrusted clients too), git's errors, the log; and `<root>/skillbank.toml`
kept it mode 0644. git's `url.<base>.insteadOf` (through `GIT_CONFIG_GLOBAL`, which the git
wrapper passes through) maps the forge URL onto a local bare repository, so this runs offline.
"""

from __future__ import annotations

import logging
import os
import shutil
import stat
from pathlib import Path

import pytest

from skillbank import remember
from skillbank import scope as scopes
from skillbank.team.git import reason
from skillbank.team.skills_repo import SkillsRepoError
from test_skills_repo import ADA, open_bank, remote, save  # noqa: F401 - fixture

pytestmark = pytest.mark.skipif(shutil.which("git") is None, reason="git is not installed")

SECRET = "glpat-SECRET123"
URL = f"https://deploy:{SECRET}@forge.example/team/skills.git"
READER = scopes.Scope(principal="bob", namespace="bob", role="reader")


@pytest.fixture
def forge(tmp_path, remote, monkeypatch) -> str:  # noqa: F811 - the fixture imported above
    """URL reaches `remote` through git's insteadOf, as a forge with a deploy token would."""
    config = tmp_path / "gitconfig"
    config.write_text(f'[url "{remote}"]\n\tinsteadOf = {URL}\n')
    monkeypatch.setenv("GIT_CONFIG_GLOBAL", str(config))
    return URL


def mode(path: Path) -> int:
    return stat.S_IMODE(path.stat().st_mode)


async def test_readyz_stats_and_notes_never_show_the_token(tmp_path, forge, caplog):
    import httpx

    from skillbank.team.server import HealthRoutes

    caplog.set_level(logging.DEBUG)
    bank = open_bank(tmp_path / "root", forge, skills_follow_seconds=0)
    try:
        async with httpx.AsyncClient(transport=httpx.ASGITransport(app=HealthRoutes(None, bank)),
                                     base_url="http://worker") as client:
            ready = (await client.get("/readyz")).text
        assert "forge.example/team/skills.git" in ready and SECRET not in ready
        with scopes.using(READER):
            stats = str(bank.stats())
        assert "https://forge.example/team/skills.git" in stats and SECRET not in stats
        saved = save(bank, ADA)
        assert "pushed to https://forge.example/team/skills.git" in str(saved.proposal.note)
        assert SECRET not in str(saved.proposal.note) and SECRET not in str(saved)
        # The clone keeps the URL (git needs it to push): its config is the owner's only.
        assert mode(bank.root / "skills" / ".git" / "config") == 0o600
    finally:
        bank.close()
    assert SECRET not in caplog.text


def test_git_errors_never_show_the_token(tmp_path, remote, forge):  # noqa: F811
    bank = open_bank(tmp_path / "root", forge, skills_follow_seconds=0)
    try:
        moved = remote.rename(tmp_path / "moved.git")  # the forge no longer has it
        with pytest.raises(SkillsRepoError, match="cannot reach") as caught:
            save(bank, ADA)
        assert "forge.example" in str(caught.value) and SECRET not in str(caught.value)
        with pytest.raises(SkillsRepoError):
            bank.skills.follow()
        assert SECRET not in str(bank.skills.repo_status())  # its `error`, on /readyz
        moved.rename(remote)
    finally:
        bank.close()
    with pytest.raises(SkillsRepoError, match="cannot clone") as caught:
        open_bank(tmp_path / "fresh", URL.replace("forge.example", "forge.invalid"))
    assert SECRET not in str(caught.value)
    # Older gits (and some messages of newer ones) echo the URL whole.
    echoed = f"fatal: repository '{URL}/' not found\nhint: check the URL"
    assert reason(echoed) == "fatal: repository 'https://forge.example/team/skills.git/' not found"


def test_the_settings_file_holding_the_token_is_the_owners_only(tmp_path):
    root = tmp_path / "root"
    remember.keep_setting(root, "deployment", "team")
    assert mode(root / remember.CONFIG) == 0o666 & ~_umask()  # no secret: as the umask says
    remember.keep_setting(root, "skills_repo", URL)
    assert mode(root / remember.CONFIG) == 0o600
    remember.add(root, [tmp_path / "more-skills"])  # a later rewrite keeps it private
    assert mode(root / remember.CONFIG) == 0o600
    assert SECRET in (root / remember.CONFIG).read_text()  # recorded, for the CLI on this root


def _umask() -> int:
    current = os.umask(0)
    os.umask(current)
    return current


def test_a_token_given_as_the_user_part_is_a_secret_too():
    """Forges take a token alone as the URL's user (`https://TOKEN@github.com/...`): it was
    hidden when shown but the settings file holding it stayed 0644 (review, session 19)."""
    from skillbank.index_outage import holds_password

    assert holds_password("https://ghp_SECRET123@github.com/team/skills.git")
    assert holds_password("https://deploy:glpat-SECRET@forge.example/team/skills.git")
    assert not holds_password("https://forge.example/team/skills.git")
    assert not holds_password("ssh://git@forge.example/team/skills.git")
