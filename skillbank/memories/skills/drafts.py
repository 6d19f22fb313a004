"""The library's write phase: skills proposed from experience, revised, adopted, versioned.

`propose()` groups the experiences that recur for one kind of task (`grouping`), writes one
draft per group of at least `min_support` experiences (`drafting`), and a revision draft for a
skill that keeps failing with lessons it does not contain. Drafts live in `<root>/drafts/<name>/`
— outside every skill root, so nothing routes to them — until a person adopts or discards them.
What is drawn, and when a pending draft may be drawn again, is `proposing` (session 26).

Idempotent by construction: `<root>/drafts/.ledger.jsonl` records every proposal, adoption and
discard with its source experience ids, and a group whose sources are all covered by one entry
is not proposed again. Adoption is atomic: a new skill is staged in a hidden folder and moved
into place with one rename; a revision keeps the previous SKILL.md under `.versions/` first and
then replaces SKILL.md with one atomic write. A crash leaves the draft pending or the skill
adopted, never half a skill; a draft whose text is already the skill's is treated as adopted.

A revision keeps the hash of the SKILL.md it was drawn from. Read, its diff is against the skill
as it is now; once the skill has changed (its author edited it), adopting it would undo that
edit, so it is refused until the draft is drawn again (`propose`) or a person's edit of it
(`edit_draft`) is written against the current text (hunt-author #1, session 24).

The library never reads the experience memory itself (memories do not import each other): the
facade sets `experience_source` to a function returning `Experience` records through that
memory's public API, or callers pass `experiences=` directly.
"""

from __future__ import annotations

import hashlib
import json
import logging
import os
import shutil
import tempfile
import time
from pathlib import Path
from typing import Any, Callable

from skillbank import scope as scopes
from skillbank.audit import note
from skillbank.errors import (AlreadyExistsError, InvalidInputError, NotFoundError,
                              PermissionDeniedError)
from skillbank.fsutil import atomic_write, check_slug
from skillbank.memories.skills import checks
from skillbank.memories.skills.authoring import _with_author, author_of, text_with_author
from skillbank.memories.skills.draft_files import (private_folder, revision_diff, stage_skill,
                                                   tighten, write_private)
from skillbank.memories.skills.drafting import DraftMaterial, RuleDrafter, SkillDrafter, render_body
from skillbank.memories.skills.folder_files import SKILL_FILE
from skillbank.memories.skills.own_folders import never_through_link
from skillbank.memories.skills.proposing import SkillProposing, ledger_skill
from skillbank.memories.skills.skill_file import (
    SkillDocument,
    parse_skill_text,
    render_skill,
    validate_skill,
)
from skillbank.memories.skills.staging import remove_staging_copies
from skillbank.memories.skills.versions import (keep_version, list_versions, read_version,
                                                under_name)
from skillbank.records import Experience, Skill, SkillDraft, SkillVersion, utcnow

log = logging.getLogger("skillbank.skills")

META_FILE = ".draft.json"
LEDGER = ".ledger.jsonl"
#: Defaults for flagging a skill for review: used this often, helping at most this share.
REVIEW_MIN_USES = 5
REVIEW_MAX_HELP_RATE = 0.2


class SkillDrafts(SkillProposing):
    """Propose (`proposing`), revise, adopt, discard and version skills (a mixin of
    `SkillLibrary`)."""

    #: Set by the facade: namespace -> experiences and the lesson records distilled from them
    #: (through the experience memory's public API).
    experience_source: Callable[[str | None], list[Experience]] | None = None
    #: Set by the facade: returns the bank's distiller; an LLM distiller's model drafts too.
    distiller_source: Callable[[], Any] | None = None
    #: Set by the facade: the bank's namespace, the caller's default, and that of older drafts.
    default_namespace: str = "default"

    writable_root: Path  # this and the four below: supplied by SkillLibrary / SkillAuthoring
    index: Any
    usage: Any
    write_lock: Any
    _sync_lock: Any

    # Where drafts live -------------------------------------------------------------------------
    @property
    def drafts_root(self) -> Path:
        return self.writable_root.parent / "drafts"

    def _draft_dir(self, name: str) -> Path:
        check_slug(name, "draft name")
        return self.drafts_root / name

    @property
    def draft_store(self) -> Any:
        """Where drafts and their ledger are kept (`skillbank.store`): the root's folder, or
        PostgreSQL in team mode (the bank sets it), with a working copy in `drafts_root`."""
        store = getattr(self, "_draft_store", None)
        if store is None:
            from skillbank.store.files.drafts import FileDrafts

            store = self._draft_store = FileDrafts(self.drafts_root)
        return store

    @draft_store.setter
    def draft_store(self, value: Any) -> None:
        self._draft_store = value

    def _ledger(self) -> list[dict[str, Any]]:
        return self.draft_store.ledger()

    def _note(self, op: str, draft: SkillDraft, **more: Any) -> None:
        self.draft_store.note({
            "op": op, "name": draft.name, "revises": draft.revises, "sources": draft.sources,
            "skill": draft.skill, "at": utcnow().isoformat(), **more})

    def _note_deleted(self, name: str) -> None:
        """Skill `name` was deleted: when it came from a draft, the ledger says so, so later runs
        of its kind draft it again. The ledger's "adopted" stood for good before: runs of that
        kind were never drafted again once the adopted skill was deleted (review #6, session 26;
        the ledger, not the folder, decides, as in team mode the skill may live on another
        worker's root)."""
        if any(e.get("op") == "adopted" and ledger_skill(e) == name for e in self._ledger()):
            self.draft_store.note({"op": "deleted", "name": name, "revises": None, "sources": [],
                                   "at": utcnow().isoformat()})

    def _read_draft(self, folder: Path) -> SkillDraft | None:
        try:
            meta = json.loads((folder / META_FILE).read_text(encoding="utf-8"))
            draft = SkillDraft.model_validate(meta)
        except (OSError, ValueError):
            return None
        if draft.name != folder.name:
            return None  # a hand-edited record: the folder, not the record, says what it is
        try:
            check_slug(str(draft.skill), "skill name")  # adopting it writes that folder
        except InvalidInputError:
            return None
        return draft.model_copy(update={"path": str(folder / SKILL_FILE)})

    # Who sees a draft (skillbank.scope) ---------------------------------------------------------
    def _draft_namespaces(self, draft: SkillDraft) -> list[str]:
        """The namespaces a draft was drawn from. Drafts written before these were recorded
        (`namespaces` None) are taken as the bank's default namespace (`settings.namespace`):
        that is where every experience lived before scopes, so its owner keeps them and no
        other user's scope reaches them."""
        return draft.namespaces if draft.namespaces is not None else [self.default_namespace]

    def _shown(self, draft: SkillDraft, scope: scopes.Scope, *, decide: bool = False) -> bool:
        """Whether `scope` may read every source namespace of a draft (and, to adopt or discard
        it, `decide`, review every one). A draft holds its sources' text and ids, so one it may
        not read is "not found", exactly like a missing draft."""
        spaces = self._draft_namespaces(draft)
        if not all(scope.can_read(n) for n in spaces):
            return False
        return not decide or all(scope.can_review(n) for n in spaces)

    # Reading drafts ----------------------------------------------------------------------------
    def drafts(self) -> list[SkillDraft]:
        """Pending drafts the caller may read (all of whose sources it reads), by name."""
        scope = scopes.caller(self.default_namespace)
        return [d for d in self._all_drafts() if self._shown(d, scope)]

    def draft_problems(self) -> list[Any]:
        """Draft folders `drafts()` leaves out because they cannot be read as drafts, each a
        `Finding` naming the folder and why (`draft_problems`; hunt-ui #8, session 27).
        Reviewers only, as adopting is: of the record's namespaces when it reads; a record that
        cannot be read names no namespace, so such a folder is taken as the bank's namespace's
        (as a draft written before they were recorded is)."""
        from skillbank.memories.skills.draft_problems import unreadable_drafts

        _decider("listing the draft folders that cannot be read")
        scope = scopes.caller(self.default_namespace)
        self.draft_store.refresh()
        return unreadable_drafts(self.drafts_root, lambda record: self._shown(
            record, scope, decide=True) if record is not None else scope.can_review(
                self.default_namespace))

    def _all_drafts(self) -> list[SkillDraft]:
        """Every pending draft, whoever's. A draft already adopted (a crash after the swap) is
        closed."""
        out = []
        self.draft_store.refresh()  # team mode: the drafts every worker wrote, here
        if not self.drafts_root.is_dir():
            return out
        if not getattr(self, "_drafts_tightened", False):  # an earlier version's 0755/0644
            tighten(self.drafts_root)
            self._drafts_tightened = True
        for folder in sorted(self.drafts_root.iterdir()):
            if folder.name.startswith(".") or folder.is_symlink() or not folder.is_dir():
                continue
            draft = self._read_draft(folder)
            if draft is None or not (folder / SKILL_FILE).is_file():
                continue
            if self._already_adopted(draft):
                self._close(draft, "adopted")
                continue
            out.append(self._against_current(draft))
        return out

    def _own_file(self, name: str) -> Path | None:
        """The SKILL.md of the bank's own skill `name` where it lives (`own_folders`), if any."""
        try:
            folder = self._own_skill_folder(name)  # type: ignore[attr-defined]
        except InvalidInputError:  # not a name a folder of the bank's own can have
            return None
        own = folder / SKILL_FILE if folder is not None else None
        return own if own is not None and own.is_file() else None

    def _revised_file(self, name: str) -> Path | None:
        """The SKILL.md a revision of `name` would replace: the bank's own copy where it lives
        (nested in a collection too), else the read-only skill of that name; None if none."""
        try:
            return self._own_file(name) or \
                Path(self._summary(name).path)  # type: ignore[attr-defined]
        except (OSError, NotFoundError, InvalidInputError):
            return None

    def _revised_text(self, name: str) -> str | None:
        """The text of `_revised_file` as it is now; None when there is none."""
        path = self._revised_file(name)
        try:
            return path.read_text(encoding="utf-8") if path is not None else None
        except (OSError, UnicodeDecodeError):
            return None

    def _diff_of(self, before: str, after: str, name: str, skill: str) -> str:
        """Draft `name` against `skill`'s SKILL.md, named where it lives (`revision_diff`)."""
        return revision_diff(before, after, name, skill, self._revised_file(skill),
                             self.writable_root.parent)

    def _against_current(self, draft: SkillDraft) -> SkillDraft:
        """A revision with its diff against the skill as it is now, and whether that is still the
        text it was drawn from: `skills drafts --diff` showed the diff made at propose time, so
        a reviewer was told nothing would be removed while adopting removed the author's edit
        made since (hunt-author #1, session 24)."""
        current = self._revised_text(draft.revises) if draft.revises else None
        if current is None:
            return draft
        try:
            text = Path(draft.path).read_text(encoding="utf-8")
        except (OSError, UnicodeDecodeError):
            return draft
        changed = draft.base_hash is not None and _text_hash(current) != draft.base_hash
        return draft.model_copy(update={"diff": self._diff_of(current, text, draft.name,
                                                           str(draft.revises)),
                                        "base_changed": changed})

    def _may_redraw(self, draft: SkillDraft, name: str) -> bool:
        """Whether `propose` may draw a pending revision of `name` again from the skill as it is
        now: its skill changed since, and no person has edited the draft (its text is still
        the one skillbank wrote; a person's text is never written over)."""
        if draft.revises != name or not draft.base_changed or draft.written_hash is None:
            return False
        try:
            return _text_hash(Path(draft.path).read_text(encoding="utf-8")) == draft.written_hash
        except (OSError, UnicodeDecodeError):
            return False

    def draft(self, name: str) -> SkillDraft:
        """One pending draft by name (one outside the caller's scope is not found)."""
        return self._find_draft(name)

    def _find_draft(self, name: str, *, decide: bool = False) -> SkillDraft:
        checks.check_str(name, "name")
        check_slug(name, "draft name")
        scope = scopes.caller(self.default_namespace)
        for draft in self._all_drafts():
            if draft.name == name and self._shown(draft, scope, decide=decide):
                return draft
        raise NotFoundError(f"no pending draft named {name!r}; drafts() lists them")

    def _already_adopted(self, draft: SkillDraft) -> bool:
        target = self._own_file(str(draft.skill))
        try:
            return target is not None and _adopted_as(
                target.read_text(encoding="utf-8"), Path(draft.path).read_text(encoding="utf-8"))
        except (OSError, UnicodeDecodeError):
            return False

    def _skill_exists(self, name: str) -> bool:
        return self.index.metadata(name) is not None or (self.writable_root / name).exists()

    def _write_draft(self, name: str, material: DraftMaterial, drafter: SkillDrafter, *,
                     revises: str | None, body: str | None = None, description: str | None = None,
                     frontmatter: dict[str, Any] | None = None, base_text: str | None = None,
                     reason: str = "", namespaces: list[str] | None = None,
                     skill: str | None = None, not_the_model: str | None = None
                     ) -> SkillDraft:
        """Write draft `name` of `skill` (the revised one, or `name`; a draft of another
        namespace set than the bank's is named apart from its skill, `proposing`).
        `not_the_model`: why a model drafter's text was not used (its reason is the draft's)."""
        skill = skill or revises or name
        text = None if body is not None else drafter.write(material)
        not_the_model = not_the_model or getattr(text, "fallback_reason", None)
        fm = dict(frontmatter or {})
        fm["name"] = skill
        fm["description"] = description if description is not None else text.description
        if body is None:
            body = render_body(skill.replace("-", " ").capitalize(), text, material, material.outcomes)
        doc = SkillDocument(frontmatter=fm, body=body)
        errors = [f for f in validate_skill(doc, folder_name=skill) if f.severity == "error"]
        if errors:
            if text is not None and text.drafted_by == "model":  # the spec refuses the model's text
                return self._write_draft(
                    name, material, RuleDrafter(), revises=revises, reason=reason,
                    namespaces=namespaces, skill=skill,
                    not_the_model="the model's text breaks the skill spec: "
                                  + "; ".join(f.message for f in errors))
            raise InvalidInputError("the drafted skill is not valid: "
                                    + "; ".join(f.message for f in errors), errors)
        rendered = render_skill(doc)
        folder = self._draft_dir(name)
        base_hash = _text_hash(base_text) if base_text is not None else None
        draft = SkillDraft(
            name=name, path=str(folder / SKILL_FILE), description=str(fm["description"]),
            sources=material.sources, revises=revises,
            diff=self._diff_of(base_text, rendered, name, skill) if base_text is not None else None,
            reason=(reason or (f"{len(material.sources)} runs of one kind of task "
                               f"({material.successes} succeeded, {material.failures} failed)"))
            + (f"; drafted by the rules, not the model ({not_the_model})" if not_the_model
               else ""),
            drafted_by="model" if text is not None and text.drafted_by == "model" else "rules",
            base_hash=base_hash, written_hash=_text_hash(rendered),
            namespaces=namespaces if namespaces is not None else [self.default_namespace],
            skill=skill)
        meta = draft.model_dump_json(indent=2) + "\n"
        write_private(self.drafts_root, folder / SKILL_FILE, rendered)  # hunt-drafts #5
        atomic_write(folder / META_FILE, meta)
        self.draft_store.put(name, {SKILL_FILE: rendered, META_FILE: meta}, draft.sources)
        self._note("proposed", draft)
        return draft

    # Adopting and discarding ---------------------------------------------------------------------
    def adopt(self, name: str, shown_hash: str | None = None) -> Skill:
        """Move a draft into the skills folder and index it; a revision keeps the old version.

        `shown_hash`: the `draft_hash` of the text the person deciding was shown (the browser's
        page); a draft whose text differs now (edited meanwhile) is refused, never adopted
        unread (hunt-ui #3, session 27)."""
        _decider("adopting a draft")
        with self._sync_lock, self.write_lock:
            draft = self._find_draft(name, decide=True)
            name = str(draft.skill)  # from here on the skill it becomes (hunt-untrusted #2, s27)
            folder = Path(draft.path).parent
            drafted = Path(draft.path).read_text(encoding="utf-8")
            _check_shown(draft.name, drafted, shown_hash)
            doc = _valid_skill(drafted, name, "the draft is not a valid skill")
            if draft.base_changed:  # read just now, under the locks (_find_draft)
                raise InvalidInputError(_stale_refusal(draft, self._may_redraw(draft, name)))
            doc, text = _authored(doc, drafted, self._adopted_author(draft))
            if getattr(self, "skills_repo", None) is not None:  # git mode: a proposal commit
                return self._adopt_in_git(draft, folder, doc, text, drafted)
            self._not_a_served_checkout("adopting")  # type: ignore[attr-defined]
            remove_staging_copies(self.writable_root)  # a killed adopt's (hunt-drafts #4, s26)
            target = self._adopt_target(draft, name)
            if target.is_symlink():
                raise InvalidInputError(f"skill folder {name!r} is a link; it is never written through")
            if target.exists():
                if draft.revises != name:
                    raise AlreadyExistsError(f"skill {name!r} already exists; discard the draft "
                                             "or rename the skill first")
                current = target / SKILL_FILE
                keep_version(target, current.read_text(encoding="utf-8"),
                             f"before adopting a revision drawn from {len(draft.sources)} experiences")
                atomic_write(current, text, private=False)  # old text or new, never half
            else:
                self._stage_in(folder, target, draft, text)
            self._index_one(target / SKILL_FILE)  # type: ignore[attr-defined]
            self._close(draft, "adopted")
            note(self, "adopt", "skill", f"skill:{name}")
            return self.load(name)  # type: ignore[attr-defined]

    def _adopt_target(self, draft: SkillDraft, name: str) -> Path:
        """Where an adopted draft of skill `name` goes: a revision into the folder the skill
        lives in (`own_folders`), a new skill into `skills/<name>/`. A revision of a nested skill
        became a second copy at `skills/<name>/`, or overwrote another skill there (s. 30)."""
        if draft.revises != name:
            return self._writable_dir(name)  # type: ignore[attr-defined]
        folder = self._own_skill_folder(name)  # type: ignore[attr-defined]
        if folder is None:
            raise AlreadyExistsError(f"folder {name!r} holds another skill, not {name!r}; "
                                     "rename or move that skill first (nothing was adopted)")
        return never_through_link(self.writable_root, folder)

    def _adopted_author(self, draft: SkillDraft) -> str:
        """Who an adopted skill names as its author (`authoring.AUTHOR_KEY`), as `save` names
        one: a revision keeps the author of the skill it revises, anything else is the
        adopter's. Adopt wrote the draft as drafted, with no author, so the skill's own
        contributors were refused with "(a skill written outside skillbank)" (hunt-scope #3,
        session 28). A read-only skill's author is not taken: a third-party SKILL.md could
        name any contributor, who could then change the bank's copy (review of session 28)."""
        own = bool(draft.revises) and self._own_file(str(draft.revises)) is not None
        current = self._revised_text(draft.revises) if own else None
        served = parse_skill_text(current)[0] if current is not None else None
        return (author_of(served.frontmatter) if served is not None else None) \
            or scopes.caller(self.default_namespace).principal

    def _adopt_in_git(self, draft: SkillDraft, folder: Path, doc: SkillDocument,
                      text: str, drafted: str) -> Skill:
        """Git mode: the draft becomes a commit on the caller's proposal branch (`repo_api`):
        `text`, the `drafted` text naming its author (`_authored`), as its SKILL.md.

        Refused as embedded adopt refuses, but against what the proposal is built on (the
        remote's newest served branch, or the open proposal branch it continues), not only this
        root's checkout: a revision drawn from a text that base no longer holds (an edit pushed
        since, a reviewer's fix-up on the branch, another root's adopted revision) was copied
        over it (hunt-git #1, session 27), and a new skill whose name is taken there replaced
        that skill (hunt-git #2). A revision of a read-only skill carries that skill's files
        (hunt-git #0). The ledger's "adopted" records the branch, so a proposal deleted unmerged
        lets its kind be drafted again (`proposing`, hunt-git #4)."""
        name = str(draft.skill)  # a draft of other namespaces is named apart from its skill
        own = self.writable_root / name
        if draft.revises != name and own.exists():
            raise AlreadyExistsError(f"skill {name!r} already exists; discard the draft or "
                                     "rename the skill first")
        revised = None
        if draft.revises == name and not own.exists():  # a read-only skill, shadowed once merged
            try:
                revised = Path(self._summary(name).path).parent  # type: ignore[attr-defined]
            except NotFoundError:
                pass
        proposed = self._propose_draft(  # type: ignore[attr-defined]
            folder, doc, META_FILE,
            lambda held, base: self._check_base(draft, drafted, held, base), revised, text)
        self._close(draft, "adopted", proposal=proposed.proposal.branch,
                    text_hash=_text_hash(text), base_hash=draft.base_hash)
        note(self, "adopt", "skill", f"skill:{name}")
        return proposed

    def _check_base(self, draft: SkillDraft, text: str, held: str | None, base: Any) -> None:
        """Refuse a git-mode adopt whose proposal `base` (`skills_repo.ProposalBase`) holds, as
        the skill's SKILL.md, `held`: a text the draft would replace without having been drawn
        from it. Nothing is refused when `held` is the draft's own text already (a proposal
        pushed by an adopt that stopped before closing the draft; `_adopted_as`)."""
        name = str(draft.skill)
        if held is not None and _adopted_as(held, text):
            return
        if draft.revises != name:
            if held is not None:
                raise AlreadyExistsError(f"skill {name!r} already exists on {base}; discard the "
                                         "draft or rename the skill first; nothing was proposed")
            return
        if held is None:
            if (self.writable_root / name).exists():  # in git here, gone from the base
                raise InvalidInputError(
                    f"draft {draft.name!r} was not adopted: skill {name!r} is no longer on {base} "
                    "(removed since this revision was drawn from it); nothing was proposed. "
                    f"Follow the branch (`skillbank skills follow`), then discard the draft "
                    f"(`skillbank skills discard {draft.name}`)")
            return
        found = _text_hash(held)
        if found != draft.base_hash and found not in self._adopted_texts(name, draft.base_hash):
            raise InvalidInputError(_stale_in_git(draft, base))

    def _adopted_texts(self, name: str, base_hash: str | None) -> set[str]:
        """The texts (hashes) of revisions of `name` this ledger adopted in git mode, drawn from
        the text `base_hash` as the draft being adopted was: a later revision drawn from that
        text holds their lessons too, so it may continue their open proposal branch."""
        return {e["text_hash"] for e in self._ledger()
                if e.get("op") == "adopted" and e.get("revises") == name and e.get("text_hash")
                and e.get("base_hash") == base_hash}

    def _stage_in(self, draft_folder: Path, target: Path, draft: SkillDraft, text: str) -> None:
        """Build the skill beside the library (`draft_files.stage_skill`: a revision of a
        read-only skill takes that skill's files too, hunt-drafts #8, session 26), then move it
        into place in one rename."""
        staging = Path(tempfile.mkdtemp(prefix=f".adopt-{target.name}-", dir=self.writable_root))
        try:
            staged = staging / target.name
            previous = None
            if draft.revises:  # shadowing a read-only skill: keep what it was, too
                try:
                    previous = Path(self._summary(draft.revises).path)  # type: ignore[attr-defined]
                except NotFoundError:
                    pass
            stage_skill(draft_folder, staged, text, skip=frozenset({META_FILE}),
                        revised_folder=previous.parent if previous else None)
            if previous is not None:
                try:
                    keep_version(staged, previous.read_text(encoding="utf-8"),
                                 f"the skill as found in {previous.parent.parent}")
                except OSError:
                    pass
            os.replace(staged, target)
        finally:
            shutil.rmtree(staging, ignore_errors=True)

    def _close(self, draft: SkillDraft, status: str, **more: Any) -> None:
        """Record the outcome (with `more` in its ledger entry) and move the draft folder out of
        the pending ones."""
        self._note(status, draft, **more)
        self.draft_store.close(draft.name, status)
        folder = Path(draft.path).parent
        done = private_folder(private_folder(self.drafts_root) / ".closed")  # hunt-drafts #5
        closed = draft.model_copy(update={"status": status})
        try:
            atomic_write(folder / META_FILE, closed.model_dump_json(indent=2) + "\n")
            os.replace(folder, done / f"{folder.name}-{status}-{int(time.time() * 1000)}")
        except OSError:
            pass

    def edit_draft(self, name: str, text: str) -> SkillDraft:
        """Replace a pending draft's SKILL.md with a person's text before it is adopted.

        The text must be a valid skill of the same name (it is what adoption would serve). A
        revision's edit is taken as written against the skill as it is now: its diff and
        `base_hash` are the current text's, so a stale revision merged by hand can be adopted
        (hunt-author #1, session 24); `propose` never draws an edited draft again.
        Embedded, this is the same as editing `<root>/drafts/<name>/SKILL.md`; in team mode the
        edit is written to the draft's row, so every worker's next read has it (an edit of one
        worker's working copy only reaches the others once that worker reads its drafts)."""
        checks.check_str(text, "text")
        _decider("editing a draft")
        with self._sync_lock, self.write_lock:
            draft = self._find_draft(name, decide=True)
            # a valid skill of the name it becomes (a draft may be named apart from its skill)
            doc = _valid_skill(text, str(draft.skill), "the edited draft is not a valid skill")
            folder = Path(draft.path).parent
            diff, base_hash = draft.diff, draft.base_hash
            current = self._revised_text(draft.revises) if draft.revises else None
            if current is not None:  # the person wrote it against the skill as it is now
                diff = self._diff_of(current, text, name, str(draft.revises))
                base_hash = _text_hash(current)
            edited = draft.model_copy(update={
                "description": str(doc.frontmatter.get("description") or draft.description),
                "diff": diff, "base_hash": base_hash, "base_changed": False})
            meta = edited.model_copy(update={"path": str(folder / SKILL_FILE)}) \
                .model_dump_json(indent=2) + "\n"
            write_private(self.drafts_root, folder / SKILL_FILE, text)  # hunt-drafts #5
            atomic_write(folder / META_FILE, meta)
            files = {p.relative_to(folder).as_posix(): p.read_text("utf-8", errors="replace")
                     for p in sorted(folder.rglob("*")) if p.is_file() and not p.is_symlink()}
            self.draft_store.put(name, files, draft.sources)
            note(self, "update", "draft", name)
            return edited

    def discard(self, name: str) -> SkillDraft:
        """Drop a pending draft; it is not proposed again for the same experiences."""
        _decider("discarding a draft")
        with self._sync_lock, self.write_lock:
            draft = self._find_draft(name, decide=True)
            self._close(draft, "discarded")
            note(self, "discard", "draft", name)
            return draft.model_copy(update={"status": "discarded"})

    # Versions --------------------------------------------------------------------------------------
    def history(self, name: str) -> list[SkillVersion]:
        """Earlier versions of a skill in the bank's own library, newest first: those under
        `.versions/` in the folder the skill lives in (`_own_skill_folder`: nested in a
        collection too; hunt-corpus #1, session 30)."""
        checks.check_str(name, "name")
        self.freshness.recheck()  # type: ignore[attr-defined] # a folder moved by hand
        folder = self._own_skill_folder(name)  # type: ignore[attr-defined]
        return [] if folder is None else list_versions(name, folder)

    def restore(self, name: str, version: str) -> Skill:
        """Make an earlier version current again; the current one is kept as a version first.
        Written in the folder the skill lives in, never in another skill's (hunt-corpus #1)."""
        checks.check_str(name, "name")
        _decider("restoring a skill version")
        with self._sync_lock, self.write_lock:
            self._served_read_only("restoring")  # type: ignore[attr-defined] # git mode
            self.freshness.recheck()  # type: ignore[attr-defined]
            folder = self._own_skill_folder(name)  # type: ignore[attr-defined]
            if folder is None:  # `skills/<name>/` holds another skill: none of its versions
                raise NotFoundError(f"skill {name!r} has no version {version!r}; history() "
                                    "lists them")
            never_through_link(self.writable_root, folder)
            text = under_name(read_version(name, folder, version), name)  # hunt-drafts #10
            _valid_skill(text, name, f"version {version} is not a valid skill named {name!r}")
            current = folder / SKILL_FILE
            if current.is_file():
                keep_version(folder, current.read_text(encoding="utf-8"), f"before restoring {version}")
            atomic_write(current, text, private=False)
            self._index_one(current)  # type: ignore[attr-defined]
            note(self, "restore", "skill", f"skill:{name}")
            return self.load(name)  # type: ignore[attr-defined]

    # Review ----------------------------------------------------------------------------------------
    def review(self, min_uses: int = REVIEW_MIN_USES,
               max_help_rate: float = REVIEW_MAX_HELP_RATE) -> list[Skill]:
        """Skills used at least `min_uses` times that helped in at most `max_help_rate` of them.

        Flagged for a person to revise or retire, never deleted. Only skills someone judged at
        least once are flagged: a bank whose agents never rate anything flags nothing.
        """
        checks.check_k(min_uses, "min_uses")
        rate = checks.check_score(max_help_rate, "max_help_rate")
        flagged = []
        for name in sorted(self.index.ids()):
            usage = self.usage.get(name)
            if usage.uses < min_uses or usage.successes + usage.failures == 0:
                continue
            if usage.successes / usage.uses <= (rate or 0.0):
                flagged.append(self._summary(name))  # type: ignore[attr-defined]
        return flagged


def _valid_skill(text: str, name: str, refusal: str) -> SkillDocument:
    """`text` parsed as the skill `name`, or InvalidInputError `refusal: <each error>`: a
    draft being adopted, a person's edit of one and a version being restored become the
    served SKILL.md, so each must pass the same check (only what is refused is named)."""
    doc, findings = parse_skill_text(text, folder_name=name)
    errors = [f for f in validate_skill(doc, folder_name=name) if f.severity == "error"] \
        if doc is not None else findings
    if errors:
        raise InvalidInputError(f"{refusal}: " + "; ".join(f.message for f in errors), errors)
    return doc


def _authored(doc: SkillDocument, text: str, author: str) -> tuple[SkillDocument, str]:
    """The draft `doc` (read from `text`) as adopt writes it: its frontmatter's metadata naming
    `author` (`authoring._with_author`), everything else as drafted; `text` itself when it
    names that author already (hunt-scope #3, session 28)."""
    frontmatter = _with_author(doc.frontmatter, author)
    if frontmatter == doc.frontmatter:
        return doc, text
    authored = SkillDocument(frontmatter=frontmatter, body=doc.body,
                             fallback_name=doc.fallback_name)
    # One line added, the person's edits kept as written (review of session 28).
    return authored, text_with_author(text, author) or render_skill(authored)


def _adopted_as(served: str, drafted: str) -> bool:
    """Whether the SKILL.md text `served` is the draft text `drafted` as adopt writes it: the
    same, or naming the author `served` names (`_authored`). A crash after the swap leaves the
    draft pending; comparing the texts alone took an adopted draft for another skill of its
    name once adopt recorded an author."""
    if served == drafted:
        return True
    served_doc, draft_doc = parse_skill_text(served)[0], parse_skill_text(drafted)[0]
    author = author_of(served_doc.frontmatter) if served_doc is not None else None
    return author is not None and draft_doc is not None \
        and _authored(draft_doc, drafted, author)[1] == served


def _text_hash(text: str) -> str:
    """What a revision keeps of the SKILL.md text it was drawn from (read with read_text)."""
    return "sha256:" + hashlib.sha256(text.encode("utf-8")).hexdigest()


#: What a face that shows a draft's SKILL.md passes back to `adopt` as `shown_hash`.
draft_hash = _text_hash


def _check_shown(name: str, text: str, shown_hash: str | None) -> None:
    """Refuse to adopt `text` when it is not the text whose hash the person was shown."""
    if shown_hash is not None and _text_hash(text) != shown_hash:
        raise InvalidInputError(
            f"draft {name!r} was not adopted: its text changed since it was shown to you (an "
            "edit meanwhile: `skillbank skills edit-draft`, another page, or by hand); reload "
            "the draft's page, read it again, and adopt it from there")


def _stale_refusal(draft: SkillDraft, redrawable: bool) -> str:
    """Why a revision whose skill changed since it was drawn is not adopted, and what to do."""
    name = draft.name
    ways = [f"write the revision onto the current text (`skillbank skills edit-draft {name} "
            "--file FILE`) and adopt that", f"discard it (`skillbank skills discard {name}`)"]
    if redrawable:
        ways.insert(0, "run `skillbank skills propose` to draw it again from the skill as it is "
                       "now (while its lessons are still missing there)")
    return (f"draft {name!r} was not adopted: skill {draft.skill!r} changed since this revision was "
            "drawn from it, and adopting it would undo that change (`skillbank skills drafts "
            "--diff` shows what it would remove). To go on, " + "; or ".join(ways))


def _stale_in_git(draft: SkillDraft, base: Any) -> str:
    """Why a git-mode revision is not adopted over what its proposal's `base` holds, and what
    to do (`_stale_refusal`'s kin: this root's checkout may hold the text it was drawn from)."""
    name, skill = draft.name, draft.skill
    if base.proposal:
        why = (f"{base} holds a text of skill {skill!r} that this revision was not drawn from "
               "(a fix-up pushed on the branch, or a revision adopted on another root), and "
               "adopting it would replace that text")
        way = (f"have that proposal merged into {base.served_branch} (or its branch deleted), "
               "then run `skillbank skills follow` and `skillbank skills propose` to draw the "
               "revision again from the skill as it is")
    else:
        why = (f"skill {skill!r} changed on {base} since this revision was drawn from it (this "
               "root's checkout has not followed it yet), and adopting it would undo that change")
        way = ("run `skillbank skills follow`, then `skillbank skills propose` to draw it again "
               "from the skill as it is now")
    return (f"draft {name!r} was not adopted: {why}; nothing was proposed. To go on, {way}; or "
            f"discard it (`skillbank skills discard {name}`)")


def _decider(action: str) -> None:
    """Drafts and versions wait for a person: adopting, discarding and restoring need a trusted
    reviewer (skillbank.scope; the bank's own local user is one)."""
    scope = scopes.caller("default")  # only its role is read here: the namespace does not matter
    if not (scope.trusted and scope.role.allows(scopes.Role.REVIEWER)):
        raise PermissionDeniedError(
            f"{action} needs the reviewer role; {scope.principal} is "
            f"{'an untrusted ' if not scope.trusted else 'a '}{scope.role.value}")
