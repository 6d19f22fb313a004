"""The folders of the bank's own skills: where a skill it has lives, where a new one goes.

A skill in the bank's library sits at `skills/<name>/`, or nested in a collection
(`skills/<collection>/plugins/x/skills/<name>/`, as the curated corpora are laid out), in a
folder that may even be named otherwise than its `name:`. So a skill the bank *has* is found
by its indexed SKILL.md (`own_skill_folder`), as `update` finds it; only a *new* skill's folder
is built from its name (`new_skill_folder`).

Why (hunt-corpus #1, session 30): history and restore looked in `skills/<name>/` alone, so the
versions `update` kept beside a nested skill were never listed nor restorable, and a folder of
that name holding another skill had its versions listed, and its SKILL.md restored over, as
this skill's; an adopted revision of a nested skill became a second copy at `skills/<name>/`.
"""

from __future__ import annotations

import shlex
from pathlib import Path
from typing import Any

from skillbank.errors import InvalidInputError
from skillbank.fsutil import UnsafePathError, check_slug, safe_join
from skillbank.memories.skills.folder_files import SKILL_FILE
from skillbank.memories.skills.skill_file import SkillDocument, read_skill_file, validate_name
from skillbank.skill_ids import same_name


def new_skill_folder(writable_root: Path, name: str) -> Path:
    """Where a new skill `name` goes: `skills/<name>/` (a valid name, or refused)."""
    check_slug(name, "skill name")
    errors = [f for f in validate_name(name) if f.severity == "error"]
    if errors:
        raise InvalidInputError("; ".join(f.message for f in errors), errors)
    return safe_join(writable_root, name)


def own_skill_folder(index: Any, writable_root: Path, name: str) -> Path | None:
    """The folder of the bank's own skill `name`: where its indexed SKILL.md is. A name the
    index does not hold as the bank's own (its SKILL.md does not parse, or only a read-only
    skill has it) falls back to `skills/<name>/`, unless that folder's SKILL.md names another
    skill: then None, no folder is this skill's (`_claim_folder` refuses writing it too)."""
    meta = index.metadata(name)
    if meta is None:
        indexed = same_name(name, index.ids())  # the name in its folder's NFD
        meta = index.metadata(indexed) if indexed is not None else None
    if meta is not None and meta.get("writable") and meta.get("path"):
        folder = Path(str(meta["path"])).parent
        # The index may not have seen folders moved by hand yet (a server without --watch
        # re-checks never): the folder it names may hold another skill by now (review, s30).
        return None if _holds_another(folder, name) else folder
    folder = new_skill_folder(writable_root, name)
    return None if _holds_another(folder, name) else folder


def _holds_another(folder: Path, name: str) -> bool:
    """Whether `folder`'s SKILL.md parses and names a skill other than `name` (one that does
    not parse, or names none, may still be this skill's, half saved: its history restores it)."""
    current = folder / SKILL_FILE
    if not current.is_file() or current.is_symlink():
        return False
    doc, _ = read_skill_file(current)
    found = doc.frontmatter.get("name") if doc is not None else None
    if found is None or str(found) in ("", name):  # `name: 2048` is the skill "2048"
        return False
    return same_name(str(found), [name]) is None


def never_through_link(writable_root: Path, folder: Path) -> Path:
    """`folder`, refused (UnsafePathError) when it is a link or lies outside the root."""
    if (folder.is_symlink() or writable_root not in folder.parents
            or writable_root.resolve() not in folder.resolve().parents):
        raise UnsafePathError(f"skill folder {folder.name!r} is a link out of the library "
                              "(or outside it); it is never written through")
    return folder


def mismatch_fix(findings: list[Any], doc: SkillDocument, folder: Path, *,
                 taken: bool = False) -> str:
    """How to fix a name that does not match its folder (the refusal alone left users stuck).
    `taken`: another skill has the folder's name, so renaming to it is refused and is no fix
    (hunt-corpus #2, session 30)."""
    if not any(f.code == "name-mismatch" for f in findings):
        return ""
    if taken:
        return (f" (to fix it: move the folder to one named after the skill, or edit name: in "
                f"{folder / SKILL_FILE}; {folder.name!r} is another skill's name, so "
                "`skillbank skills rename` to it is refused)")
    return (f" (to fix it: skillbank skills rename {shlex.quote(doc.name)} "
            f"{shlex.quote(folder.name)}, or edit name: in {folder / SKILL_FILE})")
