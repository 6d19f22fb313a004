"""The files of a skill draft on disk: private while pending, shared once adopted.

A pending draft is made of its source experiences' text (tasks, lessons, feedback, and any
secret a run recorded), so it is as private as the journal it was drawn from: its folders 0700
and its SKILL.md 0600, whatever the umask. Drafts were written 0644 in 0755 folders beside a
0600 journal holding the same text, so in a root the user made (`mkdir`, 0755) every local
account read them (hunt-drafts #5, session 26). Once adopted, a skill is shared like any other
(`stage_skill` gives it the modes `mkdir` and `open()` give), so adopting is where that changes.

`stage_skill` also builds the adopted folder of a revision of a read-only skill (bundled, or a
`--skills-dir`): the bank's copy shadows it for every caller, so it takes the skill's files too
(scripts/, references/, assets/), as `skills copy` does; it was made of the draft folder alone,
and a script the skill's text tells the agent to run was gone (hunt-drafts #8, session 26).
`copy_served` does the same for git mode's proposal of such a revision (hunt-git #0, session 27).
"""

from __future__ import annotations

import difflib
import os
import shutil
import stat
from pathlib import Path
from typing import Any

from skillbank.errors import InvalidInputError
from skillbank.fsutil import atomic_write, safe_join
from skillbank.memories.skills.folder_files import SKILL_FILE, served_files

PRIVATE_FOLDER = 0o700
PRIVATE_FILE = 0o600


def private_folder(folder: Path) -> Path:
    """Make `folder` (and a missing parent up to an existing one) 0700; one that exists with
    bits for others (written by an earlier version) loses them. Returns `folder`."""
    missing = []
    here = folder
    while not here.exists():
        missing.append(here)
        here = here.parent
    for path in reversed(missing):
        try:
            path.mkdir(mode=PRIVATE_FOLDER)
        except FileExistsError:  # another process made it meanwhile
            pass
    bits = stat.S_IMODE(folder.stat().st_mode)
    if bits & 0o077:
        try:
            os.chmod(folder, bits & PRIVATE_FOLDER)
        except PermissionError:  # another account's folder: its owner decides
            pass
    return folder


def tighten(drafts_root: Path) -> None:
    """Take every bit for others off what `drafts_root` holds (folders 0700 at most, files
    0600): drafts an earlier version wrote 0755/0644 stayed readable by every local account
    until each was written again (review, session 26). Links are left alone; a file of
    another account is its owner's to change."""
    for folder, folders, files in os.walk(drafts_root):
        for name, most in [(".", PRIVATE_FOLDER), *((f, PRIVATE_FILE) for f in files)]:
            path = Path(folder, name)
            try:
                if path.is_symlink():
                    continue
                bits = stat.S_IMODE(path.stat().st_mode)
                if bits & 0o077:
                    os.chmod(path, bits & most)
            except OSError:
                continue


def write_private(drafts_root: Path, path: Path, text: str) -> None:
    """Write a pending draft's file under `drafts_root` 0600, every folder from `drafts_root`
    down to it 0700; also over a 0644 file (`mode` sets the bits outright: a replaced file
    would otherwise keep its old mode)."""
    folder = private_folder(drafts_root)
    for part in path.parent.relative_to(drafts_root).parts:
        folder = private_folder(folder / part)
    atomic_write(path, text, mode=PRIVATE_FILE)


def stage_skill(draft_folder: Path, staged: Path, text: str, *, skip: frozenset[str],
                revised_folder: Path | None = None) -> None:
    """Build, in the new folder `staged`, the skill a draft becomes when adopted.

    First the files of `revised_folder` (the read-only skill a revision shadows), those a read
    of it serves (`served_files`, not its own: no hard links, no links out), then the files a
    person added to the draft folder (not `skip`, not SKILL.md), then `text` as SKILL.md. The
    folder and SKILL.md are new, so they get the modes of any folder and file made here (the
    draft's 0700 and 0600 are not copied); copied files keep their permission bits as far as
    the umask allows (a script stays executable)."""
    staged.mkdir()
    if revised_folder is not None:
        copy_served(revised_folder, staged)
    for entry in sorted(draft_folder.iterdir()):
        if entry.name in skip or entry.name == SKILL_FILE:
            continue
        if entry.is_dir() and not entry.is_symlink():
            shutil.copytree(entry, staged / entry.name, dirs_exist_ok=True)
        elif entry.is_dir():  # a link to a folder: what it holds is not the draft's to copy
            raise InvalidInputError(
                f"the draft folder's {entry.name!r} is a link to a folder ({entry.resolve()}); "
                "a skill does not follow links out of its folder: copy the files in, or remove "
                "the link, then adopt again")
        else:
            _copy_file(entry, staged / entry.name)
    atomic_write(staged / SKILL_FILE, text, private=False)


def copy_served(skill_folder: Path, destination: Path) -> None:
    """Copy the files beside a (read-only) skill's SKILL.md that a read of it serves
    (`served_files`, as not the bank's own: no hard links, no links out) into `destination`:
    what a revision adopted over it must carry (here, and in git mode's proposal)."""
    for relative, _ in served_files(skill_folder, own=False):
        _copy_file(skill_folder / relative, safe_join(destination, relative))


def carry_files(library: Any, shadowed: Any, saved: Any, given: dict[str, Any] | None) -> Any:
    """`saved` (the bank's own skill `save` just wrote over the name of the read-only skill
    `shadowed`) with the files a read of `shadowed` served carried over (`copy_served`, as an
    adopted revision and `skills copy` take them), but those `given` as resources. The new copy
    shadows the old one, so a body saying "run scripts/merge.py" was served without it
    (hunt-mcpauthor #6, session 37). A held skill's files (never served, maybe rejected) are
    not carried: they would be served as the bank's own. Called under the library's locks."""
    if shadowed is None or shadowed.held:
        return saved
    source, target = Path(shadowed.path).parent, Path(saved.path).parent
    for relative, _ in served_files(source, own=False):
        if relative not in (given or {}) and not (target / relative).exists():
            _copy_file(source / relative, safe_join(target, relative))
    return library.load(saved.name)


def _copy_file(source: Path, destination: Path) -> None:
    """Copy one file's bytes (a link inside the skill as the file it names) into a new file,
    with the source's permission bits less what the umask takes."""
    destination.parent.mkdir(parents=True, exist_ok=True)
    shutil.copyfile(source, destination)
    made = stat.S_IMODE(os.stat(destination).st_mode)  # 0666 less the umask
    allowed = made | ((made & 0o444) >> 2)  # execute bits follow the read bits the umask left
    wanted = stat.S_IMODE(os.stat(source).st_mode) & allowed
    if wanted != made:
        os.chmod(destination, wanted)


def revision_diff(before: str, after: str, name: str, skill: str, revised: Path | None,
                  root: Path) -> str:
    """Draft `name` (`after`) against `before`, the text of `skill`'s SKILL.md at `revised`,
    headed with that file's path relative to `root` where it is inside it (as written, else
    resolved; nested in a collection too), else whole (a read-only skill served from another
    folder). It read `skills/<skill>/SKILL.md` for a skill kept in `skills/<collection>/`, a
    file that does not exist (hunt-skilllife #2, session 35)."""
    source = f"skills/{skill}/SKILL.md"
    if revised is not None:
        source = str(revised)
        for inner, outer in ((revised, root), (revised.resolve(), root.resolve())):
            try:
                source = inner.relative_to(outer).as_posix()
                break
            except ValueError:
                continue
    return "".join(difflib.unified_diff(before.splitlines(keepends=True),
                                        after.splitlines(keepends=True),
                                        fromfile=source, tofile=f"drafts/{name}/SKILL.md"))
