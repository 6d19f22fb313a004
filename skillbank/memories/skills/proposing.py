"""`propose()`: the drafts a library writes from recurring experience (a mixin of `SkillDrafts`).

New-skill drafts come from groups of runs of one kind of task (`grouping`, `drafting`); revision
drafts from a skill that keeps failing with lessons its text does not hold. Writing, reading,
adopting and discarding a draft stay in `drafts`; this module decides what is drawn and when a
pending draft may be drawn again. It was split out of `drafts` at that seam (session 26).

A pending draft is drawn again (with new evidence, or a stale revision from the skill as it is
now) only when the caller may read it and no person has edited it: a draft's `written_hash` is
the hash of its SKILL.md as skillbank wrote it, so an edit (`edit_draft`, or the file edited in
place) shows as a different text, and a person's text is never written over (hunt-drafts #1 and
#6, session 26). A new-skill group whose earlier draft became a skill (it exists here, or the
ledger says a person adopted it, perhaps on another worker) reaches that skill through revisions
only, never as a second new-skill draft of its name (hunt-drafts #3, session 26).

Drafts of different sets of source namespaces keep apart: a draft drawn from namespaces other
than the bank's own is named `<skill>-<tag>` (`drafting.namespace_tag`) and adopting it writes
`<skill>`; each set has its own pending revision of a skill; and a pending draft the caller may
not read neither names its drafts nor counts as having drawn its runs. Another namespace's
revision held the team's only slot ("Nothing new to propose"), and a `-2` told the team that a
draft it may not read existed (hunt-untrusted #2 and #3, session 27).
"""

from __future__ import annotations

import logging
import re
from collections import Counter
from pathlib import Path
from typing import Any, Sequence

from skillbank import scope as scopes
from skillbank.audit import note
from skillbank.errors import InvalidInputError, NotFoundError, PermissionDeniedError
from skillbank.memories.skills import checks, last_good
from skillbank.memories.skills.drafting import (
    DraftMaterial,
    DraftText,
    LLMDrafter,
    RuleDrafter,
    SkillDrafter,
    _clip,
    draft_name,
    gather,
    namespace_tag,
    namespaced_name,
    sentences,
)
from skillbank.memories.skills.grouping import DEFAULT_THRESHOLD, MAX_EXPERIENCES, group_experiences, tokens
from skillbank.memories.skills.skill_file import MAX_NAME
from skillbank.records import Experience, SkillDraft, utcnow

log = logging.getLogger("skillbank.skills")

#: A lesson counts as already in a skill when this share of its words is in the skill's text.
COVERED = 0.7
#: Sentences of a failed run's feedback read as its lessons (as `drafting.gather` reads them).
FEEDBACK_SENTENCES = 3


class SkillProposing:
    """Draft skills and revisions from experience (a mixin of `SkillDrafts`)."""

    # Supplied by SkillDrafts / SkillLibrary.
    experience_source: Any
    distiller_source: Any
    default_namespace: str
    writable_root: Path
    drafts_root: Path
    index: Any
    usage: Any
    write_lock: Any
    _sync_lock: Any

    def propose(self, namespace: str | None = None, min_support: int = 3, *,
                experiences: Sequence[Experience] | None = None,
                drafter: SkillDrafter | None = None,
                threshold: float = DEFAULT_THRESHOLD, trusted: bool = True) -> list[SkillDraft]:
        """Draft skills from recurring experience; returns the drafts written by this call.

        New-skill drafts come from groups of at least `min_support` experiences of one kind of
        task; revision drafts (`revises=<skill>`, with a diff) from skills that failed at least
        twice with lessons their text does not hold (inline lessons, feedback, or the lesson
        records distilled from the run). Nothing is proposed twice for the same experiences,
        nor again after a person adopted or discarded it; but a pending revision whose skill
        changed since it was drawn (and that no person edited) is drawn again from the skill as
        it is now, so it can be adopted without undoing that change. A draft a person edited,
        or one whose sources the caller may not read, is never written over.

        Trusted callers only (`trusted=False` or an untrusted scope: PermissionDeniedError), in
        every face: a draft is written from the team's experiences, and in an MCP session that
        offers sampling the caller's own model writes its text. Users met an `--untrusted`
        token's `propose_skills` writing drafts: the MCP tool checked only the server's flag,
        and a server with a tokens file is built trusted.
        """
        checks.check_k(min_support, "min_support")
        checks.check_score(threshold, "threshold")
        scope = scopes.caller(self.default_namespace, trusted)
        scope.require(scopes.Role.CONTRIBUTOR, "proposing skills")
        if not scope.trusted:
            raise PermissionDeniedError(
                f"proposing skills needs a trusted caller; {scope.principal} is untrusted (a "
                "draft steers every later task once adopted). Ask the user to run `skillbank "
                "skills propose`")
        records = [e for e in self._experiences(namespace, experiences) if scope.can_read(e.namespace)]
        pool = _runs(records)
        distilled = _distilled_lessons(records)
        drafter = drafter or self._default_drafter()
        gone = self._proposals_gone()  # asks the remote: outside the locks (review #2, s27)
        drafter = self._predrafted(pool, min_support, threshold, drafter, scope, gone)
        with self._sync_lock, self.write_lock:
            # Every pending draft, the caller's or not: a new draft never takes another's name.
            # Read again here, after the model drafted: another proposer, an adoption, a
            # discard or a person's edit made meanwhile decides as if no model had been asked.
            pending = {d.name: d for d in self._all_drafts()}  # type: ignore[attr-defined]
            ledger = self._ledger_seen_by(scope, pending)
            written = self._propose_new(pool, min_support, threshold, drafter, ledger, pending,
                                        scope, gone)
            written += self._propose_revisions(pool, distilled, drafter, ledger, pending, scope)
        note(self, "propose", "draft", [d.name for d in written])
        return written

    def _predrafted(self, pool: list[Experience], min_support: int, threshold: float,
                    drafter: SkillDrafter, scope: scopes.Scope, gone: set[str]) -> SkillDrafter:
        """`drafter`'s texts for the new-skill drafts `propose` would write now, asked outside
        the library's locks: a model drafter (MCP sampling, up to 120 s a group; any LLM) was
        asked inside them, and every other session's write waited on it and failed after 60 s
        saying "another process" held the lock (hunt-sampling #1, session 36). The groups are
        chosen under the locks (reading pending drafts may close one, the ledger may note a
        withdrawn proposal), the model is asked with none held, and `propose` then decides
        again under the locks, writing only the drafts still due, each with its text from here
        (`_Drafted`). The rule drafter waits on nothing: it drafts under the locks as before."""
        if isinstance(drafter, RuleDrafter):
            return drafter
        planned: list[DraftMaterial] = []
        with self._sync_lock, self.write_lock:
            pending = {d.name: d for d in self._all_drafts()}  # type: ignore[attr-defined]
            self._propose_new(pool, min_support, threshold, drafter,
                              self._ledger_seen_by(scope, pending), pending, scope, gone,
                              planned=planned)
        return _Drafted([(material, drafter.write(material)) for material in planned])

    def _experiences(self, namespace: str | None,
                     experiences: Sequence[Experience] | None) -> list[Experience]:
        """Active runs (the newest MAX_EXPERIENCES, oldest first), then the active lesson
        records distilled from runs (kind "lesson", `source` the run): a failure recorded with
        feedback and `distill=True` — all MCP `record_experience` and the LangChain middleware
        give — holds its lesson there, not inline (hunt-drafts #7, session 26)."""
        if experiences is None:
            if self.experience_source is None:
                raise InvalidInputError("this library has no experiences to draft from: pass "
                                        "experiences=[...] or open it through Skillbank")
            experiences = self.experience_source(namespace)
        experiences = list(experiences)
        bad = [e for e in experiences if not isinstance(e, Experience)]
        if bad:
            raise InvalidInputError("experiences must be Experience records "
                                    f"(got {type(bad[0]).__name__})")
        active = [e for e in experiences if e.status == "active" and e.id]
        runs = sorted(_runs(active), key=lambda e: (e.created, e.id), reverse=True)
        lessons = [e for e in active if e.kind == "lesson" and e.source]
        return sorted(runs[:MAX_EXPERIENCES], key=lambda e: (e.created, e.id)) + lessons

    def _default_drafter(self) -> SkillDrafter:
        if self.distiller_source is not None:
            drafter = LLMDrafter.from_distiller(self.distiller_source())
            if drafter is not None:
                return drafter
        return RuleDrafter()

    @staticmethod
    def _covered(sources: list[str], ledger: list[dict[str, Any]], revises: str | None) -> bool:
        wanted = set(sources)
        return any(e.get("revises") == revises and wanted <= set(e["sources"]) for e in ledger)

    def _ledger_seen_by(self, scope: scopes.Scope,
                        pending: dict[str, SkillDraft]) -> list[dict[str, Any]]:
        """The ledger without the proposals of pending drafts the caller may not read: such a
        draft neither covers the caller's runs nor names its drafts, so it blocks nothing the
        caller may draft and tells it nothing (hunt-untrusted #2, session 27). A person's
        adoption or discard, made by one who reads all of a draft's sources, still counts."""
        hidden = {n for n, d in pending.items() if not self._shown(d, scope)}  # type: ignore[attr-defined]
        return [e for e in self._ledger()  # type: ignore[attr-defined]
                if e.get("op") != "proposed" or e.get("name") not in hidden]

    def _new_draft_names(self, material: DraftMaterial, spaces: list[str],
                         pending: dict[str, SkillDraft], scope: scopes.Scope,
                         previous: str | None = None,
                         previous_skill: str | None = None) -> tuple[str, str]:
        """(draft name, skill name) of a new-skill draft drawn from namespaces `spaces`.

        The skill's name is kept apart from the skills and from the drafts the caller may read;
        the draft's is the skill's with its namespace tag (`drafting.namespace_tag`: none for
        the bank's own namespace), so it never depends on drafts outside the caller's scope: a
        `-2` told the team that another namespace held a draft of that name (hunt-untrusted #3,
        session 27). `previous`, a draft of this group drawn before (becoming `previous_skill`),
        keeps its name while its namespaces do; drawn now from others, the group is named
        afresh (its skill was read off the old tagged name, review2 #4, session 27)."""
        tag = namespace_tag(spaces, self.default_namespace)
        if previous is not None:
            if previous in pending:
                return previous, str(pending[previous].skill)
            skill = previous_skill or previous
            if namespaced_name(skill, tag) == previous:
                return previous, skill
        seen = {d.skill for d in pending.values() if self._shown(d, scope)}  # type: ignore[attr-defined]
        skill = draft_name(material, lambda n: self._skill_exists(n) or n in seen  # type: ignore[attr-defined]
                           or (self.drafts_root / namespaced_name(n, tag)).exists(),
                           max_length=min(48, MAX_NAME - len(tag) - 6) if tag else 48)
        return namespaced_name(skill, tag), skill

    def _revision_slot(self, skill: str, spaces: list[str], name: str,
                       pending: dict[str, SkillDraft], scope: scopes.Scope) -> SkillDraft | None:
        """The pending revision of `skill` drawn from namespaces `spaces` (the caller reads
        them), or whatever pending draft holds its name `name`. Each namespace set has its own
        revision of a shared skill: another namespace's pending one held the only slot, and a
        team's failures were never drafted (hunt-untrusted #2, session 27)."""
        for draft in pending.values():
            if draft.revises == skill and sorted(self._draft_namespaces(draft)) == spaces \
                    and self._shown(draft, scope):  # type: ignore[attr-defined]
                return draft
        return pending.get(name)

    def _may_write_over(self, draft: SkillDraft, scope: scopes.Scope) -> bool:
        """Whether `propose` may write a pending draft again: the caller reads all its sources
        (another namespace's contributor destroyed a revision he may not read, hunt-drafts #6,
        session 26), and its SKILL.md is still the text skillbank wrote (a person's edit of a
        new-skill draft was overwritten by the next run of its kind, hunt-drafts #1). A draft
        written before `written_hash` was kept on new-skill drafts cannot tell, so it is kept."""
        if not self._shown(draft, scope) or draft.written_hash is None:  # type: ignore[attr-defined]
            return False
        from skillbank.memories.skills.drafts import _text_hash  # drafts imports this module

        try:
            return _text_hash(Path(draft.path).read_text(encoding="utf-8")) == draft.written_hash
        except (OSError, UnicodeDecodeError):
            return False

    def _adopted_in_ledger(self, name: str, ledger: list[dict[str, Any]]) -> bool:
        """Whether a person adopted a new-skill draft of `name` (on any worker: in team mode the
        skill may live in another worker's root, hunt-drafts #3's team kin, session 26) and did
        not delete that skill since (review #6, session 26)."""
        adopted: str | None = None  # the skill the draft `name` became
        for entry in ledger:
            if entry.get("op") == "adopted" and entry.get("revises") is None \
                    and entry.get("name") == name:
                adopted = ledger_skill(entry)
            elif entry.get("op") == "deleted" and entry.get("name") == adopted:
                adopted = None
        return adopted is not None

    def _served_kind(self, material: DraftMaterial, runs: list[Experience]) -> str | None:
        """The served skill a group of runs is of, or None: the skill its draft would be named
        after (`draft_name` before any suffix), or one most of its runs failed with (tagged
        `skill:<name>`: those reach it as revision evidence; successes of a new kind that used
        a general skill are still a new skill's draft, review #1, session 27). A root that did not adopt that skill itself (another root on the
        same skills repository did, or a person wrote it) drafted a duplicate `<name>-2`, as
        did three failed runs tagged with a skill beside that skill's revision (hunt-git #3,
        session 27); the served skill takes such runs as revision evidence instead."""
        natural = draft_name(material, lambda n: False)
        if self._skill_exists(natural):  # type: ignore[attr-defined]
            return natural
        tagged = Counter(tag[len("skill:"):] for e in runs if e.outcome == "failure"
                         for tag in set(e.tags) if tag.startswith("skill:"))
        for name, count in tagged.most_common():
            if count * 2 > len(runs) and self._skill_exists(name):  # type: ignore[attr-defined]
                return name
        return None

    def _proposals_gone(self) -> set[str]:
        """The drafts whose git-mode proposal left the remote unmerged (a reviewer's no): each
        adopted new-skill draft whose skill is not served here and whose proposal is not yet
        marked withdrawn, asked of the remote. Asked before `propose` takes the library's locks:
        inside them, a remote that hung held every local skill write for the fetch's timeout
        (review #2, session 27). Empty outside git mode."""
        repo = getattr(self, "skills_repo", None)
        if repo is None:
            return set()
        latest: dict[str, dict[str, Any]] = {}
        for entry in self._ledger():  # type: ignore[attr-defined]
            if entry.get("revises") is None and entry.get("op") in ("adopted", "withdrawn"):
                latest[str(entry.get("name"))] = entry
        gone = set()
        for name, entry in latest.items():
            branch, skill = entry.get("proposal"), ledger_skill(entry)
            if entry["op"] == "adopted" and isinstance(branch, str) \
                    and not self._skill_exists(skill) \
                    and repo.proposal_gone(branch, repo.relative(self.writable_root / skill)):  # type: ignore[attr-defined]
                gone.add(name)
        return gone

    def _proposal_withdrawn(self, name: str, ledger: list[dict[str, Any]],
                            gone: set[str]) -> bool:
        """Whether the skill draft `name` adopted in git mode never became a skill: its
        proposal branch left the remote unmerged (`_proposals_gone`, asked before the locks).
        In git mode "adopted" is "proposed for review"; it stood for good, so a rejected
        proposal kept that kind of task from being drafted ever again (hunt-git #4, session
        27). Once seen, a "withdrawn" ledger entry says so (the remote is asked again only
        after a later adoption); the latest of the two decides."""
        entries = [e for e in ledger if e.get("name") == name and e.get("revises") is None
                   and e.get("op") in ("adopted", "withdrawn")]
        if not entries or entries[-1]["op"] == "withdrawn":
            return bool(entries)
        if name not in gone:
            return False  # adopted here (embedded), or the proposal is open or merged
        self.draft_store.note({  # type: ignore[attr-defined]
            "op": "withdrawn", "name": name, "revises": None, "sources": [],
            "skill": ledger_skill(entries[-1]), "proposal": entries[-1].get("proposal"),
            "at": utcnow().isoformat()})
        return True

    def _propose_new(self, pool: list[Experience], min_support: int, threshold: float,
                     drafter: SkillDrafter, ledger: list[dict[str, Any]],
                     pending: dict[str, SkillDraft], scope: scopes.Scope, gone: set[str], *,
                     planned: list[DraftMaterial] | None = None) -> list[SkillDraft]:
        """The new-skill drafts due now, written; with `planned`, only their material is
        collected there (`_predrafted`) and nothing is written."""
        written: list[SkillDraft] = []
        for group in group_experiences(pool, threshold=threshold):
            if len(group.members) < min_support:
                continue
            material = gather(pool, group.members, group.keywords)
            if self._covered(material.sources, ledger, None):
                continue
            # New experience joined a group already drafted: refresh that draft, same name.
            previous = _best_overlap(material.sources, [e for e in ledger if e.get("revises") is None])
            # The skill it becomes: a draft of other namespaces is named apart from it, and the
            # tagged name was looked up as a skill, so another namespace's adopted draft of the
            # same skill left this one un-adoptable and drawn again after every discard
            # (review2 #1, session 27).
            previous_skill = _skill_in_ledger(previous, ledger) if previous else None
            spaces = _namespaces(pool, material.sources)
            if previous is None:
                served = self._served_kind(material, [pool[i] for i in group.members])
                if served is not None:
                    log.info("no new skill drafted: its runs are of the served skill %s (its "
                             "failures reach it as revision evidence)", served)
                    continue
                name, skill = self._new_draft_names(material, spaces, pending, scope)
            elif self._skill_exists(previous_skill) or (  # type: ignore[attr-defined]
                    self._adopted_in_ledger(previous, ledger)
                    and not self._proposal_withdrawn(previous, ledger, gone)):
                continue  # adopted already: new evidence reaches it through revisions only (a
                # pending revision of it was replaced by an un-adoptable new draft, hunt-drafts #3)
            elif previous in pending and (pending[previous].revises is not None
                                          or not self._may_write_over(pending[previous], scope)):
                log.info("draft %s not drawn again: a person edited it, or the caller may not "
                         "read all of its sources", previous)
                continue
            else:
                name, skill = self._new_draft_names(material, spaces, pending, scope, previous,
                                                    previous_skill)
            if planned is not None:
                planned.append(material)
                continue
            try:
                written.append(self._write_draft(name, material, drafter, revises=None,  # type: ignore[attr-defined]
                                                 namespaces=spaces, skill=skill))
            except _NotDrafted:
                log.info("draft %s not written: it became due while the model drafted the "
                         "others; the next propose drafts it", name)
                continue
            pending[name] = written[-1]
        return written

    def _propose_revisions(self, pool: list[Experience], distilled: dict[str, list[str]],
                           drafter: SkillDrafter, ledger: list[dict[str, Any]],
                           pending: dict[str, SkillDraft], scope: scopes.Scope) -> list[SkillDraft]:
        written = []
        failures = [e for e in pool if e.outcome == "failure"]
        for name in sorted(self.index.ids()):
            usage = self.usage.get(name)
            linked = [e for e in failures if _mentions(e, name)]
            if usage.failures and not linked:
                linked = [e for e in failures if self._routes_to(e.task, name)]
            spaces = _namespaces(pool, [e.id for e in linked])
            revision_name = namespaced_name(name, namespace_tag(spaces, self.default_namespace))
            slot = self._revision_slot(name, spaces, revision_name, pending, scope)
            redraw = slot is not None and self._may_redraw(slot, name) \
                and self._may_write_over(slot, scope)  # type: ignore[attr-defined]
            if len(linked) + (usage.failures if linked else 0) < 2 or (
                    slot is not None and not redraw):
                continue
            try:
                skill = self.load(name)  # type: ignore[attr-defined]
                current = Path(skill.path).read_text(encoding="utf-8")
            except (OSError, InvalidInputError, NotFoundError):
                continue
            if any(map(last_good.is_editing_note, skill.notes)):
                continue  # its file does not parse: drawn on the last good body, adopting the
                # revision would undo the edit under way (hunt-author #2's kin, session 24)
            known = set(tokens(current))
            lessons: list[str] = []
            for exp in linked:
                for sentence in _failure_lessons(exp, distilled.get(exp.id, [])):
                    words = set(tokens(sentence))
                    if words and len(words & known) / len(words) < COVERED and all(
                            _clip(sentence) != kept for kept in lessons):
                        lessons.append(_clip(sentence))
                        known |= words
            sources = sorted(e.id for e in linked)
            if not lessons or (self._covered(sources, ledger, name) and not redraw):
                continue
            body = _add_pitfalls(skill.body, lessons, sources)
            material = DraftMaterial(sources=sources, tasks=[e.task for e in linked], when_to_use=[],
                                     steps=[], pitfalls=[(x, 1) for x in lessons], checks=[],
                                     successes=0, failures=len(linked))
            try:
                written.append(self._write_draft(  # type: ignore[attr-defined]
                    slot.name if slot is not None else revision_name,
                    material, drafter, revises=name, body=body,
                    description=skill.description, frontmatter=dict(skill.frontmatter),
                    base_text=current, namespaces=spaces,
                    reason=(f"failed in {len(linked)} recorded runs (usage: {usage.failures} "
                            f"failures in {usage.uses} uses) with {len(lessons)} lessons it lacks")))
            except InvalidInputError as exc:  # e.g. a read-only skill that breaks the spec
                log.warning("no revision drafted for %s: %s", name, exc)
        return written

    def _routes_to(self, task: str, name: str) -> bool:
        try:
            hits = self.search(task, k=1)  # type: ignore[attr-defined]
        except InvalidInputError:
            return False
        return bool(hits) and hits[0].name == name


class _NotDrafted(Exception):
    """A group's draft became due only after the model was asked (`_Drafted`)."""


class _Drafted:
    """The texts a drafter wrote outside the locks, by their material (`_predrafted`). A group
    not asked then (due only now: say a skill of its kind was deleted meanwhile) is left for
    the next `propose` rather than asking the model under the locks again."""

    def __init__(self, texts: list[tuple[DraftMaterial, DraftText]]) -> None:
        self.texts = texts

    def write(self, material: DraftMaterial) -> DraftText:
        for drafted, text in self.texts:
            if drafted == material:
                return text
        raise _NotDrafted(material.sources)


def _runs(records: list[Experience]) -> list[Experience]:
    """The runs among experience records (not the lesson records distilled from them)."""
    return [e for e in records if e.kind == "experience"]


def _distilled_lessons(records: list[Experience]) -> dict[str, list[str]]:
    """Run id -> the texts of the lesson records distilled from it."""
    out: dict[str, list[str]] = {}
    for record in records:
        if record.kind == "lesson" and record.source:
            out.setdefault(record.source, []).extend(lesson.text for lesson in record.lessons)
    return out


def _failure_lessons(exp: Experience, distilled: list[str]) -> list[str]:
    """The lesson sentences of a failed run: its inline lessons, the lessons distilled from it,
    and the first sentences of its feedback — revisions read only inline `lessons=`, so a
    failure recorded with feedback never gave one (hunt-drafts #7, session 26)."""
    out: list[str] = []
    for text in [lesson.text for lesson in exp.lessons] + distilled:
        out += sentences(text)
    if exp.feedback:
        out += sentences(exp.feedback)[:FEEDBACK_SENTENCES]
    return out


def _namespaces(pool: list[Experience], sources: list[str]) -> list[str]:
    """The namespaces of a draft's source experiences (recorded in its `.draft.json`)."""
    wanted = set(sources)
    return sorted({e.namespace for e in pool if e.id in wanted})


def _skill_in_ledger(name: str, ledger: list[dict[str, Any]]) -> str:
    """The skill the draft `name` becomes, as its latest ledger entry says."""
    entries = [e for e in ledger if e.get("name") == name]
    return ledger_skill(entries[-1]) if entries else name


def ledger_skill(entry: dict[str, Any]) -> str:
    """The skill a ledger entry's draft becomes: its `skill` (a draft of other namespaces is
    named `<skill>-<tag>`, hunt-untrusted #2, session 27), else its name (entries before it)."""
    skill = entry.get("skill")
    return skill if isinstance(skill, str) and skill else str(entry.get("name"))


def _best_overlap(sources: list[str], entries: list[dict[str, Any]]) -> str | None:
    """The name of the ledger entry sharing most sources with a group (at least half of it)."""
    wanted = set(sources)
    best, best_share = None, 0.5
    for entry in entries:
        share = len(wanted & set(entry["sources"])) / max(1, len(set(entry["sources"])))
        if share >= best_share and isinstance(entry.get("name"), str):
            best, best_share = entry["name"], share
    return best


def _mentions(exp: Experience, name: str) -> bool:
    """Whether a run says it used the skill: a `skill:<name>` tag, or a step loading it."""
    if f"skill:{name}" in exp.tags or name in exp.tags:
        return True
    pattern = re.compile(rf"(?<![\w-]){re.escape(name)}(?![\w-])")
    for step in exp.steps:
        blob = f"{step.action or ''} {step.action_input if step.action_input is not None else ''}"
        if "skill" in blob.lower() and pattern.search(blob):
            return True
    return False


def _add_pitfalls(body: str, lessons: list[str], sources: list[str]) -> str:
    """The body with new pitfalls added to its Pitfalls section (or a new one), and provenance."""
    items = "\n".join(f"- {lesson}" for lesson in lessons)
    note = (f"\n\nRevised by skillbank after failures in: {', '.join(sources)}.\n")
    match = re.search(r"^#{1,3}\s+(pitfalls|gotchas|common mistakes)\b.*$", body, re.I | re.M)
    if match:
        following = re.search(r"^#{1,3}\s+", body[match.end():], re.M)
        end = match.end() + following.start() if following else len(body)
        merged = body[:end].rstrip() + "\n" + items + "\n\n" + body[end:].lstrip("\n")
        return merged.rstrip() + note
    provenance = re.search(r"^#{1,3}\s+provenance\b", body, re.I | re.M)
    block = f"## Pitfalls\n\n{items}\n\n"
    if provenance:
        return (body[:provenance.start()] + block + body[provenance.start():]).rstrip() + note
    return body.rstrip() + "\n\n" + block.rstrip() + note
