"""Writing skills: create, update, save, rename and delete, with the library's integrity rules.

Kept apart from search and sync (library.py) because writes have their own invariants:

* a name from a SKILL.md's frontmatter never becomes a path (trash paths come from folders);
* a link out of the library is never written through (create, update, save *and* rename);
* a folder never ends up holding another skill's SKILL.md — `save` refuses, `rename` builds
  the renamed copy aside and swaps it in with one rename, so a crash cannot leave that state;
* writes and sync are serialised (the library's sync lock, then the root's write lock), so the
  watcher's sync cannot drop a skill being written, and a write always finds what it wrote.

`SkillAuthoring` is a mixin of `SkillLibrary`; it relies on the library's `load`, `_summary`,
`_index_one`, `index`, `writable_root`, `write_lock` and `_sync_lock`.
"""

from __future__ import annotations

import contextlib
import os
import shutil
import stat as stat_module
import tempfile
import time
from pathlib import Path
from typing import TYPE_CHECKING, Any

from skillbank.audit import note
from skillbank import scope as scopes
from skillbank.errors import (AlreadyExistsError, InvalidInputError, NotFoundError,
                              PermissionDeniedError, ReadOnlyError, UnreadableError)
from skillbank.fsutil import UnsafePathError, atomic_write, check_text, safe_join
from skillbank.forgetting import erase_from_chroma
from skillbank.memories.skills import checks, draft_files, last_good
from skillbank.memories.skills.folder_files import SKILL_FILE
from skillbank.memories.skills.skill_file import (MAX_SKILL_BYTES, SkillDocument,
                                                  parse_skill_text, read_skill_file,
                                                  render_skill, validate_skill)
from skillbank.memories.skills.own_folders import (mismatch_fix, never_through_link,
                                                   new_skill_folder, own_skill_folder)
from skillbank.memories.skills.unreadable import (own_unloadable_skill, refuse_unreadable,
                                                  replace_unloadable)
from skillbank.memories.skills.write_outage import index_written, not_saved
from skillbank.memories.skills.versions import drop_oldest, keep_version
from skillbank.memories.skills.staging import RENAME_PREFIX, move_folder
from skillbank.records import Skill

if TYPE_CHECKING:
    import threading

    from skillbank.index import HybridIndex  # noqa: F401 - for the annotations below

MAX_RESOURCE_BYTES = 1 << 20
#: Who wrote a skill through skillbank: a key of the SKILL.md `metadata` map (the Agent Skills
#: spec's place for properties it does not define: string keys to string values).
AUTHOR_KEY = "skillbank-author"


def author_of(frontmatter: dict[str, Any]) -> str | None:
    """The principal that wrote a skill through skillbank (None: written by hand or elsewhere)."""
    metadata = frontmatter.get("metadata")
    author = metadata.get(AUTHOR_KEY) if isinstance(metadata, dict) else None
    return author if isinstance(author, str) and author else None


def _with_author(frontmatter: dict[str, Any], author: str | None) -> dict[str, Any]:
    """`frontmatter` whose metadata names `author` (a caller cannot name someone else)."""
    out = dict(frontmatter)
    metadata = out.get("metadata")
    if metadata is None:
        metadata = {}
    if not isinstance(metadata, dict):
        return out  # a hand-written non-map: left as it is (validation reports it)
    metadata = {k: v for k, v in metadata.items() if k != AUTHOR_KEY}
    if author:
        metadata[AUTHOR_KEY] = author
    if metadata:
        out["metadata"] = metadata
    else:
        out.pop("metadata", None)
    return out


def text_with_author(text: str, author: str) -> str | None:
    """`text` (a SKILL.md) whose frontmatter names `author`, with one line added or changed and
    nothing else touched; None where that cannot be done safely (the caller renders instead).

    Adopt rendered a person's edited draft again to add the author: comments and quoting went,
    and `version: 1.10` was served as `1.1` (review of session 28). The result is parsed back
    and must equal `_with_author` of the original frontmatter, or None is returned."""
    from skillbank.memories.skills.skill_file import SkillDocument, parse_skill_text, render_skill

    doc = parse_skill_text(text)[0]
    if doc is None or not isinstance(doc.frontmatter.get("metadata", {}), dict):
        return None
    lines = text.splitlines(keepends=True)
    if not lines or lines[0].rstrip("\r\n").strip() != "---":
        return None
    end = next((i for i in range(1, len(lines)) if lines[i].rstrip("\r\n").strip() == "---"),
               None)
    if end is None:
        return None
    newline = "\r\n" if lines[0].endswith("\r\n") else "\n"
    # The line as `render_skill` writes it, so either path gives the same bytes for it.
    entry = render_skill(SkillDocument({AUTHOR_KEY: author}, "")).splitlines()[1] + newline
    top = [i for i in range(1, end) if lines[i].startswith("metadata:")]
    if "metadata" not in doc.frontmatter:
        lines[end:end] = [f"metadata:{newline}", "  " + entry]
    elif len(top) == 1 and not lines[top[0]][len("metadata:"):].strip():
        inner = [i for i in range(top[0] + 1, end) if lines[i].strip()
                 and not lines[i].lstrip().startswith("#")]
        indent = "  "
        if inner and lines[inner[0]][:1] in (" ", "\t"):
            first = lines[inner[0]]
            indent = first[:len(first) - len(first.lstrip())]
        own = [i for i in inner if lines[i].startswith(indent + AUTHOR_KEY + ":")]
        if own:
            lines[own[0]] = indent + entry
        else:
            lines.insert(top[0] + 1, indent + entry)
    else:
        return None
    authored = "".join(lines)
    again = parse_skill_text(authored)[0]
    if again is None or again.frontmatter != _with_author(doc.frontmatter, author) \
            or again.body != doc.body:
        return None
    return authored


def _keep_current(path: Path, text: str, reason: str) -> Path | None:
    """Keep the SKILL.md at `path` as a version before `text` replaces it (as adopt and restore
    do): `skills update` and MCP `save_skill` kept nothing, so one wrong --body-file or an
    agent's overwrite of a hand-written skill could not be undone. Nothing is kept when the
    text does not change, so no-op saves do not push real versions out (versions.MAX_KEPT).
    Returns the version kept (None: none), which `_undo_failed_write` removes."""
    if not path.is_file() or path.is_symlink():
        return None
    try:
        current = path.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError):
        return None  # a file the loader could not read either; _claim_folder trashes those
    return keep_version(path.parent, current, reason, prune=False) if current != text else None


def _undo_failed_write(made: Path | None, kept: Path | None) -> None:
    """What a skill write that failed had left before it: the version kept of the text it did
    not replace, and the folder (`made`) of a new skill. Why (hunt-disk #4, session 29): on a
    full disk or past `ulimit -f`, each failed `skills update` added a "before update" version
    of an update that never happened (a retry added one more, pushing real history out of the
    50 kept), and a failed `skills new` left an empty folder."""
    if kept is not None:
        for leftover in (kept, kept.with_suffix(".json")):  # versions.keep_version's pair
            with contextlib.suppress(OSError):
                leftover.unlink()
        with contextlib.suppress(OSError):
            kept.parent.rmdir()  # `.versions`, when that version was its only one
    if made is not None:
        shutil.rmtree(made, ignore_errors=True)  # made by this write: nothing else is in it


def check_may_publish(name: str, verb: str) -> None:
    """PermissionDeniedError for an untrusted caller writing a served skill (embedded mode).

    A skill steers every later task that routes to it, and the library has no namespace and
    no pending state: what is written is served to every agent at once. So an untrusted
    caller (a model-driven client: an `--untrusted` token, an adapter tool set with
    `trusted=False`) may never create or change one here; with skills in git its save is a
    proposal a reviewer merges first, and that path does not call this."""
    scope = scopes.caller("default")
    if not scope.trusted:
        raise PermissionDeniedError(
            f"{verb} skill {name!r} needs a trusted caller: a skill is served to every agent "
            f"at once, and {scope.principal} is untrusted; ask the user to save it with "
            "`skillbank skills new`")


def check_may_change(frontmatter: dict[str, Any], name: str, verb: str, *,
                     own: bool = True) -> None:
    """PermissionDeniedError unless the caller may `verb` this skill: a trusted contributor
    changes the skills it wrote; another author's skill, or one written outside skillbank (no
    author), needs the reviewer role (see `skillbank.scope`); an untrusted caller changes none
    (`check_may_publish`).

    `own=False` (a read-only folder's skill): its author claim, written by whoever published
    it, does not count; a third-party SKILL.md naming bob let contributor bob take its name
    over, past the review hold, as the bank's own (hunt-mcpauthor #1, session 37)."""
    scope = scopes.caller("default")
    scope.require(scopes.Role.CONTRIBUTOR, f"{verb} a skill")
    check_may_publish(name, verb)
    author = author_of(frontmatter) if own else None
    if author is not None and author == scope.principal:
        return
    if scope.trusted and scope.role.allows(scopes.Role.REVIEWER):
        return
    whose = (f"{author}'s skill" if author else "a skill written outside skillbank" if own
             else "a skill of a read-only folder")
    raise PermissionDeniedError(
        f"{verb} skill {name!r} ({whose}) needs the reviewer role; {scope.principal} is "
        f"{'an untrusted ' if not scope.trusted else 'a '}{scope.role.value}")


def rates_as_outsider(scope: "scopes.Scope", path: str, *, own: bool = True) -> bool:
    """Whether `scope` rates the skill at `path` as an outsider (`skillbank.outside_votes`):
    a trusted caller who may not change it (`check_may_change`: not its author, no reviewer
    role). A bundled, team, third-party or hand-written skill is such for a plain contributor:
    the author claim of a skill not the bank's own (`own=False`) does not count, as in
    `check_may_change` (hunt-mcpauthor #1, session 37)."""
    if not scope.trusted or scope.role.allows(scopes.Role.REVIEWER):
        return False
    if not own:
        return True
    doc, _ = read_skill_file(Path(path)) if path else (None, [])
    return doc is None or author_of(dict(doc.frontmatter)) != scope.principal


#: Hidden folders of the writable root a rename removes the old folder from (loaders skip dot
#: entries); one a crash left behind is removed by the next sync (`sweep_removing`).
REMOVING = ".removing-"
#: Where a delete across file systems keeps the folder while it copies it to the trash: never
#: swept, since it is the only whole copy until the copy is done (a sync's sweep of a
#: `.removing-` folder mid-copy lost the skill and its trash copy; review 2, session 32). A
#: crash leaves it in place, whole, for a person to delete or move back.
MOVING = ".moving-"


def sweep_removing(writable_root: Path) -> None:
    """Remove what a rename cut short left behind: the old folder, out of sight already."""
    try:
        leftovers = [p for p in writable_root.iterdir() if p.name.startswith(REMOVING)]
    except OSError:
        return
    for folder in leftovers:
        shutil.rmtree(folder, ignore_errors=True)


class SkillAuthoring:
    """The write half of the skill library (see the module docstring for its rules)."""

    writable_root: Path
    index: "HybridIndex"
    write_lock: Any
    _sync_lock: "threading.RLock"

    def load(self, name: str) -> Skill:  # provided by SkillLibrary
        raise NotImplementedError

    def _summary(self, name: str, fresh: bool = True, on_disk: bool = False
                 ) -> Skill:  # provided by SkillLibrary
        raise NotImplementedError

    def _index_one(self, path: Path) -> None:  # provided by SkillLibrary
        raise NotImplementedError

    def __contains__(self, name: str) -> bool:  # provided by SkillLibrary
        raise NotImplementedError

    def _writable_dir(self, name: str) -> Path:
        """Where a *new* skill goes (`own_folders`); a skill the bank has may be nested."""
        return new_skill_folder(self.writable_root, name)

    def _own_skill_folder(self, name: str) -> Path | None:
        """Where the bank's own skill `name` lives (`own_folders`; hunt-corpus #1, s. 30)."""
        return own_skill_folder(self.index, self.writable_root, name)

    def _write(self, folder: Path, doc: SkillDocument, resources: dict[str, str | bytes] | None,
               root: Path | None = None, *, keep: str | None = None) -> Path:
        """Validate and write a skill into `folder` under `root` (default: the writable root;
        in git mode a proposal's worktree, repo_api.py).

        `keep`: why the SKILL.md being replaced is kept as a version first (once valid, so a
        refused write keeps nothing; git keeps the history of a proposal's worktree)."""
        if root is None:
            self._not_a_served_checkout("writing")  # type: ignore[attr-defined]
        if folder.is_symlink() or (folder.exists() and
                                   (root or self.writable_root).resolve()
                                   not in folder.resolve().parents):
            raise UnsafePathError(f"skill folder {folder.name!r} is a link out of the library; "
                                  "it is never written through")
        for key, value in doc.frontmatter.items():
            if isinstance(value, str):
                check_text(value, f"frontmatter {key!r}")
        check_text(doc.body, "skill body")
        for relative, content in (resources or {}).items():
            if isinstance(content, str):
                check_text(content, f"resource {relative!r}")
        findings = [f for f in validate_skill(doc, folder_name=folder.name) if f.severity == "error"]
        if findings:
            raise InvalidInputError(
                "skill is not valid: " + "; ".join(f.message for f in findings)
                + mismatch_fix(findings, doc, folder, taken=folder.name in self), findings)
        try:
            text = render_skill(doc)
        except Exception as exc:  # yaml cannot represent it: nothing is written
            raise InvalidInputError(f"the frontmatter cannot be written as YAML: {exc}") from None
        # Write only what this library can load back: a file the loader refuses (too deep, too
        # large, unrepresentable) would sit on disk unloadable and block the name.
        parsed, read_back = parse_skill_text(text, folder_name=folder.name)
        if parsed is None:
            errors = [f for f in read_back if f.severity == "error"]
            raise InvalidInputError("skill would not load back: " +
                                    "; ".join(f.message for f in errors), errors)
        if len(text.encode("utf-8")) > MAX_SKILL_BYTES:
            raise InvalidInputError(f"SKILL.md would exceed {MAX_SKILL_BYTES} bytes")
        made = None if folder.exists() else folder
        kept = None
        try:
            targets = _resource_targets(folder, resources)
            path = folder / SKILL_FILE
            if keep:
                kept = _keep_current(path, text, keep)
            for target, content in targets:
                atomic_write(target, content, private=False)  # a skill folder is shared as files
            atomic_write(path, text, private=False)
        except BaseException:  # disk full, ulimit -f, a refused resource: as it was before
            _undo_failed_write(made, kept)
            raise
        if kept is not None:
            drop_oldest(folder)  # only now: a failed write must not cost the oldest version
        return path

    def create(self, name: str, description: str, body: str = "", *,
               frontmatter: dict[str, Any] | None = None,
               resources: dict[str, str | bytes] | None = None) -> Skill:
        """Write a new skill into the writable root (validated, atomic) and index it."""
        return self._write_new(name, description, body, frontmatter, resources, exclusive=True)

    def _write_new(self, name: str, description: str, body: str,
                   frontmatter: dict[str, Any] | None,
                   resources: dict[str, str | bytes] | None, *, exclusive: bool) -> Skill:
        _check_content(description, body, frontmatter, resources)
        folder = self._writable_dir(name)
        # Sync and writes are serialised: a sync between its scan and its removal pass would
        # otherwise drop a skill written meanwhile (and the load below would not find it).
        scope = scopes.caller("default")
        scope.require(scopes.Role.CONTRIBUTOR, "writing a skill")
        if getattr(self, "skills_repo", None) is None:  # git mode: a proposal, reviewed first
            check_may_publish(name, "writing")
        with self._sync_lock, self.write_lock:
            refuse_unreadable([(self.writable_root, True)], name)  # not "already exists" (#5)
            with not_saved(name):
                taken = exclusive and (name in self or (folder / SKILL_FILE).exists())
            if taken:
                raise AlreadyExistsError(f"skill {name!r} already exists; update it instead")
            self._claim_folder(folder, name)
            extra = {k: v for k, v in _with_author(frontmatter or {}, scope.principal).items()
                     if k not in ("name", "description")}
            doc = SkillDocument(frontmatter={"name": name, "description": description, **extra},
                                body=_normalise_body(body))
            if getattr(self, "skills_repo", None) is None:  # (a hand-written SKILL.md not
                # indexed yet is overwritten by `save`: kept first, as update keeps its text)
                path = self._write(folder, doc, resources, keep=f"before save by {scope.principal}")
                index_written(self, name, path)
                note(self, "save", "skill", f"skill:{name}")
                return self.load(name)
        # Git mode: a proposal commit, made outside the root's locks: its push waits on the
        # network, and it changes nothing they guard (the served checkout is not touched; the
        # repository's own lock orders proposals).
        return self._propose(folder, doc, resources, "Add")  # type: ignore[attr-defined]

    def _claim_folder(self, folder: Path, name: str) -> None:
        """Refuse to write `name` into a folder whose SKILL.md is another skill's.

        The folder name is the skill name, but a hand-edited or half-renamed folder can hold a
        SKILL.md that says otherwise; overwriting it would silently delete that skill. A file
        that does not load at all is kept in the trash before it is replaced.
        """
        current = folder / SKILL_FILE
        if not (current.exists() or current.is_symlink()):
            return
        doc, _ = read_skill_file(current)
        if doc is None:
            self._trash(folder, copy=True)
            return
        owner = doc.frontmatter.get("name")
        if owner not in (None, "", name):
            raise AlreadyExistsError(
                f"folder {folder.name!r} holds the skill {str(owner)[:80]!r}, not {name!r}; "
                f"rename or move that skill first (nothing was written)")

    def update(self, name: str, *, description: str | None = None, body: str | None = None,
               frontmatter: dict[str, Any] | None = None,
               resources: dict[str, str | bytes] | None = None) -> Skill:
        """Change a skill in the writable root; unknown frontmatter keys are kept.

        What is not given is kept from the skill's SKILL.md, so one that does not parse (being
        edited by hand) is refused: `load` serves its last good version then, and building on
        that wrote over the person's edit without a word (hunt-author #2, session 24)."""
        return self._update(name, description, body, frontmatter, resources, whole=False)

    def _update(self, name: str, description: str | None, body: str | None,
                frontmatter: dict[str, Any] | None, resources: dict[str, str | bytes] | None,
                *, whole: bool) -> Skill:
        """`update`, or (`whole`) `save` of a skill the bank has: a whole new text, which may
        replace a SKILL.md that does not parse (it builds on nothing of it; the file is kept
        as a version first, as every replaced SKILL.md is)."""
        checks.check_str(name, "name")
        _check_content(description, body, frontmatter, resources, optional=True)
        with self._sync_lock, self.write_lock:
            fixed = replace_unloadable(self, name, description, body, frontmatter, resources)
            if fixed is not None:  # its SKILL.md does not load (review 4 #4, session 38)
                return fixed
            current = self.load(name)
            if not whole:
                _refuse_building_on_last_good(current)
            if not current.writable:
                raise ReadOnlyError(f"skill {name!r} lives in read-only root {current.root}; "
                                    "copy it into the bank's own library to change it")
            if getattr(self, "skills_repo", None) is None:  # git mode: a proposal, which a
                check_may_change(current.frontmatter, name, "changing")  # reviewer merges
            folder = Path(current.path).parent
            merged = dict(current.frontmatter)
            merged.update({k: v for k, v in (frontmatter or {}).items() if k != "name"})
            # The author stays who wrote it (or, for a skill written by hand, who first
            # changed it through skillbank); no caller names another author.
            merged = _with_author(merged, author_of(current.frontmatter)
                                  or scopes.caller("default").principal)
            if description is not None:
                merged["description"] = description
            doc = SkillDocument(frontmatter=merged,
                                body=current.body if body is None else _normalise_body(body))
            if getattr(self, "skills_repo", None) is None:
                by = scopes.caller("default").principal
                path = self._write(folder, doc, resources, keep=f"before update by {by}")
                index_written(self, name, path)
                note(self, "update", "skill", f"skill:{name}")
                return self.load(name)
        # Git mode: a proposal commit, outside the root's locks (see _write_new).
        return self._propose(folder, doc, resources, "Update")  # type: ignore[attr-defined]

    def save(self, name: str, description: str, body: str = "", *,
             frontmatter: dict[str, Any] | None = None,
             resources: dict[str, str | bytes] | None = None, carry: bool = True) -> Skill:
        """Create the skill, or update the bank's own copy if it already has one.

        A skill of that name in a read-only root is not changed: the new one is written to the
        writable root, which comes first, so it takes precedence from now on — for every
        caller, so taking over that name needs what changing the skill needs (its author or
        the reviewer role): a contributor's `save_skill` of a bundled or team skill's name
        served its body to everyone, reviewers included, as the bank's own (trust hunt,
        session 18). Its files come too (`carry`: `draft_files.carry_files`; `skills copy`
        copies its own way). In git mode it is a proposal a reviewer merges, as any save."""
        checks.check_str(name, "name")
        _check_content(description, body, frontmatter, resources)
        with self._sync_lock, self.write_lock:
            with not_saved(name):  # (review 2 #2, session 34: a failed read, as create's was)
                existing = self.index.metadata(name)
            own = existing is not None and bool(existing.get("writable"))
            shadowed: Skill | None = None  # a read-only skill of that name
            if getattr(self, "skills_repo", None) is None:
                if own:
                    return self._update(name, description, body, frontmatter, resources,
                                        whole=True)
                if existing is not None:
                    try:
                        shadowed = self.load(name, include_held=True)  # type: ignore[attr-defined]
                    except UnreadableError:  # there, but whose it is cannot be told: refused
                        raise
                    except NotFoundError:  # indexed, but its file is gone: nothing to take over
                        shadowed = None
                    if shadowed is not None and any(map(last_good.is_as_it_is_note,
                                                        shadowed.notes)):  # author unknown
                        raise InvalidInputError(f"skill {name!r} cannot be taken over while its "
                                                f"SKILL.md does not parse: fix {shadowed.path}")
                    if shadowed is not None:
                        check_may_change(shadowed.frontmatter, name, "taking over the name of",
                                         own=shadowed.writable)  # (False: read-only, #1 s37)
                saved = self._write_new(name, description, body, frontmatter, resources, exclusive=False)
                return draft_files.carry_files(self, shadowed if carry else None, saved, resources)
        # Git mode: each takes the locks only to read, not for the proposal's push.
        if own:
            return self._update(name, description, body, frontmatter, resources, whole=True)
        return self._write_new(name, description, body, frontmatter, resources, exclusive=False)

    def _own_folder(self, skill: Skill) -> Path:
        """The folder of a writable skill, refused when it is a link or lies outside the root."""
        return never_through_link(self.writable_root, Path(skill.path).parent)

    def rename(self, name: str, new_name: str) -> Skill:
        """Give a skill a new name (folder and frontmatter), crash-safely.

        The renamed copy is built in a hidden staging folder (files hard-linked, SKILL.md
        rewritten) and moved into place in one rename; only then is the old folder moved out of
        sight (one rename) and removed. A crash leaves the old skill, or both, never a folder
        naming another skill, nor a half-removed one.
        Its usage counts, votes and outcome timeline go with it (`_carry_usage`).
        The renamed folder stays where the skill lives (beside the old one, in its collection);
        renamed to its own folder's name, only `name:` is rewritten, in place. Both were
        `skills/<new_name>/`: a nested skill renamed to its folder's name (the fix `update`
        suggests for a name-mismatch) was moved out of its collection with no version kept
        (hunt-corpus #2, session 30).
        """
        checks.check_str(name, "name")
        self._writable_dir(new_name)  # a valid name, checked before anything is read
        with self._sync_lock, self.write_lock:
            self._served_read_only("renaming")  # type: ignore[attr-defined] # git mode
            current = self.load(name)
            _refuse_building_on_last_good(current)  # the renamed copy is written from it
            if not current.writable:
                raise ReadOnlyError(f"skill {name!r} is in a read-only root; it cannot be renamed")
            check_may_change(current.frontmatter, name, "renaming")
            source = self._own_folder(current)
            target = safe_join(source.parent, new_name)
            # Another skill of that name (a read-only team skill) is never shadowed nor its
            # usage taken over, in place or not (review of session 20: the in-place rename
            # skipped this check).
            if new_name in self:
                raise AlreadyExistsError(f"skill {new_name!r} already exists")
            if source == target:  # the name made to match its own folder: `name:` in place
                return self._rename_in_place(current, new_name, source)
            if target.exists() or target.is_symlink():
                raise AlreadyExistsError(f"skill {new_name!r} already exists")
            frontmatter = dict(current.frontmatter)
            frontmatter["name"] = new_name
            staging = Path(tempfile.mkdtemp(prefix=f"{RENAME_PREFIX}{new_name}-",
                                            dir=self.writable_root))  # killed: `staging` sweeps
            try:
                staged = staging / new_name
                shutil.copytree(source, staged, symlinks=True, ignore=_special_files,
                                copy_function=_link_or_copy)
                atomic_write(staged / SKILL_FILE, render_skill(SkillDocument(frontmatter, current.body)),
                             private=False)
                os.replace(staged, target)
            finally:
                shutil.rmtree(staging, ignore_errors=True)
            # Gone, not trashed: the new folder holds every file (and `.versions/`), and a
            # trash copy under the old name kept the skill's text after `forget` of the new
            # name (forget means gone; review of session 20). Out of sight in one rename first:
            # a crash while removing it served a half-removed old skill (second review).
            gone = Path(tempfile.mkdtemp(prefix=f"{REMOVING}{source.name}-",
                                         dir=self.writable_root))
            os.replace(source, gone / source.name)  # the folder's name: never a frontmatter one
            shutil.rmtree(gone, ignore_errors=True)
            self.index.delete([name])
            # The old name's rows still held the text in Chroma's file, which `forget` of the
            # new name never looked for (found with hunt-procs #2, session 28).
            erase_from_chroma(self.index, [name])
            last_good.drop(self.writable_root.parent, [name])  # a copy under the old name
            self._carry_usage(name, new_name)  # type: ignore[attr-defined] # skill_trust_api
            self._index_one(target / SKILL_FILE)
            note(self, "rename", "skill", [f"skill:{name}", f"skill:{new_name}"])
        self._unshadow()
        return self.load(new_name)

    def _rename_in_place(self, current: Skill, new_name: str, folder: Path) -> Skill:
        """Rewrite `name:` of a skill whose frontmatter name differs from its folder, to the
        folder's name (atomic, the old file kept as a version, as any edit). Users met
        `skills rename changelog changelog-writer` refused "already exists": that folder was
        the skill itself. Called with the locks held."""
        frontmatter = dict(current.frontmatter)
        frontmatter["name"] = new_name
        by = scopes.caller("default").principal
        path = self._write(folder, SkillDocument(frontmatter, current.body), None,
                           keep=f"before rename by {by}")
        self.index.delete([current.name])
        erase_from_chroma(self.index, [current.name])  # as `rename` (hunt-procs #2, s. 28)
        last_good.drop(self.writable_root.parent, [current.name])
        self._carry_usage(current.name, new_name)  # type: ignore[attr-defined]
        self._index_one(path)
        note(self, "rename", "skill", [f"skill:{current.name}", f"skill:{new_name}"])
        return self.load(new_name)

    def _unshadow(self) -> None:
        """After the bank's own copy of a name is gone, index the read-only skill it shadowed.

        The index holds one skill per name; deleting or renaming the own copy removed the name
        and the read-only `csv-report` it had shadowed stayed out of search and load until the
        next sync. A sync reads only changed files, so this is cheap; without read-only roots
        nothing can have been shadowed."""
        if any(not writable for _, writable in getattr(self, "roots", ())):
            self.sync(asked=False)  # type: ignore[attr-defined] - no one reads its report

    def _trash(self, folder: Path, *, copy: bool = False) -> Path:
        """Move (or copy) a skill folder into `<root>/.trash`, named after the folder itself.

        Never after the frontmatter name: a SKILL.md saying `name: ../../../x` must not choose
        where anything goes. A failed move leaves no trash folder (`staging.move_folder`: a
        refused one copies nothing into it, hunt-disk #3, session 32).
        """
        trash_dir = self.writable_root.parent / ".trash"
        trash_dir.mkdir(parents=True, exist_ok=True)
        stamp = int(time.time() * 1000)
        trash = Path(tempfile.mkdtemp(prefix=f"{folder.name}-{stamp}-", dir=trash_dir))
        try:
            if copy:
                shutil.copytree(folder, trash / folder.name, symlinks=True, ignore=_special_files)
            else:
                move_folder(folder, trash / folder.name, MOVING)
        except BaseException:
            shutil.rmtree(trash, ignore_errors=True)
            raise
        return trash / folder.name

    def delete(self, name: str) -> Path:
        """Remove a skill from the writable root; its folder is kept in `<root>/.trash`.

        Its usage counts are reset, so a later skill given the name starts at zero."""
        checks.check_str(name, "name")
        with self._sync_lock, self.write_lock:
            self._served_read_only("deleting")  # type: ignore[attr-defined] # git mode
            current = own_unloadable_skill(self, name) or self._summary(name)  # (#4 s38)
            if not current.writable:
                raise ReadOnlyError(f"skill {name!r} is in a read-only root; it cannot be deleted here")
            folder = Path(current.path).parent
            if not folder.is_dir():  # removed by hand before the watcher saw it
                self.index.delete([name])
                last_good.drop(self.writable_root.parent, [name])  # forget means gone
                raise NotFoundError(f"no skill {name!r}: its folder {str(folder)!r} was already "
                                    "removed (it is out of the index now)")
            check_may_change(_frontmatter_of(Path(current.path)), name, "forgetting")
            if self.writable_root not in folder.parents:
                raise UnsafePathError(f"skill {name!r} is not inside {self.writable_root}")
            trash = self._trash(folder)
            self.index.delete([name])
            last_good.drop(self.writable_root.parent, [name])  # its folder is in the trash
            self._drop_usage(name)  # type: ignore[attr-defined] # a later skill of this name starts at zero
            self._note_deleted(name)  # type: ignore[attr-defined] # its kind may be drafted again
            note(self, "delete", "skill", f"skill:{name}")
        self._unshadow()
        return trash


def _resource_targets(folder: Path, resources: dict[str, str | bytes] | None
                      ) -> list[tuple[Path, str | bytes]]:
    """Where each resource of a skill write goes in `folder` (made here when it has one)."""
    targets = []
    for relative, content in (resources or {}).items():
        if relative == SKILL_FILE:
            raise InvalidInputError("pass the SKILL.md content as description and body")
        target = safe_join(folder, relative) if folder.exists() else None
        if target is None:
            folder.mkdir(parents=True, exist_ok=True)
            target = safe_join(folder, relative)
        size = len(content.encode("utf-8") if isinstance(content, str) else content)
        if size > MAX_RESOURCE_BYTES:
            raise InvalidInputError(f"resource {relative!r} is over {MAX_RESOURCE_BYTES} bytes")
        targets.append((target, content))
    return targets


def _frontmatter_of(path: Path) -> dict[str, Any]:
    """A skill file's frontmatter ({} when it does not parse: then only a reviewer deletes)."""
    doc, _ = read_skill_file(path)
    return dict(doc.frontmatter) if doc is not None else {}


def _refuse_building_on_last_good(current: Skill) -> None:
    """InvalidInputError when `current` is the last good version `load` serves in place of a
    SKILL.md that does not parse: an update built on it would write that older text over the
    file a person is editing (hunt-author #2, session 24). Nothing is written."""
    if not any(map(last_good.is_editing_note, current.notes)):
        return
    path = Path(current.path)
    _, findings = read_skill_file(path)
    errors = "; ".join(f.message for f in findings if f.severity == "error") or "unreadable"
    raise InvalidInputError(
        f"skill {current.name!r} was not changed: its SKILL.md at {path} does not parse "
        f"({errors[:300]}), and this would write its last good version over that file. Fix "
        f"the file by hand, or make an earlier version current (`skillbank skills history "
        f"{current.name}`, then `--restore VERSION`)", findings)


def _normalise_body(body: str) -> str:
    body = body.replace("\r\n", "\n")
    return body if body.endswith("\n") or not body else body + "\n"


def _check_content(description: Any, body: Any, frontmatter: Any, resources: Any, *,
                   optional: bool = False) -> None:
    """Types of what authoring writes, checked before anything touches the disk."""
    checks.check_str(description, "description", optional=optional)  # emptiness: the validator
    checks.check_str(body, "body", optional=optional)
    checks.check_mapping(frontmatter, "frontmatter")
    checks.check_mapping(resources, "resources")
    for relative, content in (resources or {}).items():
        if not isinstance(content, (str, bytes)):
            raise InvalidInputError(f"resource {relative!r} must be text or bytes, "
                                    f"got {type(content).__name__}")


def _special_files(folder: str, names: list[str]) -> set[str]:
    """copytree's ignore: FIFOs, sockets and devices are not copied (opening one can block)."""
    skipped = set()
    for entry in names:
        try:
            mode = os.lstat(os.path.join(folder, entry)).st_mode
        except OSError:
            skipped.add(entry)
            continue
        if not (stat_module.S_ISREG(mode) or stat_module.S_ISDIR(mode) or stat_module.S_ISLNK(mode)):
            skipped.add(entry)
    return skipped


def _link_or_copy(source: str, destination: str) -> None:
    """Hard-link a file into a staging copy (no bytes copied), or copy where links fail."""
    try:
        os.link(source, destination, follow_symlinks=False)
    except OSError:
        shutil.copy2(source, destination)
