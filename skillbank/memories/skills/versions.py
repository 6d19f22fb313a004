"""Earlier versions of a skill, kept as plain files under `<skill>/.versions/`.

Each version is the SKILL.md verbatim as `<stamp>.md` (readable and diffable in git), with an
optional `<stamp>.json` beside it saying why it was kept. The folder is hidden, so the loader,
the resource listing and every client that follows the Agent Skills layout ignore it.
Stamps are UTC times to the microsecond, never below the newest kept one (`_new_stamp`), so
names sort in the order versions were kept even after the clock stepped back.
At most `MAX_KEPT` versions are kept per skill (the oldest go first): every update and save
keeps one, and an agent saving in a loop must not fill the disk.
"""

from __future__ import annotations

import contextlib
import json
from datetime import datetime, timedelta, timezone
from pathlib import Path

from skillbank.errors import InvalidInputError, NotFoundError
from skillbank.fsutil import atomic_write
from skillbank.memories.skills.skill_file import SkillDocument, parse_skill_text, render_skill
from skillbank.records import SkillVersion

VERSIONS_DIR = ".versions"
_STAMP = "%Y%m%dT%H%M%S%fZ"
#: Versions kept per skill; the oldest beyond it are removed when a new one is kept.
MAX_KEPT = 50


def _new_stamp(folder: Path) -> str:
    """Now, or just after the newest kept version when the clock says earlier.

    Versions are ordered (and the oldest pruned) by stamp: one kept while the clock was a day
    behind got the oldest stamp, so at `MAX_KEPT` the text a save had just replaced was deleted
    at once, and `history()[0]` ("newest") was another one (hunt-time #5, session 29)."""
    now = datetime.now(timezone.utc)
    newest = _newest_kept(folder)
    if newest is not None and now <= newest:
        try:
            now = newest + timedelta(microseconds=1)
        except OverflowError:  # a hand-made stamp at the end of time: the `-n` below orders it
            now = newest
    stamp = now.strftime(_STAMP)
    candidate, n = stamp, 1
    while (folder / f"{candidate}.md").exists():
        candidate = f"{stamp}-{n}"
        n += 1
    return candidate


def _newest_kept(folder: Path) -> datetime | None:
    """The stamp of the newest kept version (None: none kept, or no name is a stamp)."""
    stamps = [_stamp_time(p.stem) for p in folder.glob("*.md")]
    return max((t for t in stamps if t is not None), default=None)


def keep_version(skill_folder: Path, text: str, reason: str, *, prune: bool = True) -> Path:
    """Store `text` (a SKILL.md) as the newest version of the skill in `skill_folder`.

    The version's text is written before its reason, and a write that fails leaves neither (a
    full disk left a stray `.json`). With `prune=False` the oldest beyond `MAX_KEPT` stay until
    the caller's own write has landed (`drop_oldest`): a write refused by a full disk after it
    had pushed the oldest version out lost that version for nothing."""
    folder = skill_folder / VERSIONS_DIR
    folder.mkdir(parents=True, exist_ok=True)
    stamp = _new_stamp(folder)
    path = folder / f"{stamp}.md"
    try:
        atomic_write(path, text)
        atomic_write(folder / f"{stamp}.json", json.dumps({"reason": reason}) + "\n")
    except BaseException:
        for leftover in (path, path.with_suffix(".json")):
            with contextlib.suppress(OSError):
                leftover.unlink()
        raise
    if prune:
        _drop_oldest(folder)
    return path


def drop_oldest(skill_folder: Path) -> None:
    """Remove the oldest kept versions of the skill beyond MAX_KEPT."""
    folder = skill_folder / VERSIONS_DIR
    if folder.is_dir() and not folder.is_symlink():
        _drop_oldest(folder)


def _drop_oldest(folder: Path) -> None:
    """Remove the oldest kept versions beyond MAX_KEPT (their .md and .json)."""
    kept = sorted((p for p in folder.glob("*.md") if p.is_file()), key=_order)
    for old in kept[:max(0, len(kept) - MAX_KEPT)]:
        for path in (old, old.with_suffix(".json")):
            try:
                path.unlink()
            except FileNotFoundError:
                pass


def _order(path: Path) -> tuple[str, int]:
    """Oldest first: by stamp, then by the `-n` a same-microsecond stamp got (as text, "…Z-1.md"
    sorts before "…Z.md")."""
    stamp, _, n = path.stem.partition("-")
    return stamp, int(n) if n.isdigit() else 0


def _stamp_time(stamp: str) -> datetime | None:
    try:
        return datetime.strptime(stamp.split("-")[0], _STAMP).replace(tzinfo=timezone.utc)
    except ValueError:
        return None


def _saved(stamp: str) -> datetime:
    return _stamp_time(stamp) or datetime.fromtimestamp(0, timezone.utc)


def list_versions(name: str, skill_folder: Path) -> list[SkillVersion]:
    """Every kept version, newest first."""
    folder = skill_folder / VERSIONS_DIR
    if not folder.is_dir() or folder.is_symlink():
        return []
    out = []
    for path in sorted(folder.glob("*.md"), key=_order, reverse=True):
        if not path.is_file():
            continue
        reason, description = "", ""
        try:
            reason = str(json.loads(path.with_suffix(".json").read_text()).get("reason", ""))
        except (OSError, ValueError, AttributeError):
            pass
        try:
            doc, _ = parse_skill_text(path.read_text(encoding="utf-8"), path=str(path))
            description = doc.description if doc is not None else ""
        except (OSError, UnicodeDecodeError):
            pass
        out.append(SkillVersion(name=name, version=path.stem, path=str(path),
                                saved=_saved(path.stem), reason=reason, description=description))
    return out


def read_version(name: str, skill_folder: Path, version: str) -> str:
    """The text of one kept version; refuses anything that is not a listed version."""
    if not isinstance(version, str) or not version:
        raise InvalidInputError("version must be a version id as listed by history()")
    for kept in list_versions(name, skill_folder):
        if kept.version == version:
            return Path(kept.path).read_text(encoding="utf-8")
    raise NotFoundError(f"skill {name!r} has no version {version!r}; history() lists them")


def under_name(text: str, name: str) -> str:
    """A kept version's text as the skill `name` is now. A version keeps the `name:` it was
    written with, so after `skills rename` history listed every version under the new name and
    restore refused each ("name ... does not match its folder"; hunt-drafts #10, session 26):
    the version is restored under the skill's current name. Text that does not parse, or
    already has that name, is returned as it is (restore's check then says what is wrong)."""
    doc, _ = parse_skill_text(text)
    if doc is None or doc.frontmatter.get("name") == name:
        return text
    return render_skill(SkillDocument({**doc.frontmatter, "name": name}, doc.body))
