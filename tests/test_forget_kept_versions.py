"""`forget skill:NAME` erases the copies accepts kept, its `skills.lock` entry and its scans.

hunt-skillteam #2, session 32: a third-party skill was accepted (`skills review NAME accept`),
restored into the bank's own library (`skills restore NAME@V`), then forgotten "for good";
its text stayed under `<root>/skill-versions/NAME/V/SKILL.md` and `skills.lock` kept its
entry. A scan result of one of its versions (`<root>/skill-scans/V.json`) quotes its files
in its findings' snippets and stayed too. Run in process and through a client of an owner
process; before the fix the grep below found the kept SKILL.md and the scan result.
"""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from owner_client import bank_for
from skillbank.memories.skills import pins
from skillbank.memories.skills.scan import SCANS_DIR, ScanResult
from skillbank.records import SecurityFinding

NAME = "secret-runbook"
SECRET = b"Tamarind-Hurdygurdy"


def holding(root: Path) -> list[str]:
    """Files under `root` holding the secret, but for the index: the third-party skill itself
    is still in its folder (outside the root), served and indexed again once the bank's own
    copy is gone."""
    return sorted(str(p.relative_to(root)) for p in root.rglob("*")
                  if p.is_file() and SECRET.lower() in p.read_bytes().lower()
                  and p.relative_to(root).parts[0] not in ("chroma", ".cache"))


REMOTE = pytest.mark.parametrize("remote", [False, True], ids=["in-process", "client-of-owner"])


def vendor_skill(tmp_path: Path, name: str = NAME) -> Path:
    """A third-party folder holding the skill `name` (its text holds the secret)."""
    vendor = tmp_path / "vendor"
    (vendor / name).mkdir(parents=True, exist_ok=True)
    (vendor / name / "SKILL.md").write_text(
        f"---\nname: {name}\ndescription: Rotate the payment gateway credentials.\n---\n"
        f"# Steps\n1. The vault path is {SECRET.decode()}.\n")
    return vendor


def accepted_and_restored(bank, root: Path) -> str:
    """The vendor skill accepted, a scan result quoting it, restored as the bank's own copy
    (which shares that version: the same files); its version."""
    version = bank.skills.skill_versions(NAME)[0].version
    bank.skills.review_skill(NAME, "accept", version=version)
    finding = SecurityFinding(severity="low", rule="TEST_RULE", file="SKILL.md", line=6,
                              snippet=f"vault path is {SECRET.decode()}")
    (root / SCANS_DIR / f"{version}.json").write_text(
        json.dumps(ScanResult(version, "findings", [finding]).to_json()))
    bank.skills.restore_version(NAME, version)
    assert (root / pins.SNAPSHOTS / NAME / version / "SKILL.md").exists()
    return version


@REMOTE
def test_forget_erases_kept_versions_lock_entry_and_scans(tmp_path, remote):
    """No skill of the name is left (the vendor's folder went too): everything goes."""
    vendor = vendor_skill(tmp_path)
    with bank_for(tmp_path, remote, skill_roots=(vendor,)) as bank:
        root = tmp_path / "root"
        accepted_and_restored(bank, root)
        shutil.rmtree(vendor / NAME)  # the vendor dropped it: only the bank's own copy is left
        bank.forget(f"skill:{NAME}")
        assert holding(root) == []
        assert not (root / pins.SNAPSHOTS / NAME).exists()
        lock = json.loads((root / "skills.lock").read_text())["skills"]
        assert NAME not in lock


@REMOTE
def test_forget_keeps_the_review_and_scan_a_remaining_skill_uses(tmp_path, remote):
    """review 1 #7, session 32: forgetting the bank's own copy of a restored third-party skill
    dropped the accept the third-party skill (still in its folder, served again) relied on, so
    it went back to review, and deleted the scan result of its version (the same files), so it
    was unscanned. Now its lock entry and that scan stay; the copies accepts kept still go."""
    vendor = vendor_skill(tmp_path)
    with bank_for(tmp_path, remote, skill_roots=(vendor,)) as bank:
        root = tmp_path / "root"
        version = accepted_and_restored(bank, root)
        bank.forget(f"skill:{NAME}")
        served = next(s for s in bank.skills.list(include_held=True) if s.name == NAME)
        assert served.trust == "third-party" and served.version == version
        assert served.review == "accepted" and not served.held, served.review
        lock = json.loads((root / "skills.lock").read_text())["skills"]
        assert lock[NAME]["decision"] == "accepted"
        assert (root / SCANS_DIR / f"{version}.json").exists(), "its scan result was deleted"
        assert not (root / pins.SNAPSHOTS / NAME).exists()


@REMOTE
def test_forget_keeps_a_scan_another_name_shares(tmp_path, remote):
    """Two of the bank's own skills with the same files (no name in them: each is named by its
    folder) share one scan result; forgetting one left the other unscanned."""
    with bank_for(tmp_path, remote) as bank:
        root = tmp_path / "root"
        body = "---\ndescription: Rotate the payment gateway credentials.\n---\n# Steps\n1. Go.\n"
        for name in ("rotate-a", "rotate-b"):
            (root / "skills" / name).mkdir(parents=True)
            (root / "skills" / name / "SKILL.md").write_text(body)
        bank.sync()
        versions = {s.name: s.version for s in bank.skills.list(include_held=True)}
        if versions.get("rotate-a") != versions.get("rotate-b"):
            pytest.skip(f"the two copies do not share a version here: {versions}")
        version = versions["rotate-a"]
        (root / SCANS_DIR).mkdir(exist_ok=True)
        (root / SCANS_DIR / f"{version}.json").write_text(
            json.dumps(ScanResult(version, "clean", []).to_json()))
        bank.forget("skill:rotate-a")
        assert [s.name for s in bank.skills.list(include_held=True)] == ["rotate-b"]
        assert (root / SCANS_DIR / f"{version}.json").exists(), "rotate-b's scan was deleted"


def test_forget_keeps_a_rejection_without_its_reason(tmp_path):
    """A rejected team or third-party skill of the forgotten name stays rejected: forgetting
    the bank's own copy must not serve it again (its reason and history go)."""
    lock = pins.LockFile(tmp_path)
    digests = {"SKILL.md": "sha256:" + "0" * 64}
    lock.decide(NAME, "accepted", folder="/v", digests=digests, by="bob")
    lock.decide(NAME, "rejected", folder="/v", digests={"SKILL.md": "sha256:" + "1" * 64},
                by="bob", reason="it mails the vault path out")
    lock.forget(NAME)
    entry = lock.get(NAME)
    assert entry["decision"] == "rejected" and "reason" not in entry and "history" not in entry
    lock.decide("other", "accepted", folder="/v", digests=digests, by="bob")
    lock.forget("other")
    assert lock.get("other") is None
