"""Staging copies of adopt and rename: a `kill -9` mid-copy must not leave text for good.

`adopt` copies a draft into a hidden `<skills>/.adopt-<name>-XXXX/` folder beside the library
and renames it into place (`drafts.SkillDrafts._stage_in`), removing the folder in its own
`finally`. A process killed during the copy never reaches it: the folder stayed, nothing
removed it, and `forget` (of the source experiences or of the skill) did not look there, so the
experiences' text outlived "forget means gone" (hunt-drafts #4, session 26).

`rename` stages the renamed copy the same way, in `.rename-<new>-XXXX/`: killed there, the
whole skill stayed hidden beside the library and outlived `forget` of the skill (hunt-procs #2,
session 28). `restore_version` of a reviewed skill stages its kept copy in `.restore-<name>-XXXX/`
the same way: it copied straight into `skills/<name>/`, and a full disk or a kill mid-copy left a
half skill there that the next sync indexed and served (session 33). Every adopt, rename and
restore stages under the root's write lock, so any staging folder
found while holding it belongs to a process that died: it is removed when the skills are opened
(if the lock is free at once), at every forget, and before the next adopt.
"""

from __future__ import annotations

import errno
import logging
import os
import shutil
import tempfile
from pathlib import Path
from typing import Any

from skillbank.errors import BusyError

log = logging.getLogger("skillbank.skills")

#: The prefix `_stage_in` gives its `tempfile.mkdtemp` folder.
STAGING_PREFIX = ".adopt-"
#: The prefix `SkillAuthoring.rename` gives its.
RENAME_PREFIX = ".rename-"
#: The prefix `SkillTrustAPI.restore_version` gives its.
RESTORE_PREFIX = ".restore-"


def staging_copies(writable_root: Path) -> list[Path]:
    """The adopt, rename and restore staging folders directly in `writable_root` (none when it is
    missing)."""
    try:
        names = [n for n in os.listdir(writable_root)
                 if n.startswith((STAGING_PREFIX, RENAME_PREFIX, RESTORE_PREFIX))]
    except OSError:
        return []
    found = (writable_root / name for name in names)
    return sorted(p for p in found if p.is_dir() and not p.is_symlink())


def remove_staging_copies(writable_root: Path) -> int:
    """Delete every staging folder left by an adopt or rename that did not finish; the number
    removed.

    Call with the root's write lock held (no adopt can be staging meanwhile)."""
    removed = 0
    for folder in staging_copies(writable_root):
        shutil.rmtree(folder, ignore_errors=True)
        if folder.exists():
            log.error("skillbank: could not remove the staging copy %s", folder)
        else:
            removed += 1
    if removed:
        log.warning("skillbank: removed %d staging copies an interrupted adopt or rename left "
                    "in %s",
                    removed, writable_root)
    return removed


def sweep_at_open(writable_root: Path, write_lock: Any) -> int:
    """`remove_staging_copies` when the skills are opened: only if some are there (one
    directory scan) and the write lock is free at once; a busy root is swept by its next
    forget or adopt instead (opening never waits on another process's write)."""
    if not staging_copies(writable_root):
        return 0
    try:
        acquired = write_lock.acquire(timeout=0)  # False: a threading lock another holds
    except BusyError:
        return 0
    except Exception as exc:  # noqa: BLE001 - team mode's database unreachable: not now
        log.debug("skillbank: staging copies left for later: %s", exc)
        return 0
    if acquired is False:
        return 0
    try:
        return remove_staging_copies(writable_root)
    finally:
        write_lock.release()


def move_folder(folder: Path, destination: Path, hidden_prefix: str) -> None:
    """Move `folder` to `destination` (not there yet) by one rename. Where that is another file
    system (a mount under the root), `folder` is first moved out of sight beside itself (a
    `hidden_prefix` folder no sweep removes: until the copy is done it is the only whole copy,
    and a crash leaves it whole), then copied and removed: one that may not be changed is
    refused before anything is copied. `shutil.move`
    copied a skill folder on a read-only `skills/` mount into `.trash`, failed to remove it,
    and left the copy of a skill never deleted, once per try (hunt-disk #3, session 32)."""
    try:
        os.rename(folder, destination)
        return
    except OSError as exc:
        if exc.errno != errno.EXDEV:
            raise
    aside = Path(tempfile.mkdtemp(prefix=f"{hidden_prefix}{folder.name}-", dir=folder.parent))
    try:
        os.rename(folder, aside / folder.name)
    except OSError:
        os.rmdir(aside)
        raise
    try:
        shutil.copytree(aside / folder.name, destination, symlinks=True)
    except BaseException:
        os.rename(aside / folder.name, folder)  # the folder stays as it was
        os.rmdir(aside)
        raise
    shutil.rmtree(aside, ignore_errors=True)  # what it leaves, the next sync sweeps
