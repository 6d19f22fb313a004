"""Draft files and what adopting or restoring makes of them (hunt-drafts, session 26):

- #5: a pending draft (its sources' tasks and lessons, a secret among them) was 0644 in 0755
  folders beside a 0600 journal holding the same text; it is private now (0600 in 0700 folders),
  and the skill it becomes once adopted is shared as any other;
- #8: adopting a revision of a read-only skill served a copy without the skill's files
  (scripts/, references/); the copy takes them now;
- #10: after `skills rename`, every kept version was refused by restore (its `name:` is the
  old one); it is restored under the skill's current name.

Each runs in process and as a client of an owner process (tests/owner_client.py), real Chroma.
"""

from __future__ import annotations

import os
import stat
from pathlib import Path

import pytest
from owner_client import bank_for
from test_adopt_author import as_adopted

SECRET = "PGPASSWORD=hunter2-s3cr3t"
BOTH = pytest.mark.parametrize("remote", [False, True], ids=["in-process", "client-of-owner"])


def mode(path: Path) -> int:
    return stat.S_IMODE(os.stat(path).st_mode)


def shared_modes(tmp_path: Path) -> tuple[int, int]:
    """The modes a folder and a file get here by default (0777 / 0666 less the umask)."""
    folder = tmp_path / "probe-folder"
    folder.mkdir()
    (folder / "file").write_text("x")
    return mode(folder), mode(folder / "file")


def record_csv_failures(bank, n: int = 3) -> None:
    for table in ["orders", "users", "invoices", "refunds"][:n]:
        bank.experiences.record(
            task=f"Import the {table} CSV file into a database table", outcome="failure",
            when_to_use="Loading CSV exports into a database", feedback="the load failed",
            lessons=[f"Connect with {SECRET}-{table} before COPY."])


@BOTH
def test_a_pending_draft_is_as_private_as_the_journal_and_shared_once_adopted(tmp_path, remote):
    root = tmp_path / "root"
    root.mkdir(mode=0o755)  # a root the user made: it keeps its mode
    os.chmod(root, 0o755)
    (root / "drafts").mkdir(mode=0o755)  # as an earlier version left it
    os.chmod(root / "drafts", 0o755)
    folder_mode, file_mode = shared_modes(tmp_path)
    with bank_for(tmp_path, remote) as bank:
        record_csv_failures(bank)
        (draft,) = bank.skills.propose()
        skill_md = Path(draft.path)
        assert SECRET in skill_md.read_text()
        assert mode(root / "drafts") == 0o700
        assert mode(skill_md.parent) == 0o700
        assert mode(skill_md) == 0o600

        edited = skill_md.read_text() + "\nChecked by a person.\n"
        os.chmod(skill_md, 0o644)  # as an earlier version wrote it
        bank.skills.edit_draft(draft.name, edited)
        assert mode(skill_md) == 0o600 and skill_md.read_text() == edited

        adopted = Path(bank.skills.adopt(draft.name).path)
        assert adopted.read_text() == as_adopted(edited)  # naming its author (hunt-scope #3)
        assert (mode(adopted.parent), mode(adopted)) == (folder_mode, file_mode)
        closed = root / "drafts" / ".closed"
        assert mode(closed) == 0o700
        assert [mode(p / "SKILL.md") for p in closed.iterdir()] == [0o600]


@BOTH
def test_a_discarded_draft_stays_private(tmp_path, remote):
    with bank_for(tmp_path, remote) as bank:
        record_csv_failures(bank)
        (draft,) = bank.skills.propose()
        bank.skills.discard(draft.name)
        closed = tmp_path / "root" / "drafts" / ".closed"
        (kept,) = closed.iterdir()
        assert (mode(closed), mode(kept), mode(kept / "SKILL.md")) == (0o700, 0o700, 0o600)


def read_only_skill(shared: Path) -> Path:
    folder = shared / "deploy-billing"
    (folder / "scripts").mkdir(parents=True)
    (folder / "references").mkdir()
    (folder / "SKILL.md").write_text(
        "---\nname: deploy-billing\ndescription: Deploy the billing service to a cluster with "
        "kubectl.\n---\n# Deploy billing\n\nRun `scripts/deploy.sh` and read "
        "`references/clusters.md` first.\n")
    script = folder / "scripts" / "deploy.sh"
    script.write_text("#!/bin/sh\nkubectl apply -f billing.yaml\n")
    os.chmod(script, 0o755)
    (folder / "references" / "clusters.md").write_text("staging: eu-1\nproduction: eu-2\n")
    return folder


@BOTH
def test_adopting_a_revision_of_a_read_only_skill_keeps_its_files(tmp_path, remote):
    shared = tmp_path / "shared"
    original = read_only_skill(shared)
    with bank_for(tmp_path, remote, skill_roots=(shared,)) as bank:
        assert not bank.skills.load("deploy-billing").writable
        for lesson in ["Drain the old pods before the rollout starts.",
                       "Pin the image digest instead of the latest tag."]:
            bank.experiences.record(task="Deploy billing to the staging cluster",
                                    outcome="failure", tags=["skill:deploy-billing"],
                                    lessons=[lesson])
        (draft,) = bank.skills.propose()
        assert draft.revises == "deploy-billing"
        revised = Path(draft.path).read_text()

        skill = bank.skills.adopt("deploy-billing")
        folder = Path(skill.path).parent
        assert folder == tmp_path / "root" / "skills" / "deploy-billing"
        assert Path(skill.path).read_text() == as_adopted(revised)  # hunt-scope #3, s. 28
        assert sorted(r.path for r in skill.resources) == [
            "references/clusters.md", "scripts/deploy.sh"]
        assert bank.skills.read_resource("deploy-billing", "scripts/deploy.sh") == \
            (original / "scripts" / "deploy.sh").read_text()
        assert mode(folder / "scripts" / "deploy.sh") & 0o100  # still runs
        assert [v.reason for v in bank.skills.history("deploy-billing")] == [
            f"the skill as found in {shared}"]
    assert sorted(p.name for p in original.rglob("*")) == [
        "SKILL.md", "clusters.md", "deploy.sh", "references", "scripts"]  # left as it was


@BOTH
def test_a_version_kept_before_a_rename_is_restored_under_the_new_name(tmp_path, remote):
    with bank_for(tmp_path, remote) as bank:
        bank.skills.save("import-csv", "Import CSV exports into a database table.",
                         "# Import CSV\n\nUse COPY.\n")
        bank.skills.update("import-csv", description="Import CSV exports (v2).")
        bank.skills.rename("import-csv", "csv-import")
        (kept,) = bank.skills.history("csv-import")

        restored = bank.skills.restore("csv-import", kept.version)
        assert (restored.name, restored.description) == (
            "csv-import", "Import CSV exports into a database table.")
        assert "name: csv-import\n" in Path(restored.path).read_text()
        assert len(bank.skills.history("csv-import")) == 2  # the text before the restore too


@BOTH
def test_a_linked_folder_in_a_draft_is_refused_clearly_and_nothing_is_left(tmp_path, remote):
    """Review, session 26: adopt raised a bare IsADirectoryError on a draft folder holding a
    link to a folder. Now a clear error naming it; the draft stays pending, no staging copy."""
    from skillbank.errors import InvalidInputError

    shared = tmp_path / "shared-scripts"
    shared.mkdir()
    (shared / "load.sh").write_text("echo hi\n")
    with bank_for(tmp_path, remote) as bank:
        record_csv_failures(bank)
        (draft,) = bank.skills.propose()
        os.symlink(shared, Path(draft.path).parent / "scripts")
        with pytest.raises(InvalidInputError, match="'scripts' is a link to a folder"):
            bank.skills.adopt(draft.name)
        assert [d.name for d in bank.skills.drafts()] == [draft.name]
        assert draft.name not in bank.skills
    skills = tmp_path / "root" / "skills"
    assert not skills.exists() or not [p for p in skills.iterdir() if p.name.startswith(".adopt-")]


@BOTH
def test_drafts_an_earlier_version_left_readable_are_made_private(tmp_path, remote):
    """Review, session 26: drafts written 0755/0644 before the upgrade stayed readable by every
    local account until each was written again. Listing the drafts makes them private."""
    with bank_for(tmp_path, remote) as bank:
        record_csv_failures(bank)
        (draft,) = bank.skills.propose()
    drafts = Path(draft.path).parent.parent
    for path in [drafts, *drafts.rglob("*")]:  # as an earlier version left them
        os.chmod(path, 0o755 if path.is_dir() else 0o644)
    with bank_for(tmp_path, remote) as bank:
        assert [d.name for d in bank.skills.drafts()] == [draft.name]
    for path in [drafts, *drafts.rglob("*")]:
        assert mode(path) & 0o077 == 0, (path, oct(mode(path)))
