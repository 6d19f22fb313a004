"""Review decisions and deletions of team and third-party skills curated in git (hunt-git,
session 23, #1 and #3).

#1: a reviewer rejected `brainstorming` in a team folder; a `git mv` to `brainstorm` with its
`name:` edited was recognised by the sync as a rename (its usage went along) but the rejection
stayed under the old name in `skills.lock`, so the same content was routed and served under the
new one. Now a decision follows a rename the sync recognises (a rejection stays a rejection; an
acceptance pins the files accepted, so an edited `name:` sends the skill back to review), and a
rejection follows the files themselves under any name.

#3: a team skill deleted by `git checkout` answered `load` with "held for review ... skillbank
skills review NAME accept" until the next sync (for good in a process without a watcher). Now a
load or read of a skill whose SKILL.md is gone says it is not found, as an unknown name.

In process and through a client of another process owning the root; #3 also over MCP stdio.
"""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from skillbank.errors import NotFoundError
from test_skill_trust import vendor, vendor_bank  # noqa: F401 - the `vendor` fixture

TASK = "summarise a csv file report totals"
BOTH = pytest.mark.parametrize("remote", [False, True], ids=["in-process", "client-of-owner"])


def _team(root: Path, vendor: Path) -> None:
    """`vendor` is a team folder (the hunt's setup: skillbank.toml's [skill_trust])."""
    root.mkdir(parents=True, exist_ok=True)
    (root / "skillbank.toml").write_text(f'[skill_trust]\n"{vendor}" = "team"\n')


def _rename(vendor: Path, old: str, new: str) -> None:
    """What `git mv old new` and an edit of `name:` leave on disk."""
    (vendor / old).rename(vendor / new)
    skill_md = vendor / new / "SKILL.md"
    skill_md.write_text(skill_md.read_text().replace(f"name: {old}\n", f"name: {new}\n"))


def _refusal(bank, call) -> str:
    with pytest.raises(NotFoundError) as refused:  # HeldError is a NotFoundError
        call()
    return str(refused.value)


@BOTH
def test_a_rejected_skill_renamed_in_git_stays_rejected(tmp_path, vendor, remote):
    _team(tmp_path / "root", vendor)
    with vendor_bank(tmp_path / "root", vendor, remote) as bank:
        bank.rate("skill:csv-report", helpful=False)
        assert bank.skills.review_skill("csv-report", "reject", reason="phones home").held
        _rename(vendor, "csv-report", "csv-summary")
        report = bank.skills.sync()
        assert report.added == ["csv-summary"] and report.removed == ["csv-report"]
        held = bank.skills.load("csv-summary", include_held=True)
        assert held.usage.uses == 1  # the sync took it for renamed: its usage went along ...
        assert held.review == "rejected" and held.held  # ... and so did the rejection
        assert "rejected by" in held.notes[0] and "as csv-report" in held.notes[0]
        assert "held for review (rejected)" in _refusal(bank, lambda: bank.skills.load(
            "csv-summary"))
        assert "held for review" in _refusal(bank, lambda: bank.skills.read_resource(
            "csv-summary", "scripts/totals.py"))
        assert bank.skills.search(TASK) == []
        assert "csv-summary" not in [s.name for s in bank.skills.list()]
        assert "csv-summary" not in bank.context_for(TASK).text
        assert [s.name for s in bank.skills.review_queue()] == ["csv-summary"]
        lock = json.loads((tmp_path / "root" / "skills.lock").read_text())["skills"]
        assert lock["csv-report"]["decision"] == "rejected"  # the old name keeps it too
        assert lock["csv-summary"]["renamed_from"] == "csv-report"
        # Only a reviewer's accept serves it again.
        assert not bank.skills.review_skill("csv-summary", "accept").held
        assert [h.name for h in bank.skills.search(TASK)] == ["csv-summary"]


@BOTH
def test_an_accepted_skill_renamed_in_git_is_accepted_only_while_its_files_are(
        tmp_path, vendor, remote):
    _team(tmp_path / "root", vendor)
    (vendor / "csv-report" / "SKILL.md").write_text(  # no `name:`: it takes its folder's
        "---\ndescription: Summarise a CSV file into a short report with totals.\n---\n"
        "# Steps\n\nRead the CSV, total each numeric column, write the report.\n")
    with vendor_bank(tmp_path / "root", vendor, remote) as bank:
        accepted = bank.skills.review_skill("csv-report", "accept")
        version = bank.skills.skill_versions("csv-report")[0].version
        assert accepted.review == "accepted"
        (vendor / "csv-report").rename(vendor / "csv-summary")  # the same files, renamed
        assert bank.skills.sync().added == ["csv-summary"]
        moved = bank.skills.load("csv-summary")  # its pin went along: served, accepted
        assert moved.review == "accepted" and "scripts/totals.py" in [r.path for r in
                                                                     moved.resources]
        (vendor / "csv-summary" / "scripts" / "totals.py").write_text("import os\n")
        held = bank.skills.load("csv-summary", include_held=True)
        assert held.held and held.review == \
            "pending: changed since accepted as csv-report (scripts/totals.py)"
        assert "changed since accepted" in _refusal(bank, lambda: bank.skills.load(
            "csv-summary"))
        # Its accepted version is still listed, and restorable, under the new name.
        kept = [v for v in bank.skills.skill_versions("csv-summary") if v.version == version]
        assert kept and Path(kept[0].path).is_file()
        restored = bank.skills.restore_version("csv-summary", version)
        assert restored.trust == "own"
        assert bank.skills.read_resource("csv-summary", "scripts/totals.py") == "print('totals')\n"


@BOTH
def test_an_accepted_skill_renamed_with_its_name_edited_goes_back_to_review(
        tmp_path, vendor, remote):
    """A rename that edits `name:` changes the SKILL.md the reviewer accepted. Judged as a new
    skill it was served, so a commit renaming a pinned skill could change its scripts too."""
    _team(tmp_path / "root", vendor)
    with vendor_bank(tmp_path / "root", vendor, remote) as bank:
        bank.skills.review_skill("csv-report", "accept")
        _rename(vendor, "csv-report", "csv-summary")
        (vendor / "csv-summary" / "scripts" / "totals.py").write_text("import os\n")
        assert bank.skills.sync().added == ["csv-summary"]
        held = bank.skills.load("csv-summary", include_held=True)
        assert held.held and held.review == \
            "pending: changed since accepted as csv-report (SKILL.md, scripts/totals.py)"
        assert bank.skills.search(TASK) == []
        assert not bank.skills.review_skill("csv-summary", "accept").held


@BOTH
def test_rejected_files_copied_under_another_name_stay_rejected(tmp_path, vendor, remote):
    (vendor / "csv-report" / "SKILL.md").write_text(  # no `name:`: it takes its folder's
        "---\ndescription: Summarise a CSV file into a short report with totals.\n---\n"
        "# Steps\n\nRead the CSV, total each numeric column, write the report.\n")
    with vendor_bank(tmp_path / "root", vendor, remote) as bank:
        bank.skills.review_skill("csv-report", "reject", reason="phones home")
        shutil.copytree(vendor / "csv-report", vendor / "csv-digest")
        assert bank.skills.sync().added == ["csv-digest"]
        copy = bank.skills.load("csv-digest", include_held=True)
        assert copy.review == "rejected" and "as csv-report" in copy.notes[0]
        assert bank.skills.search(TASK) == []
        (vendor / "csv-digest" / "scripts" / "totals.py").write_text("print('sums')\n")
        assert bank.skills.load("csv-digest").review == ""  # other files: a skill of its own
        # A reviewer's decision under the copy's own name wins over the other name's.
        (vendor / "csv-digest" / "scripts" / "totals.py").write_text("print('totals')\n")
        assert bank.skills.load("csv-digest", include_held=True).review == "rejected"
        assert bank.skills.review_skill("csv-digest", "accept").review == "accepted"
        assert bank.skills.load("csv-digest").review == "accepted"
        assert bank.skills.load("csv-report", include_held=True).review == "rejected"


@BOTH
def test_a_skill_deleted_since_the_last_sync_is_not_found(tmp_path, vendor, remote):
    _team(tmp_path / "root", vendor)
    with vendor_bank(tmp_path / "root", vendor, remote) as bank:
        assert bank.skills.load("csv-report").trust == "team"
        bank.skills.save("own-notes", "Tidy meeting notes into decisions.", "# Steps\n1. Tidy.\n")
        shutil.rmtree(vendor / "csv-report")  # a `git checkout` of a branch without it
        shutil.rmtree(tmp_path / "root" / "skills" / "own-notes")
        for name in ("csv-report", "own-notes"):
            unknown = f"no skill named {name!r}"
            assert unknown in _refusal(bank, lambda: bank.skills.load(name))
            assert unknown in _refusal(bank, lambda: bank.skills.load(name, include_held=True))
            assert unknown in _refusal(bank, lambda: bank.skills.read_resource(name, "SKILL.md"))
        assert set(bank.skills.sync().removed) == {"csv-report", "own-notes"}


async def test_load_skill_over_mcp_says_a_deleted_team_skill_is_not_found(tmp_path, vendor):
    from mcp import Client, StdioServerParameters

    from test_mcp_transports import base_env

    root = tmp_path / "root"
    _team(root, vendor)
    params = StdioServerParameters(
        command=sys.executable, args=["-m", "skillbank.mcp_server", "--root", str(root),
                                      "--skills-dir", str(vendor), "--no-bundled", "--no-watch"],
        env=base_env(SKILLBANK_EMBEDDING="hash"), cwd=str(tmp_path))
    async with Client(params, read_timeout_seconds=120) as client:
        loaded = await client.call_tool("load_skill", {"name": "csv-report"})
        assert not loaded.is_error and loaded.structured_content["trust"] == "team"
        shutil.rmtree(vendor / "csv-report")
        for tool, args in (("load_skill", {"name": "csv-report"}),
                           ("read_skill_resource", {"name": "csv-report", "path": "SKILL.md"})):
            gone = await client.call_tool(tool, args)
            assert gone.is_error and "no skill named 'csv-report'" in gone.content[0].text, \
                gone.content[0].text
            assert "held" not in gone.content[0].text


def test_git_mv_of_a_rejected_skill_in_a_real_repository(tmp_path, vendor):
    """The hunt's steps with git itself: `git mv`, `sed` of `name:`, commit."""
    if shutil.which("git") is None:
        pytest.skip("git is not installed")
    _team(tmp_path / "root", vendor)

    def git(*args: str) -> None:
        subprocess.run(["git", "-c", "user.email=t@t", "-c", "user.name=t", *args], cwd=vendor,
                       check=True, capture_output=True)

    git("init", "-q")
    git("add", "-A")
    git("commit", "-qm", "skills")
    with vendor_bank(tmp_path / "root", vendor, False) as bank:
        bank.skills.review_skill("csv-report", "reject")
        git("mv", "csv-report", "csv-summary")
        skill_md = vendor / "csv-summary" / "SKILL.md"
        skill_md.write_text(skill_md.read_text().replace("name: csv-report", "name: csv-summary"))
        git("commit", "-qam", "rename")
        bank.skills.sync()
        assert bank.skills.load("csv-summary", include_held=True).review == "rejected"
        assert bank.skills.search(TASK) == []
