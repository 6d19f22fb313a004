"""Skill files that are there but cannot be read, named as such (never as unknown skills).

Why (hunt-disk #5 and #7, session 29): with a SKILL.md owned by another user, mode 0600,
`skills list` left it out without a word, `skills show/update/delete` said "no skill named
'secret-skill'; search or list the skills to find its name", and `skills new` said "already
exists; change it with update" — a circle with no word of "permission denied". Only `skills
sync` named the file in its report. And an indexed skill whose file became unreadable was
served from the last good copy as if nothing were wrong.

So a name the index does not hold is looked for as a folder of that name under each root: a
SKILL.md there that cannot be read raises `UnreadableError` naming the file and why (a
NotFoundError to callers that route: it cannot be served). `load` of an indexed skill whose
file cannot be read raises it too, rather than serve the cached copy, and `unreadable_files`
lists every such SKILL.md the index does not hold, for `skills list` to name on stderr (as
`guidelines list` names the guideline files it could not read).

`sync_or_report` is the bank's skill sync when the skills folder itself cannot be made (a broken
link where `<root>/skills` should be, hunt-disk #6): reported, not raised, so the bank opens.
"""

from __future__ import annotations

import os
import stat
from pathlib import Path
from typing import Any, Callable

from skillbank.errors import PathBlockedError, UnreadableError
from skillbank.fsutil import safe_join
from skillbank.memories.skills.folder_files import SKILL_FILE
from skillbank.memories.skills.freshness import skill_files
from skillbank.records import Finding, SyncReport


def why_unreadable(path: str | Path) -> str | None:
    """Why the file at `path` cannot be read ("permission denied", "not a regular file");
    None when it can, or when nothing is there (an unknown name stays unknown): no file, or
    its folder replaced by a plain file (ENOTDIR was a "reason", so `load` and `create` said
    "give this user read access" for a skill that is gone; hunt-watch #3, session 33)."""
    try:
        info = os.stat(path)
    except (FileNotFoundError, NotADirectoryError):
        return None
    except OSError as exc:
        return _reason(exc)
    if not stat.S_ISREG(info.st_mode):
        return "not a regular file"
    try:
        with open(path, "rb") as handle:  # a regular file: opening it never blocks
            handle.read(1)
    except OSError as exc:
        return _reason(exc)
    return None


def _reason(exc: OSError) -> str:
    return (exc.strerror or str(exc)).lower()


def unreadable_error(path: str | Path, reason: str) -> UnreadableError:
    return UnreadableError(f"{path} cannot be read ({reason}); the skill is not served until "
                           "it can (give this user read access to the file, or remove it)")


def refuse_unreadable(roots: list[tuple[Path, bool]], name: str, *,
                      loads: bool = False) -> None:
    """Raise `UnreadableError` when a folder `name` under one of `roots` holds a SKILL.md that
    cannot be read; return when there is none (the name is unknown, or readable).

    With `loads` (a read of a name the index does not hold), also when the file is read but
    does not load: too large, not UTF-8, no frontmatter. Its error says why in the sync's words
    (the size and the limit; the byte), where "no skill named" sent an MCP client to search for
    a skill that is there (hunt-mcpcorpus #1, session 38). Writes leave this out: a save over
    such a file in the bank's own folder is how it gets fixed.

    Only a name that is one folder not starting with "." is looked for: one a sync's walk
    serves and reports. "a/b/c", ".secret" or "ok-skill/references" reached here and told any
    caller, an untrusted MCP client too, whether SKILL.md files exist in hidden or deep folders
    and their size or encoding, with a false "sync reports every such file" (review 4 #3,
    session 38): they are unknown names."""
    if not served_name(name):
        return
    for root, _ in roots:
        try:
            path = safe_join(root, name) / SKILL_FILE
        except (ValueError, TypeError):  # not a folder name at all: nothing to look for
            return
        reason = why_unreadable(path)
        if reason is not None:
            raise unreadable_error(path, reason)
        if loads:
            refuse_unloadable(path)


def served_name(name: str) -> bool:
    """Whether `name` can be a skill folder directly under a root that a sync's walk serves:
    one path part, not hidden (the walk skips folders whose name starts with ".")."""
    return isinstance(name, str) and bool(name) and not name.startswith(".") \
        and "/" not in name and "\\" not in name


def own_unloadable(roots: list[tuple[Path, bool]], name: str) -> Path | None:
    """The SKILL.md of folder `name` in the bank's own (writable) root when it is there,
    readable, and does not load (too large, not UTF-8, no frontmatter), so the index does not
    hold it; else None. `update` (a whole new text) and `delete` fix or remove it: both were
    refused with "fix the file" (review 4 #4, session 38)."""
    from skillbank.memories.skills.skill_file import read_skill_file

    if not served_name(name):
        return None
    for root, writable in roots:
        path = root / name / SKILL_FILE
        try:
            there = writable and path.is_file() and why_unreadable(path) is None
        except (OSError, ValueError):  # no file name at all (too long, a NUL): unknown
            return None
        if there:
            return path if read_skill_file(path)[0] is None else None
    return None


def own_unloadable_skill(library: Any, name: str) -> Any:
    """The summary `delete` works on for a name the index does not hold whose SKILL.md in the
    bank's own folder does not load (`own_unloadable`; no author can be read, so removing it
    needs the reviewer role); None otherwise."""
    from skillbank.records import Skill

    path = None if name in library else own_unloadable(library.roots, name)
    return None if path is None else Skill(name=name, description="", path=str(path),
                                           root=str(library.writable_root), writable=True)


def replace_unloadable(library: Any, name: str, description: str | None, body: str | None,
                       frontmatter: dict[str, Any] | None,
                       resources: dict[str, str | bytes] | None) -> Any:
    """`update` of a name whose SKILL.md in the bank's own folder does not load (the index
    does not hold it): a whole new text (a description and a body) is written over it, the
    file kept in the trash first (`_claim_folder`), as `save` does; a part alone cannot be
    built on a file that cannot be read: refused, saying how to fix it. None when the name is
    not such a file (the update goes on as usual)."""
    from skillbank.errors import InvalidInputError
    from skillbank.memories.skills.authoring import check_may_change

    path = None if name in library else own_unloadable(library.roots, name)
    if path is None:
        return None
    if description is None or body is None:
        raise InvalidInputError(
            f"skill {name!r} was not changed: its SKILL.md at {path} does not load, so nothing "
            "of it can be kept; give both a description and a body to write it anew (the file "
            "is kept in the trash first), or delete it")
    if getattr(library, "skills_repo", None) is None:  # git mode: a proposal, reviewed
        check_may_change({}, name, "changing")  # no author can be read from it
    return library._write_new(name, description, body, frontmatter, resources, exclusive=False)


def refuse_unloadable(path: Path) -> None:
    """Raise `UnreadableError` when the regular file at `path` does not load as a skill; return
    when nothing is there or it loads (then its name is not the folder's, or it is not served
    for another reason the caller names)."""
    from skillbank.memories.skills.skill_file import read_skill_file

    if not path.is_file():
        return
    doc, findings = read_skill_file(path)
    if doc is not None:
        return
    errors = [f.message for f in findings if f.severity == "error"] or ["it does not load"]
    shown = ""
    if any(f.code == "too-large" for f in findings):
        try:
            shown = f" (it has {path.stat().st_size} bytes)"
        except OSError:  # gone meanwhile: the limit alone
            pass
    raise UnreadableError(f"{'; '.join(errors)}{shown}; the skill is not served until it loads "
                          "(fix the file; `skillbank skills sync` reports every such file)")


def refuse_unread_file(path: str | Path, findings: list[Finding]) -> None:
    """`load` of an indexed skill whose SKILL.md the read just failed on: raise rather than
    serve the last good copy (kept for a file mid-save, not for one that cannot be read)."""
    if any(f.code == "unreadable" for f in findings):
        reason = why_unreadable(path)
        if reason is not None:
            raise unreadable_error(path, reason)


def unlisted_folders(refused: list[tuple[str, OSError]]) -> list[Finding]:
    """A finding for each folder a walk of the skills could not look in (`skill_files`'
    `refused`): a folder of mode 0700 owned by another user hid its skills without a word,
    from `skills list` and `skills sync` alike (hunt-disk, session 29)."""
    return [Finding(severity="error", code="unreadable", path=folder,
                    message=f"{folder} cannot be looked in ({_reason(exc)}); the skills in it "
                            "are not served until it can")
            for folder, exc in refused]


def walk(root: Path, max_depth: int, max_dirs: int,
         findings: list[Finding] | None = None, hidden: bool = False,
         dotted: bool | None = None) -> list[str]:
    """`skill_files` of `root`, each folder it could not look in a finding in `findings`, and
    each SKILL.md that is not a regular file; with `hidden` (a sync), each skill that hides
    others below it (hunt-corpus #5, session 30: both were skipped without a word), and each
    hidden folder holding SKILL.md files the walk skips (hunt-clicorpus #1, session 36), unless
    `dotted` is False (the bank's own folder: its hidden folders are its renames and deletes
    under way, never a person's skills)."""
    refused: list[tuple[str, OSError]] = []
    odd: list[tuple[str, str]] = []
    hides: list[tuple[str, list[str]]] | None = [] if hidden and findings is not None else None
    folders: list[tuple[str, int]] | None = \
        [] if hides is not None and dotted is not False else None
    paths = skill_files(root, max_depth, max_dirs, refused=refused, odd=odd, hidden=hides,
                        dotted=folders)
    if findings is not None:
        findings.extend(unlisted_folders(refused))
        findings.extend(Finding(severity="error", code="unreadable", path=path,
                                message=f"{path} is not a regular file ({what}); the skill in "
                                        "its folder is not served until it is one")
                        for path, what in odd)
        findings.extend(hiding(path, below) for path, below in hides or [])
        findings.extend(hidden_folder(path, count) for path, count in folders or [])
    return paths


def declared_names(root: Path, max_depth: int, max_dirs: int) -> set[str]:
    """The skill names the SKILL.md files under `root` declare, walked as a sync walks it
    (the same limits, the same skipped files): what a folder brings to the index, so a command
    that adds or removes it credits it with its own skills and not others the same sync
    indexed (review 2, session 30)."""
    from skillbank.memories.skills.skill_file import read_skill_file

    names = set()
    for path in skill_files(root, max_depth, max_dirs):
        doc, _ = read_skill_file(path)
        if doc is not None and doc.name:
            names.add(doc.name)
    return names


def hiding(path: str, below: list[str]) -> Finding:
    """A skill whose folder holds more SKILL.md files below it: they are its resources, not
    skills, so none of them is served (a SKILL.md dropped in a collection's folder took the
    collection's skills out of the index, named only as "removed")."""
    names = [os.path.basename(os.path.dirname(p)) for p in below]
    shown = ", ".join(names[:5]) + (f", … ({len(names) - 5} more)" if len(names) > 5 else "")
    return Finding(severity="warning", code="hidden-skills", path=path,
                   message=f"hides {len(below)} SKILL.md files in the folders below it, which are "
                           f"not served ({shown}): a skill's subfolders are its resources; if "
                           "they are skills of their own, move them out of its folder (or this "
                           "SKILL.md away)")


def hidden_folder(path: str, count: int) -> Finding:
    """A hidden folder (its name starts with '.') holding SKILL.md files: the walk skips such
    folders (a checkout's `.git`, an editor's settings), so its skills are not served; its own
    path as a skill folder is how to include them (hunt-clicorpus #1, session 36)."""
    return Finding(severity="warning", code="hidden-folder", path=path,
                   message=f"{count} SKILL.md files here are not indexed: folders whose name "
                           "starts with '.' are skipped; give this folder as --skills-dir (or "
                           "`skillbank config add-skills-dir`) to index them")


def sync_or_report(library: Callable[[], Any], asked: bool = True) -> SyncReport:
    """`library().sync()`, or when the skills folder cannot be made (a broken link stands where
    it must be), a report naming why: `Skillbank.open` syncs every memory, and one dangling
    `<root>/skills` link kept the bank from opening at all, experiences and guidelines
    included (hunt-disk #6, session 29). Each skills call then raises the same clear error."""
    try:
        skills = library()
    except PathBlockedError as exc:
        report = SyncReport()
        report.findings.append(Finding(severity="error", code="skills-folder", message=str(exc)))
        return report
    return skills.sync(asked=asked)


class UnreadableFiles:
    """The library's `unreadable_files` (a mixin of `SkillLibrary`)."""

    roots: list[tuple[Path, bool]]
    index: Any
    max_depth: int
    max_dirs: int

    def unreadable_files(self) -> list[Finding]:
        """Every SKILL.md under the roots that is not in the index because it cannot be read,
        and every folder that could not be looked in (its skills are not found: a folder of
        mode 0700 owned by another user hid them without a word), each with its path and why
        (`skills list` names them on stderr)."""
        indexed = {str((self.index.metadata(item) or {}).get("path", ""))
                   for item in self.index.ids()}
        found = []
        for root, _ in self.roots:
            for path in walk(root, self.max_depth, self.max_dirs, found):
                if path in indexed:
                    continue
                reason = why_unreadable(path)
                if reason is not None:
                    found.append(Finding(severity="error", code="unreadable", path=path,
                                         message=f"{path} cannot be read ({reason})"))
        return found

    def hidden_folders(self) -> list[Finding]:
        """The hidden folders under the roots that hold SKILL.md files (`hidden_folder`): an
        empty `skills list` says why rather than only "add roots" (hunt-clicorpus #1)."""
        found: list[Finding] = []
        for root, writable in self.roots:
            walk(root, self.max_depth, self.max_dirs, found, hidden=True, dotted=not writable)
        return [f for f in found if f.code == "hidden-folder"]
