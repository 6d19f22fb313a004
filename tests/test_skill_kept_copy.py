"""The copy an accept keeps of a skill's version is that version, and a restore checks it.

hunt-skillteam #1, session 32: `skills review NAME accept --version V` digested the folder
once, pinned V, then copied whatever was on disk into `<root>/skill-versions/NAME/V/`: a
teammate's edit landing between the two was kept as "V" (once a half-written, empty script),
and `skills restore NAME@V` made those bytes the bank's own, saying it restored V. The edit
lands inside the accept with no timing (`edit_in_accept.py`), in process and in an owner
process a client accepts through. Before the fix the kept `scripts/totals.py` held the edit
while `skills.lock` pinned the file without it, and a kept copy changed on disk was restored.
"""

from __future__ import annotations

import contextlib
import hashlib
import json
from pathlib import Path

import pytest

import edit_in_accept
from owner_client import client_bank, owner_process
from skillbank.errors import InvalidInputError
from test_skill_trust import open_bank

NAME = "csv-report"
SCRIPT = Path("scripts") / "totals.py"


@contextlib.contextmanager
def accepting_bank(tmp_path: Path, vendor: Path, remote: bool, order: Path):
    """A bank with `vendor` as a third-party root and the edit hook installed where the accept
    runs: here, or in the owner process a client bank goes through."""
    root = tmp_path / "root"
    if remote:
        root.mkdir()
        preamble = f"import edit_in_accept; edit_in_accept.install({str(order)!r})"
        with owner_process(root, (vendor,), preamble=preamble), client_bank(root) as bank:
            yield bank
        return
    edit_in_accept.install(order)
    bank = open_bank(root, [vendor])
    try:
        yield bank
    finally:
        bank.close()
        edit_in_accept.uninstall()


@pytest.fixture
def vendor(tmp_path) -> Path:
    """A third-party folder with one skill and a script."""
    folder = tmp_path / "vendor" / NAME
    (folder / "scripts").mkdir(parents=True)
    (folder / "SKILL.md").write_text(f"---\nname: {NAME}\ndescription: Summarise a CSV file "
                                     "into a short report with totals.\n---\n# Steps\n\n"
                                     "Read the CSV, total each column.\n")
    (folder / SCRIPT).write_text("print('totals')\n")
    return folder.parent


def lock_entry(root: Path) -> dict | None:
    path = root / "skills.lock"
    return json.loads(path.read_text())["skills"].get(NAME) if path.exists() else None


def sha(path: Path) -> str:
    return "sha256:" + hashlib.sha256(path.read_bytes()).hexdigest()


@pytest.mark.parametrize("remote", [False, True], ids=["in-process", "client-of-owner"])
def test_an_edit_during_an_accept_of_the_version_read_pins_nothing(tmp_path, vendor, remote):
    """The reviewer named V; the files changed while the accept copied them: refused, nothing
    pinned, no copy kept (before: accepted, V pinned, the edited bytes kept as V)."""
    order = tmp_path / "edit.json"
    with accepting_bank(tmp_path, vendor, remote, order) as bank:
        read = bank.skills.skill_versions(NAME)[0].version
        edit_in_accept.order_edit(order, vendor / NAME / SCRIPT, "print('edited')\n")
        with pytest.raises(InvalidInputError, match="changed while accepting"):
            bank.skills.review_skill(NAME, "accept", version=read)
        assert not order.exists()  # the edit did land inside the accept
        assert lock_entry(tmp_path / "root") is None
        kept = tmp_path / "root" / "skill-versions" / NAME
        assert not kept.exists() or not any(kept.iterdir())


@pytest.mark.parametrize("remote", [False, True], ids=["in-process", "client-of-owner"])
def test_an_accept_without_a_version_keeps_a_copy_of_the_version_it_pins(tmp_path, vendor,
                                                                          remote):
    """No version named: the accept takes the files again and pins what it kept (before: the
    pin was the files before the edit, the kept copy the files after it)."""
    order = tmp_path / "edit.json"
    with accepting_bank(tmp_path, vendor, remote, order) as bank:
        edit_in_accept.order_edit(order, vendor / NAME / SCRIPT, "print('edited')\n")
        assert bank.skills.review_skill(NAME, "accept").review == "accepted"
        assert not order.exists()
        entry = lock_entry(tmp_path / "root")
        kept = tmp_path / "root" / "skill-versions" / NAME / entry["version"]
        for relative, digest in entry["files"].items():
            if not relative.startswith("/"):
                assert sha(kept / relative) == digest, relative
        assert "edited" in (kept / SCRIPT).read_text()  # the version pinned is the edited one


@pytest.mark.parametrize("remote", [False, True], ids=["in-process", "client-of-owner"])
def test_restore_refuses_a_kept_copy_that_is_not_the_pinned_version(tmp_path, vendor, remote):
    """A kept copy whose file is not the one pinned is not restored, and the file is named
    (before: copied into the bank's own library and reported restored)."""
    order = tmp_path / "edit.json"
    with accepting_bank(tmp_path, vendor, remote, order) as bank:
        first = bank.skills.review_skill(NAME, "accept").version
        (vendor / NAME / SCRIPT).write_text("print('second')\n")
        bank.skills.review_skill(NAME, "accept")
        kept = tmp_path / "root" / "skill-versions" / NAME / first
        (kept / SCRIPT).write_text("")  # as a copy taken mid-write held it
        with pytest.raises(InvalidInputError, match="scripts/totals.py"):
            bank.skills.restore_version(NAME, first)
        assert not (tmp_path / "root" / "skills" / NAME).exists()
        (kept / SCRIPT).write_text("print('totals')\n")  # the true copy restores
        bank.skills.restore_version(NAME, first)
        assert (tmp_path / "root" / "skills" / NAME / SCRIPT).read_text() == "print('totals')\n"


@pytest.mark.parametrize("remote", [False, True], ids=["in-process", "client-of-owner"])
def test_a_version_the_skill_never_had_is_unknown_not_changed(tmp_path, vendor, remote):
    """hunt-skillteam #5, session 32: `accept --version bogus123` answered "its files changed;
    read it again" though nothing had changed: a version never among the skill's is unknown,
    and the current one is named. A version it did have still says its files changed."""
    with accepting_bank(tmp_path, vendor, remote, tmp_path / "edit.json") as bank:
        current = bank.skills.skill_versions(NAME)[0].version
        for bogus in ("bogus123", "0123456789abcdef"):
            with pytest.raises(InvalidInputError, match="unknown version") as refused:
                bank.skills.review_skill(NAME, "accept", version=bogus)
            assert current in str(refused.value) and "files changed" not in str(refused.value)
        (vendor / NAME / SCRIPT).write_text("print('changed')\n")
        with pytest.raises(InvalidInputError, match="its files changed"):
            bank.skills.review_skill(NAME, "accept", version=current)
        assert lock_entry(tmp_path / "root") is None
