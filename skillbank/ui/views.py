"""What each page shows, gathered from the facade's public API only.

Nothing here touches a memory's internals or `bank.index(...)`: the browser must work the same
on an in-process bank and on a client bank that forwards calls to the process owning the root.
Optional features of newer banks (skill drafts, forgetting) are looked up by name and shown only
when the bank has them.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import date, datetime, time, timezone
from pathlib import Path
from typing import Any
from urllib.parse import urlencode

from skillbank.errors import InvalidInputError, NotFoundError, SkillbankError
from skillbank.tool_text import search_note, skill_search_note
from skillbank.ui.render import help_rate, percent

PAGE_SIZE = 50
TIMELINE_SIZE = 100
OUTCOMES = ("success", "failure", "partial", "unknown")
GUIDELINE_STATUSES = ("active", "pending", "superseded", "retired", "all")


# ----------------------------------------------------------------------------------- skills


def skills_page(bank: Any, query: str, page: int, invalid: bool = False) -> dict[str, Any]:
    """The library, or ranked search results with their scores and why they matched.

    Skills that break the Agent Skills spec are served (the spec's client guide: warn, load
    anyway), so the library marks them and `invalid` lists only them: a curator sees what
    `skillbank skills validate` would refuse without leaving the page."""
    query = query.strip()
    if query:
        hits = bank.skills.search(query, k=20)
        reason = getattr(hits, "reason", "")  # nothing looked for (emoji alone): say why
        return {"query": query, "hits": hits, "skills": [], "page": 1, "pages": 1,
                "total": len(hits), "drafts": drafts(bank), "spec": {}, "invalid": False,
                "why_empty": skill_search_note(False, {}, reason) if reason else ""}
    everything = bank.skills.list()
    spec: dict[str, list[Any]] = {}
    if invalid:  # one read per skill: only when asked for
        for skill in everything:
            errors = spec_errors(skill)
            if errors:
                spec[skill.name] = errors
        everything = [s for s in everything if s.name in spec]
    pages = max(1, -(-len(everything) // PAGE_SIZE))
    page = min(max(page, 1), pages)
    shown = everything[(page - 1) * PAGE_SIZE: page * PAGE_SIZE]
    if not invalid:
        spec = {s.name: errors for s in shown if (errors := spec_errors(s))}
    pending = drafts(bank)
    return {"query": "", "hits": [], "skills": shown, "page": page, "pages": pages,
            "total": len(everything), "drafts": pending, "shown": shown_hashes(pending),
            "draft_problems": draft_problems(bank), "spec": spec, "invalid": invalid}


def spec_errors(skill: Any) -> list[Any]:
    """How a loaded skill breaks the Agent Skills spec (errors of `skills validate`), or []."""
    return [f for f in validation_findings(getattr(skill, "path", "") or "")
            if f.severity == "error"]


def drafts(bank: Any) -> list[Any] | None:
    """Skill drafts written from experience, when this bank can draft (None: it cannot)."""
    lister = getattr(bank.skills, "drafts", None)
    if not callable(lister):
        return None
    return list(lister())


def draft_problems(bank: Any) -> list[Any]:
    """Draft folders that cannot be read as drafts, with why (`skills.draft_problems`): they
    vanished from the page without a word (hunt-ui #8, session 27). [] for a caller who may
    not review drafts, or a bank that cannot draft."""
    from skillbank.errors import PermissionDeniedError

    lister = getattr(bank.skills, "draft_problems", None)
    if not callable(lister):
        return []
    try:
        return list(lister())
    except PermissionDeniedError:
        return []


def draft_text(draft: Any) -> str | None:
    """A draft's SKILL.md as the page shows it, read once (None: it cannot be read)."""
    from skillbank.memories.skills.skill_file import MAX_SKILL_BYTES

    try:
        if Path(draft.path).stat().st_size > MAX_SKILL_BYTES:
            return None
        return Path(draft.path).read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError):
        return None


def shown_hashes(found: list[Any] | None) -> dict[str, str]:
    """Each draft's `draft_hash` as this page shows it: its Adopt form carries it back, and a
    draft edited since is refused (`SkillDrafts.adopt`: the browser adopted a text the
    reviewer never read, hunt-ui #3, session 27). An unreadable draft gets none (refused)."""
    from skillbank.memories.skills.drafts import draft_hash

    return {d.name: draft_hash(text) for d in found or ()
            if (text := draft_text(d)) is not None}


def draft_detail(bank: Any, name: str) -> dict[str, Any]:
    """One pending draft: its SKILL.md rendered, validated, and the diff when it revises; the
    text is read once, so the hash its Adopt form carries is that of the body shown."""
    from skillbank.memories.skills.drafts import draft_hash
    from skillbank.memories.skills.skill_file import parse_skill_text

    found = [d for d in (drafts(bank) or []) if d.name == name]
    if not found:
        why = [f.message for f in draft_problems(bank) if Path(f.path or "").name == name]
        raise NotFoundError(why[0] if why else f"no pending draft named {name!r}")
    draft = found[0]
    text = draft_text(draft)
    doc = parse_skill_text(text, path=draft.path, folder_name=str(draft.skill or name))[0] \
        if text is not None else None
    return {"draft": draft, "body": doc.body if doc is not None else "",
            "findings": validation_findings(draft.path, getattr(draft, "skill", None)),
            "shown": {name: draft_hash(text)} if text is not None else {}}


def skill_detail(bank: Any, name: str, listed: str = "") -> dict[str, Any]:
    """A skill's page. A SKILL.md that does not parse (half-saved, mid-merge) is shown as the
    file is, verbatim, beside its validation error (hunt-git #6: the page was a 400).

    With its version as read (`read_version`): a held skill's Accept is on this page and its
    files' pages, carrying the version they rendered, so what is pinned is what was read
    (review 3 #1, session 31); `listed`, the version /review listed, is compared with it."""
    from skillbank.memories.skills.last_good import is_as_it_is_note

    skill = bank.skills.load(name, include_held=True)  # a person may read a held skill
    usage = skill.usage
    return {"skill": skill, "findings": validation_findings(skill.path),
            "as_it_is": next((note for note in skill.notes if is_as_it_is_note(note)), ""),
            "help_rate": percent(usage.success_rate),
            "extra_frontmatter": {k: v for k, v in skill.frontmatter.items()
                                  if k not in ("name", "description")},
            **read_version(bank, skill.name, skill.version, listed)}


def resource_detail(bank: Any, name: str, relative: str, listed: str = "") -> dict[str, Any]:
    """One file of a skill, with the skill's version as the file was read (`read_version`)."""
    skill = bank.skills.load(name, include_held=True)  # its review state; its version before
    text = bank.skills.read_resource(skill.name, relative, include_held=True)
    return {"name": skill.name, "path": relative, "text": text, "skill": skill,
            **read_version(bank, skill.name, skill.version, listed)}


def current_version(bank: Any, name: str) -> str:
    """A skill's version as its files are now (`skill_versions`), "" if it cannot be had."""
    try:
        return bank.skills.skill_versions(name)[0].version
    except (SkillbankError, IndexError):
        return ""


def read_version(bank: Any, name: str, before: str, listed: str) -> dict[str, Any]:
    """The version of the content a page just read: `before` (taken as the read began) when
    the files are still that version now, else "" with `changing` set (they changed while the
    page was read: no version can be named for it, and it offers no Accept). `stale`: the page
    was opened for `listed`, a version /review listed, and renders another."""
    after = current_version(bank, name)
    changing = bool(before and after and before != after)
    version = "" if changing else after
    return {"version": version, "changing": changing, "listed": listed,
            "stale": bool(listed and version and listed != version)}


def validation_findings(path: str, folder_name: str | None = None) -> list[Any]:
    """The Agent Skills spec check of a skill file, strictly (as `skillbank skills validate`);
    its name checked against `folder_name`, the folder it will live in, when that is not the
    one it is in (a draft named apart from its skill, hunt-untrusted #3, session 27)."""
    from skillbank.memories.skills.skill_file import read_skill_file, validate_skill

    if not path:
        return []
    doc, loaded = read_skill_file(path)
    if doc is None:
        return loaded
    if folder_name is not None:
        loaded = [f for f in loaded if f.code != "name-mismatch"]
    strict = validate_skill(doc, path=path, folder_name=folder_name)
    seen = {(f.code, f.message) for f in strict}
    return [f for f in loaded if (f.code, f.message) not in seen] + strict


# ------------------------------------------------------------------------------- guidelines


def page_number(raw: str) -> int:
    """A `?page=` as typed: anything but a whole number is the first page."""
    try:
        return int(raw or 1)
    except ValueError:
        return 1


def guidelines_page(bank: Any, topic: str, status: str, namespace: str = "",
                    page: int = 1) -> dict[str, Any]:
    """Pending queue first, then rules by topic with votes and what they replaced, a page of
    TIMELINE_SIZE rules at a time: `?status=all` was 1.47 MB of HTML at 1,281 rules, every
    rule with its vote forms (scale hunt, session 18)."""
    everything = bank.guidelines.list(namespace="*")
    namespaces = sorted({g.namespace for g in everything})
    if namespace:
        everything = [g for g in everything if g.namespace == namespace]
    by_id = {g.id: g for g in everything}
    pending = [g for g in everything if g.status == "pending"]
    wanted = status or "active"
    if wanted not in GUIDELINE_STATUSES:  # "No bogus guidelines." read as an empty list
        raise InvalidInputError(f"unknown status {status!r}: the statuses are "  # (hunt-browser
                                f"{', '.join(GUIDELINE_STATUSES)}")  # #4, session 31)
    shown = [g for g in everything
             if (wanted == "all" or g.status == wanted) and (not topic or g.topic == topic)]
    # One total order (id breaks ties of topic and time): no rule on two pages, none on none.
    shown.sort(key=lambda g: (g.topic, -g.created.timestamp(), g.id))
    pages = max(1, -(-len(shown) // TIMELINE_SIZE))
    page = min(max(page, 1), pages)
    on_page = shown[(page - 1) * TIMELINE_SIZE: page * TIMELINE_SIZE]
    topics: dict[str, list[Any]] = {}
    for g in on_page:
        topics.setdefault(g.topic, []).append(g)
    filters = {k: v for k, v in (("status", wanted), ("topic", topic), ("namespace", namespace))
               if v}
    counts = {s: sum(1 for g in everything if g.status == s)
              for s in ("active", "pending", "superseded", "retired")}
    from skillbank.review_queue import guideline_detail, superseded_on_approval

    # The queue says what approval serves and stops serving in the words of every review
    # face (hunt-untrusted #1 and #4, session 27: it showed no when-to-use, and named rules
    # already superseded as ones approval stops serving).
    serves = {g.id: guideline_detail(g) for g in pending}
    stops = {g.id: superseded_on_approval(bank, g) for g in pending}
    return {"pending": pending, "serves": serves, "stops": stops, "topics": topics,
            "topic": topic, "status": wanted,
            "namespace": namespace, "namespaces": namespaces,
            "all_topics": sorted({g.topic for g in everything}), "counts": counts,
            "chains": {g.id: chain(by_id, g) for g in on_page if g.supersedes},
            "page": page, "pages": pages, "total": len(shown), "shown": len(on_page),
            "filters": urlencode(filters),
            "here": "/guidelines?" + urlencode({**filters, "page": page}),
            **guideline_file_problems(bank)}


def guideline_file_problems(bank: Any) -> dict[str, list[Any]]:
    """For a reviewer, the guideline files a hand edit did not get through: `unreadable`, those
    the bank could not read (a YAML slip: in no list or count, so the rule just vanished), and
    `ignored`, those read in part or not read because of their name (a `topic:` edited in the
    frontmatter, a `gl-… (copy).md`), which only a log line named (hunt-curator #4, s. 25)."""
    from skillbank.errors import PermissionDeniedError

    try:
        problems = list(bank.guidelines.problems())
    except PermissionDeniedError:
        problems = []
    return {"unreadable": [f for f in problems if f.severity == "error"],
            "ignored": [f for f in problems if f.severity != "error"]}


def chain(by_id: dict[str, Any], guideline: Any) -> list[Any]:
    """The rules this one replaced, newest first, following `supersedes` back (cycle-safe)."""
    out, seen, todo = [], {guideline.id}, list(guideline.supersedes)
    while todo:
        gid = todo.pop(0)
        if gid in seen:
            continue
        seen.add(gid)
        older = by_id.get(gid)
        if older is None:
            continue
        out.append(older)
        todo.extend(older.supersedes)
    return out


def guideline_detail(bank: Any, gid: str) -> dict[str, Any]:
    """A rule's page: its supersede chain both ways, the rules related to it, and a
    replacement that no longer exists said as such (`skillbank.guideline_links`)."""
    from skillbank.guideline_links import (GONE_NOTE, override_links, related_rules,
                                           replaced_by_gone)

    g = bank.guidelines.get(gid)
    everything = {x.id: x for x in bank.guidelines.list(namespace="*")}
    newer = []
    seen = {g.id}
    nxt = g.superseded_by
    while nxt and nxt not in seen and nxt in everything:
        seen.add(nxt)
        newer.append(everything[nxt])
        nxt = everything[nxt].superseded_by
    return {"g": g, "older": chain(everything, g), "newer": newer,
            "related": related_rules(g, everything),
            # Overrides both ways among the rules the viewer reads (review 3 #6, session 38).
            "overrides": override_links(g, everything)[0],
            "overridden_by": override_links(g, everything)[1],
            "replaced_by_gone": replaced_by_gone(g, everything), "gone_note": GONE_NOTE,
            "help_rate": percent(help_rate(g.helpful, g.harmful))}


# ------------------------------------------------------------------------------ experiences


@dataclass
class TimelineFilter:
    """The timeline's filters as typed in the page; `parse` checks them, naming each bad one in
    `problems` (the page is then a 400 that shows no records: it showed every record, as if
    they matched, hunt-browser #4, session 31)."""

    query: str = ""
    outcome: str = ""
    namespace: str = ""
    tag: str = ""
    since: date | None = None
    until: date | None = None
    kind: str = ""
    problems: list[str] = field(default_factory=list)

    @classmethod
    def parse(cls, params: Any) -> "TimelineFilter":
        f = cls(query=params.get("q", "").strip(),  # in any case, as the library reads them
                outcome=params.get("outcome", "").strip().lower(),
                namespace=params.get("namespace", "").strip(), tag=params.get("tag", "").strip(),
                kind=params.get("kind", "").strip().lower())
        if f.outcome and f.outcome not in OUTCOMES:
            f.problems.append(f"unknown outcome {f.outcome!r}: the outcomes are "
                              f"{', '.join(OUTCOMES)}")
            f.outcome = ""
        if f.kind and f.kind not in ("experience", "lesson"):
            f.problems.append(f"unknown kind {f.kind!r}: experience or lesson")
            f.kind = ""
        for name in ("since", "until"):
            raw = params.get(name, "").strip()
            if raw:
                try:
                    setattr(f, name, date.fromisoformat(raw))
                except ValueError:
                    f.problems.append(f"{name} must be a date like 2026-12-01, not {raw!r}")
        return f

    def keeps(self, record: Any) -> bool:
        created = record.created.astimezone(timezone.utc).date()
        return ((not self.outcome or record.outcome == self.outcome)
                and (not self.tag or self.tag in record.tags)
                and (not self.namespace or record.namespace == self.namespace)
                and (self.since is None or created >= self.since)
                and (self.until is None or created <= self.until))


def experiences_page(bank: Any, f: TimelineFilter) -> dict[str, Any]:
    """Newest first, filtered; with a query, ranked by recall (the namespace then defaults to
    the bank's, as recall always filters by one)."""
    kind = f.kind or None
    if f.query:
        since = (datetime.combine(f.since, time.min, tzinfo=timezone.utc)
                 if f.since else None)
        hits = bank.experiences.recall(
            f.query, k=TIMELINE_SIZE, outcome=f.outcome or None, tags=[f.tag] if f.tag else None,
            namespace=f.namespace or None, since=since, kind=kind, count_use=False)
        rows = [(h.record, h) for h in hits if f.keeps(h.record)]
        # Why nothing was looked for (a request of emoji alone): the page said "No experiences
        # match." as if recall had run (review 2 #6, session 34).
        why = search_note(hits, "experience") if getattr(hits, "reason", "") else ""
        return {"rows": rows, "total": None, "more": False, "why_empty": why}
    namespace = f.namespace or "*"
    total = bank.experiences.count(namespace=namespace, kind=kind)
    wanted = TIMELINE_SIZE
    filtered = bool(f.outcome or f.tag or f.since or f.until)
    limit = wanted * 4 if filtered else wanted + 1
    while True:
        asked = min(limit, total)
        batch = bank.experiences.list(namespace=namespace, kind=kind, limit=asked)
        rows = [(e, None) for e in batch if f.keeps(e)]
        older_than_window = (f.since is not None and batch and
                             batch[-1].created.astimezone(timezone.utc).date() < f.since)
        # A short batch means the store has nothing more: a record forgotten elsewhere between
        # count() and list() left `len(batch) >= total` unreachable, and the page spun for
        # good holding the bank lock (hunt-ui #1, session 37).
        if len(rows) > wanted or len(batch) >= total or len(batch) < asked or older_than_window:
            break
        limit *= 4
    return {"rows": rows[:wanted], "total": total, "more": len(rows) > wanted}


def pending_experiences(bank: Any, page: int = 1) -> dict[str, Any]:
    """Records from untrusted faces waiting for review (`pending`: None when this bank has no
    such queue), each with what approving it serves (`serves`: feedback, lessons, when to use,
    steps — `review_queue.experience_detail`, as the CLI shows it). The queue's Approve showed
    the task and feedback alone: a step's `curl … | sh` was approved unseen (hunt-ui #4,
    session 27).

    A page of `TIMELINE_SIZE` at a time, newest first, with the whole queue's count
    (`pending_total`): the queue stopped at 100 without a word, so older records dropped out
    of sight (hunt-ui #3, session 37); /review says "Showing 100 of N" with pages, so does this."""
    from skillbank.review_queue import experience_detail

    lister = getattr(bank.experiences, "pending", None)
    if not callable(lister):
        return {"pending": None, "serves": {}}
    total = bank.experiences.count(namespace="*", status="pending")
    pages = max(1, -(-total // TIMELINE_SIZE))
    page = min(max(page, 1), pages)
    records = list(lister(namespace="*", limit=page * TIMELINE_SIZE))
    records = records[(page - 1) * TIMELINE_SIZE:]
    here = f"/experiences?pending_page={page}" if page > 1 else "/experiences"
    return {"pending": records, "serves": {e.id: experience_detail(e) for e in records},
            "pending_total": max(total, len(records)), "pending_page": page,
            "pending_pages": pages, "pending_here": here}


def can_forget(bank: Any) -> bool:
    return callable(getattr(bank, "forget", None)) or \
        callable(getattr(bank.experiences, "forget", None))


def forget(bank: Any, item_id: str) -> Any:
    """Forget one record through the facade (`bank.forget`, else the experience memory's)."""
    fn = getattr(bank, "forget", None)
    if not callable(fn) and item_id.startswith(("exp-", "lsn-")):
        fn = getattr(bank.experiences, "forget", None)
    if not callable(fn):
        raise SkillbankError("this skillbank cannot forget records yet (no forget in its API)")
    return fn(item_id)


def experience_detail(bank: Any, eid: str) -> dict[str, Any]:
    e = bank.experiences.get(eid)
    return {"e": e, "help_rate": percent(e.usage.success_rate)}


# ---------------------------------------------------------------------------------- context


def newest_forget(bank: Any) -> Any:
    """Where the forgetting stands, by any process or face: the newest forget the audit log
    holds, by its place in the log (None: none yet). A kept context preview is dropped when
    this changes (docs/ui.md: forget means gone, whoever forgot it; hunt-ui #5, session 27).

    Not "a forget stamped at or after the preview was built": a forget made after the clock
    stepped back is stamped earlier than the preview, so the preview kept showing the forgotten
    text (hunt-time #9, session 29); the log's order is the order events were written. A log
    that cannot be read gives a value equal to nothing: the preview is built again rather than
    risk it. A scoped view's own `audit` is the log as its caller may read it (refused below
    reviewer, hunt-scope #2, session 28): this check reads the bank's, and shows none of it."""
    from skillbank.scoped import ScopedBank
    from skillbank.ui.audit_view import audit_log_of

    whole = bank.bank if isinstance(bank, ScopedBank) else bank
    try:
        log = audit_log_of(whole)
        if hasattr(log, "newest_mark"):  # the file log: its newest month only
            return log.newest_mark("forget")
        newest = log.query(action="forget", limit=1)  # PostgreSQL: one indexed row
    except (OSError, SkillbankError):
        return object()
    return newest[-1] if newest else None


def context_preview(bank: Any, task: str, budget_raw: str, namespace: str) -> dict[str, Any]:
    try:
        budget = int(budget_raw or 1500)
    except ValueError:
        raise InvalidInputError(f"the budget must be a whole number of tokens, not "
                                f"{budget_raw!r}") from None
    if budget < 0 or budget > 200_000:
        raise InvalidInputError("the budget must be between 0 and 200,000 tokens")
    if not task.strip():
        raise InvalidInputError("type the task an agent is about to do")
    ctx = bank.context_for(task, budget_tokens=budget, namespace=namespace or None)
    return {"ctx": ctx, "budget": budget}
