"""Draft folders that cannot be read as drafts, each named with why.

A draft is a folder `<root>/drafts/<name>/` holding its SKILL.md and its record, `.draft.json`.
`drafts()` leaves out a folder whose record does not parse (a hand edit, a half-written copy),
names another draft, or has no SKILL.md beside it: the draft vanished from the browser and from
`skillbank skills drafts` without a word, its folder still there (hunt-ui #8, session 27). As
for guideline files (`guidelines.problems()`), a reviewer is now told which folder and why.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Callable

from pydantic import ValidationError

from skillbank.errors import InvalidInputError
from skillbank.fsutil import check_slug
from skillbank.memories.skills.folder_files import SKILL_FILE
from skillbank.records import Finding, SkillDraft

META_FILE = ".draft.json"
#: What every finding ends with: how a reviewer gets the draft back, or rid of it.
WHAT_TO_DO = ("; it is left out of the pending drafts until the file is fixed (or the folder "
              "is deleted)")


def unreadable_drafts(drafts_root: Path,
                      may_see: Callable[[SkillDraft | None], bool]) -> list[Finding]:
    """A finding for each draft folder under `drafts_root` that `drafts()` leaves out and
    `may_see` lets the caller see: by its record's namespaces when the record reads (a folder's
    name is a draft's name, drawn from its namespaces' runs), else (None) the bank's. Every
    damaged folder went to whoever reviews the bank's namespace, another namespace's private
    draft name included, and none to that namespace's own reviewer (review2 #5, session 27)."""
    try:
        folders = sorted(drafts_root.iterdir())
    except OSError:  # no drafts folder yet
        return []
    found = []
    for folder in folders:
        if folder.name.startswith(".") or folder.is_symlink() or not folder.is_dir():
            continue  # the ledger, closed drafts, staging copies: not drafts
        why, record = _why_unreadable(folder)
        if why and may_see(record):
            found.append(Finding(severity="error", code="draft-unreadable",
                                 message=f"draft {folder.name!r}: {why}{WHAT_TO_DO}",
                                 path=str(folder)))
    return found


def _why_unreadable(folder: Path) -> tuple[str | None, SkillDraft | None]:
    """(why the folder is no draft, or None; its record when that reads)."""
    meta = folder / META_FILE
    try:
        data = json.loads(meta.read_text(encoding="utf-8"))
        draft = SkillDraft.model_validate(data)
    except FileNotFoundError:
        return f"{META_FILE} is missing", None
    except (OSError, UnicodeDecodeError) as exc:
        return f"{META_FILE} cannot be read ({exc})", None
    except json.JSONDecodeError as exc:
        return f"{META_FILE} is not valid JSON ({exc})", None
    except ValidationError as exc:
        first = exc.errors()[0] if exc.errors() else {}
        where = ".".join(str(p) for p in first.get("loc", ())) or "the record"
        return f"{META_FILE} is not a draft record ({where}: {first.get('msg', exc)})", None
    if draft.name != folder.name:
        return (f"{META_FILE} names the draft {draft.name!r}, not its folder's name (a copied "
                "or renamed folder)"), draft
    try:
        check_slug(str(draft.skill), "skill name")
    except InvalidInputError:  # `drafts()` drops it: adopting would write that folder
        return f"{META_FILE} names the skill {str(draft.skill)[:80]!r}, not a skill name", draft
    if not (folder / SKILL_FILE).is_file():
        return f"{SKILL_FILE} is missing", draft
    return None, draft
