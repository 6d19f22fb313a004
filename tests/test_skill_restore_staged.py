"""Restoring a reviewed skill's kept version is staged beside the library, then renamed in.

Session 33 (fix-skills #2): `skills restore NAME@VERSION` of a team or third-party skill copied
the kept version straight into `skills/NAME/` (a check, then `copytree`): a full disk or a kill
mid-copy left a half skill folder there, which the next sync indexed and served as the bank's
own copy, shadowing the reviewed skill. The disk fills up inside the copy (`shutil.copyfile`
refuses the script while a flag file exists), in process and in an owner process a client
restores through. Before the fix `skills/csv-report/` held the SKILL.md without its script and
the sync served it.
"""

from __future__ import annotations

import contextlib
import os
from pathlib import Path

import pytest

from owner_client import client_bank, owner_process
from test_skill_trust import open_bank

NAME = "csv-report"
SCRIPT = Path("scripts") / "totals.py"

#: Runs where the restore runs: the disk is "full" for the script while `flag` exists.
FULL_DISK = """
import errno, os, shutil
_copyfile = shutil.copyfile
def _full(src, dst, *args, **kwargs):
    if os.path.exists({flag!r}) and os.fspath(src).endswith('totals.py'):
        raise OSError(errno.ENOSPC, 'No space left on device', str(dst))
    return _copyfile(src, dst, *args, **kwargs)
shutil.copyfile = _full
"""


@contextlib.contextmanager
def restoring_bank(tmp_path: Path, vendor: Path, remote: bool, flag: Path):
    root = tmp_path / "root"
    if remote:
        root.mkdir(exist_ok=True)
        with owner_process(root, (vendor,), preamble=FULL_DISK.format(flag=str(flag))), \
                client_bank(root) as bank:
            yield bank
        return
    import shutil

    copyfile = shutil.copyfile
    exec(FULL_DISK.format(flag=str(flag)), {})  # noqa: S102 - the same hook as the owner's
    bank = open_bank(root, [vendor])
    try:
        yield bank
    finally:
        bank.close()
        shutil.copyfile = copyfile


@pytest.fixture
def vendor(tmp_path) -> Path:
    folder = tmp_path / "vendor" / NAME
    (folder / "scripts").mkdir(parents=True)
    (folder / "SKILL.md").write_text(f"---\nname: {NAME}\ndescription: Summarise a CSV file "
                                     "into a short report with totals.\n---\n# Steps\n\n"
                                     "Read the CSV, total each column.\n")
    (folder / SCRIPT).write_text("print('totals')\n")
    return folder.parent


@pytest.mark.parametrize("remote", [False, True], ids=["in-process", "client-of-owner"])
def test_a_restore_the_disk_cut_short_leaves_no_half_skill(tmp_path, vendor, remote):
    """The copy fails mid-way: nothing in `skills/` (no half folder, no staging copy), the
    reviewed skill is still the one served after a sync; with room again the restore lands
    whole (before: `skills/csv-report/SKILL.md` without its script, served by the sync)."""
    flag = tmp_path / "disk-full"
    skills = tmp_path / "root" / "skills"
    with restoring_bank(tmp_path, vendor, remote, flag) as bank:
        version = bank.skills.review_skill(NAME, "accept").version
        flag.touch()
        with pytest.raises(Exception, match="No space left"):
            bank.skills.restore_version(NAME, version)
        assert not skills.is_dir() or os.listdir(skills) == []
        bank.skills.sync()
        assert Path(bank.skills.load(NAME).path).parent == vendor / NAME
        flag.unlink()
        restored = bank.skills.restore_version(NAME, version)
        assert Path(restored.path).parent == skills / NAME
        assert (skills / NAME / SCRIPT).read_text() == "print('totals')\n"
        assert sorted(os.listdir(skills)) == [NAME]


@pytest.mark.parametrize("remote", [False, True], ids=["in-process", "client-of-owner"])
def test_a_restore_killed_mid_copy_is_swept_at_open(tmp_path, vendor, remote):
    """What a restore killed mid-copy left (`skills/.restore-<name>-XXXX/`) is removed when the
    skills are opened, as an adopt's or a rename's: it holds a skill's text, which `forget`
    must not leave behind."""
    left = tmp_path / "root" / "skills" / f".restore-{NAME}-abcd" / NAME
    left.mkdir(parents=True)
    (left / "SKILL.md").write_text((vendor / NAME / "SKILL.md").read_text())
    with restoring_bank(tmp_path, vendor, remote, tmp_path / "disk-full") as bank:
        assert not left.parent.exists()
        assert Path(bank.skills.load(NAME).path).parent == vendor / NAME
