"""The records every layer speaks: skills, experiences, guidelines and search hits.

Pydantic models so that faces (MCP, LangChain, LlamaIndex, the CLI) can hand them straight to
JSON schemas and structured output without a second set of types.
"""

from __future__ import annotations

import unicodedata
from datetime import datetime, timezone
from typing import Any, Generic, Literal, TypeVar

from pydantic import BaseModel, ConfigDict, Field, field_validator, model_validator

from skillbank.moments import stored_utc
from skillbank.relevance import relevance as hit_relevance

#: Each record builds its validator and schema when first used, not at import (#27): importing
#: this module is on the path to a server's first answer, which uses a few records (Skill, Hit,
#: SyncReport …); building all seventeen cost ~0.1-0.2 CPU-s there. Same validation, same schemas.
_DEFERRED = ConfigDict(defer_build=True)

#: Upper bounds on free-text fields. Memory is fed by models and networks; a record that carries
#: a megabyte of "feedback" is an attack or a bug, and must be refused, not stored.
MAX_TEXT = 20_000
MAX_SHORT = 2_000
MAX_STEPS = 500
MAX_TAGS = 32


def clip_task(text: str) -> str:
    """A task formed from a person's message: its head, at most `MAX_TEXT` characters, with an
    ellipsis where it was cut. A user who pasted a 24,000-character log as an agent's first
    message lost the run and the critique it got (`task is 24044 characters`), silently: the
    agent had worked. The message itself is kept as the run's first step."""
    text = repaired(text)
    return text if len(text) <= MAX_TEXT else text[:MAX_TEXT - 1].rstrip() + "\u2026"


def repaired(text: str) -> str:
    """`text` with each lone surrogate (an emoji escape a web client cut in half, "\\ud83d")
    as U+FFFD. For text taken from a chat: the run's memory and record go on, one character
    short, where the surrogate made the block give no memory and the run go unrecorded
    (hunt-li, session 21). A caller's own argument still gets the clear error
    (`fsutil.check_unicode`). In NFC, as `check_unicode` gives a caller's text."""
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        text = text.encode("utf-16", "surrogatepass").decode("utf-16", "replace")
    return text if text.isascii() else unicodedata.normalize("NFC", text)

Outcome = Literal["success", "failure", "partial", "unknown"]
GuidelineStatus = Literal["active", "pending", "retired", "superseded"]
Why = Literal["dense", "keyword", "both"]


def utcnow() -> datetime:
    """Timezone-aware now, so stored timestamps compare and sort correctly everywhere."""
    return datetime.now(timezone.utc)


class Usage(BaseModel):
    """How often an item was shown to a model and how often that helped.

    Feeds the utility prior in ranking and the pruning of memories that keep not helping.
    """

    model_config = _DEFERRED

    uses: int = 0
    successes: int = 0
    failures: int = 0
    last_used: datetime | None = None
    #: Outsiders' nets on the item (principal -> net vote, helpful +1, harmful -1), each
    #: counted once in successes/failures as its sign (`skillbank.outside_votes`). A curator
    #: could not see why a record's score moved; filled on a record's detail (`skills.load`,
    #: `experiences.get`), left empty in lists and search hits (one look-up per record). In
    #: `usage.untrusted(id)`: who cast the untrusted votes, each principal's net.
    outside: dict[str, int] = Field(default_factory=dict)

    @property
    def success_rate(self) -> float | None:
        judged = self.successes + self.failures
        return None if judged == 0 else self.successes / judged


class Resource(BaseModel):
    """A file shipped beside a SKILL.md (scripts/, references/, assets/ …)."""

    model_config = _DEFERRED

    path: str  # relative to the skill folder, with forward slashes
    size: int
    sha256: str


class SecurityFinding(BaseModel):
    """One thing a security scan of a skill found (skillbank.memories.skills.scan).

    Kept apart from `Finding` (a file's validation result): its severity scale is the
    scanner's, and what it does depends on the skill's trust level (skills/trust.py)."""

    model_config = _DEFERRED

    severity: Literal["critical", "high", "medium", "low", "info"]
    rule: str
    title: str = ""
    category: str = ""
    file: str | None = None  # relative to the skill folder
    line: int | None = None
    snippet: str = ""


class SkillProposal(BaseModel):
    """Skills in git (skillbank/team/skills_repo.py): the commit a save or adoption became, on a
    proposal branch for a reviewer to merge into the served branch (or, `published`, merged)."""

    model_config = _DEFERRED

    branch: str
    commit: str
    author: str
    email: str
    remote: str
    served_branch: str
    published: bool = False
    changed: bool = True  # False: the branch already held exactly this
    note: str = ""


class Skill(BaseModel):
    """A skill as loaded from its SKILL.md. The file is the truth; this is a view of it."""

    model_config = ConfigDict(frozen=False, defer_build=True)

    name: str
    description: str
    body: str = ""
    path: str = ""  # absolute path of the SKILL.md
    root: str = ""  # the skill root it was found in
    frontmatter: dict[str, Any] = Field(default_factory=dict)  # every key, verbatim
    resources: list[Resource] = Field(default_factory=list)
    content_hash: str = ""
    writable: bool = False
    usage: Usage = Field(default_factory=Usage)
    # Trust (skillbank.memories.skills.trust): who the skill's folder belongs to, what a scan
    # found, where review stands, and whether it is kept out of routing and disclosure.
    trust: Literal["own", "team", "third-party"] = "own"
    scan: str = ""  # "clean" | "findings" | "not scanned" | "scan failed: <why>" | "" (not asked)
    findings: list[SecurityFinding] = Field(default_factory=list)
    review: str = ""  # "" (none needed) | "accepted" | "pending: <why>" | "rejected"
    held: bool = False  # kept out of search, catalog, context and disclosure until accepted
    notes: list[str] = Field(default_factory=list)  # shown beside the skill to agent and person
    #: The version (`skill_versions`) its scan findings and review state were taken for, in the
    #: same read of its files ("": not looked at): a page shows both without a moment between
    #: them, in which a file could change (review 3 #3, session 31).
    version: str = ""
    #: Skills in git: a save or adoption not yet served, as the commit it became (else None).
    proposal: SkillProposal | None = None


class Step(BaseModel):
    """One step of an agent trajectory."""

    model_config = _DEFERRED

    thought: str | None = None
    action: str | None = None  # a tool name or a plain description of what was done
    action_input: Any = None
    observation: str | None = None  # the tool result or what was seen

    @field_validator("thought", "action", "observation")
    @classmethod
    def _bounded(cls, value: str | None) -> str | None:
        if value is not None and len(value) > MAX_TEXT:
            return value[:MAX_TEXT]  # observations are routinely huge tool dumps: keep the head
        return value


class Lesson(BaseModel):
    """Something learned from one or more experiences, phrased to be reused."""

    model_config = _DEFERRED

    kind: Literal["success_pattern", "failure_trigger", "comparison", "note"] = "note"
    text: str = Field(min_length=1, max_length=MAX_SHORT)
    when_to_use: str = Field(default="", max_length=MAX_SHORT)


class Experience(BaseModel):
    """What an agent tried on a task and how it went. Appended to a journal, never edited."""

    model_config = _DEFERRED

    id: str = ""
    task: str = Field(min_length=1, max_length=MAX_TEXT)
    steps: list[Step] = Field(default_factory=list, max_length=MAX_STEPS)
    outcome: Outcome = "unknown"
    score: float | None = None
    feedback: str | None = Field(default=None, max_length=MAX_TEXT)
    lessons: list[Lesson] = Field(default_factory=list)
    when_to_use: str = Field(default="", max_length=MAX_SHORT)
    tags: list[str] = Field(default_factory=list, max_length=MAX_TAGS)
    namespace: str = "default"
    source: str | None = None  # which experience(s) a distilled record came from
    kind: Literal["experience", "lesson"] = "experience"
    created: datetime = Field(default_factory=utcnow)
    usage: Usage = Field(default_factory=Usage)
    # "pending": written by an untrusted caller, never recalled until a trusted approve()
    status: Literal["active", "retired", "pending"] = "active"
    duplicates: int = 0  # near-identical records folded into this one
    #: The conversation this experience is (a LangChain thread id, a LlamaIndex session): each
    #: later turn of it updates this record instead of adding another (`record_messages`).
    thread: str | None = Field(default=None, max_length=MAX_SHORT)
    #: When a later turn of that conversation last updated this record (None: only its first
    #: turn, at `created`). A face that lost its state of a thread picks up its open episode
    #: only while this is recent (`thread_pickup_seconds`; review 1 #2, session 32).
    updated: datetime | None = None

    @field_validator("updated")
    @classmethod
    def _updated_in_utc(cls, value: datetime | None) -> datetime | None:
        return None if value is None else stored_utc(value)

    @field_validator("created")
    @classmethod
    def _created_in_utc(cls, value: datetime) -> datetime:
        """A `created` without a zone is UTC. `experiences import` stored a line's zone-less
        time naive, and `skills propose` then failed for the whole namespace comparing it with
        aware ones (TypeError, hunt-time #7, session 29); records stored so are made aware
        when read, as guideline files' times are."""
        return stored_utc(value)


class GuidelineSource(BaseModel):
    """A critique a guideline came from, kept so a person can see why the rule exists."""

    model_config = _DEFERRED

    critique: str = Field(max_length=MAX_TEXT)
    task: str | None = Field(default=None, max_length=MAX_TEXT)
    source: str = "user"
    score: float | None = None
    at: datetime = Field(default_factory=utcnow)


class SourceRecord(GuidelineSource):
    """A source as stored in the guideline's file: the critique plus the wording it contributed.

    ``rule`` is the candidate rule the critique was distilled into and ``sentence`` the critique
    sentence it came from; both feed the guideline's matching profile and show a person which
    wording each reinforcement brought.
    """

    rule: str | None = Field(default=None, max_length=MAX_SHORT)
    sentence: str | None = Field(default=None, max_length=MAX_SHORT)
    #: False for a critique or rule from an untrusted caller; None in files written before
    #: trust was recorded per source (read as trusted, as those files were).
    trusted: bool | None = None


class Guideline(BaseModel):
    """One durable rule for the agent, stored as `<root>/guidelines/<topic>/<id>.md`."""

    model_config = _DEFERRED

    id: str
    topic: str = "general"
    text: str = Field(min_length=1, max_length=MAX_SHORT)
    when_to_use: str = Field(default="", max_length=MAX_SHORT)
    status: GuidelineStatus = "active"
    helpful: int = 0
    harmful: int = 0
    reinforcements: int = 0
    sources: list[GuidelineSource] = Field(default_factory=list)
    supersedes: list[str] = Field(default_factory=list)
    superseded_by: str | None = None
    #: Guidelines that looked alike without strong evidence of being one rule (kept apart).
    related: list[str] = Field(default_factory=list)
    #: Rules of namespaces this rule's namespace reads (a team's) that this newer rule
    #: contradicts: not served beside it to whoever writes its namespace; they stay as they
    #: are for everyone else (`guidelines.shared_rules`, hunt-teamvotes #1, session 38).
    overrides: list[str] = Field(default_factory=list)
    #: Votes from untrusted callers: recorded, never a reason to change the status.
    untrusted_helpful: int = 0
    untrusted_harmful: int = 0
    #: Net votes (helpful +1, harmful -1) of trusted principals who may not retire the rule
    #: (`Scope.can_change` false for its namespace), by principal: each adds at most one to
    #: `helpful`/`harmful` (the sign of its net) and nothing toward the retire margin
    #: (`GuidelineReview.vote` says why).
    outside_votes: dict[str, int] = Field(default_factory=dict)
    namespace: str = "default"
    created: datetime = Field(default_factory=utcnow)
    updated: datetime = Field(default_factory=utcnow)
    path: str = ""


T = TypeVar("T")


#: What `GuidelineMemory.learn` did with one candidate rule.
LearnAction = Literal["added", "merged", "superseded", "ignored", "pending"]


class LearnEntry(BaseModel):
    """What happened to one candidate rule."""

    model_config = _DEFERRED

    action: LearnAction
    guideline_id: str | None = None
    text: str
    superseded_id: str | None = None
    detail: str = ""
    #: The existing rules nearest to this one when it was learnt (id, text, status, similarity),
    #: so a curating agent can replace (``replaces=<id>``), retire or leave them.
    nearest: list[dict[str, Any]] = Field(default_factory=list)


class LearnReport(BaseModel):
    """What one `learn` call did, candidate by candidate."""

    model_config = _DEFERRED

    entries: list[LearnEntry] = Field(default_factory=list)
    #: Some rule this call added or reinforced is waiting for a person's approval.
    pending_review: bool = False
    #: Who read the critique: "model" (an LLM distiller's model), "rules" (the model-free
    #: distiller, or an LLM distiller's fallback), None (the caller gave the rules, or a custom
    #: distiller that does not say).
    distilled_by: str | None = None
    #: Why the model's rules were not used (this call's own: the distiller's `last_error` is
    #: shared by every call), e.g. "no reply within 120 s (SKILLBANK_DISTILLER_TIMEOUT)".
    distill_error: str | None = None

    def ids(self, *actions: str) -> list[str]:
        """Guideline ids touched (created, merged, superseding), optionally only for `actions`."""
        out: list[str] = []
        for entry in self.entries:
            if entry.guideline_id and (not actions or entry.action in actions):
                if entry.guideline_id not in out:
                    out.append(entry.guideline_id)
        return out

    @property
    def added(self) -> list[LearnEntry]:
        return [e for e in self.entries if e.action == "added"]

    @property
    def merged(self) -> list[LearnEntry]:
        return [e for e in self.entries if e.action == "merged"]

    @property
    def superseded(self) -> list[LearnEntry]:
        return [e for e in self.entries if e.action == "superseded"]

    @property
    def pending(self) -> list[LearnEntry]:
        return [e for e in self.entries if e.action == "pending"]

    @property
    def ignored(self) -> list[LearnEntry]:
        return [e for e in self.entries if e.action == "ignored"]


class Hits(list):
    """Search results, plus the best raw evidence seen for the query (for "nothing fits").

    What `skills.search`, `guidelines.search` and `experiences.recall` return on every path
    (recall and guideline search gave a plain list when the index answered: session 32)."""

    best_dense: float = 0.0
    best_keyword: float = 0.0
    # False while some items are searchable by keyword only (first index still embedding, or
    # no embedding model: keyword-only mode); `pending` says how many.
    dense_complete: bool = True
    pending: int = 0
    # Skills left out because the caller lacks tools they declare: {name: [missing tools]}
    # (skills.search(..., available_tools=[...]); see memories/skills/dependencies.py).
    missing_tools: dict = {}
    # why the answer is empty when it is not "nothing fits" (a request of emoji alone:
    # `query_limits.wordless`), on skill, guideline and experience search alike
    reason: str = ""
    # why these answers came without dense search (the index's server down, no model), if so
    note: str = ""


class Distilled(list):
    """Lessons or rules and who distilled them. What `experiences.distill` returns: the ids of
    the lessons it stored (a plain `list` to every caller), with `distilled_by` and
    `distill_error` as `LearnReport` has them: "model" (an LLM distiller's model wrote them),
    "rules" (the model-free distiller, or an LLM distiller's fallback), None (a custom
    distiller that does not say); `distill_error`, why the model's were not used (this call's
    own: the distiller's `last_error` is shared by every call). A distiller's own results are
    this type too (`skillbank.distill.llm`), where `reason` is `distill_error`.

    `experiences.distill` returned a bare list, so a caller could not tell a model's lessons
    from the fallback's, nor why the model failed (session 33)."""

    distilled_by: str | None = None
    distill_error: str | None = None

    def __init__(self, items: Any = (), distilled_by: str | None = None,
                 distill_error: str | None = None):
        super().__init__(items)
        self.distilled_by = distilled_by
        self.distill_error = distill_error

    @property
    def reason(self) -> str | None:
        """`distill_error`, by the name a distiller's results have always given it."""
        return self.distill_error


class RecordedId(str):
    """What `experiences.record` returns: the record's id (a plain `str` to every caller) that
    also says whether this run was folded into a record stored before (`folded`, `note`), and
    the record's `status` ("pending" for an untrusted caller's run, which that caller cannot
    read back with `get`: a pending record is shown only to its reviewers).

    A folded run returns the older record's id; the MCP tool answered it with `"note": ""`, so
    an agent believed its run was stored on its own (hunt i18n: two different Chinese runs
    were folded into one and the second feedback was lost without a word).
    """

    folded: bool
    note: str
    status: str

    def __new__(cls, value: str, folded: bool = False, note: str = "",
                status: str = "active") -> "RecordedId":
        made = super().__new__(cls, value)
        made.folded = folded
        made.note = note
        made.status = status
        return made

    @classmethod
    def folded_into(cls, record_id: str) -> "RecordedId":
        return cls(record_id, folded=True, note=(
            f"folded into {record_id}: it repeats a run stored before (a near-identical task "
            "with the same outcome, feedback and lessons), so that record counts one run more "
            "and nothing new was stored"))


class Hit(BaseModel, Generic[T]):
    """A search result: the record, a score (higher is better) and why it matched."""

    model_config = _DEFERRED

    id: str
    score: float
    why: Why
    record: T
    dense: float | None = None  # cosine similarity of the best embedded text, when seen densely
    keyword: float | None = None  # share of the query's best possible BM25 score matched

    @property
    def relevance(self) -> float:
        """How closely the hit matches the query, 0..1 on one scale for every memory (its
        dense cosine, else its keyword match: `skillbank.relevance`). `score` is what the
        search ranked by, comparable only within one search (hunt-rag #3, session 24)."""
        return hit_relevance(self.dense, self.keyword)

    @property
    def shown(self) -> bool:
        """Whether the hit's score shows as more than 0.000. The CLI's search table leaves the
        others out ("no evidence"), and `skills eval` counts as a trigger exactly what that
        table shows: it counted every hit returned, so a should-not query "fired" on a skill
        scored 4e-06 (hunt-routing #8, session 28)."""
        return round(float(self.score or 0), 3) > 0

    # Convenience accessors so callers can write hit.name / hit.text without digging.
    @property
    def name(self) -> str:
        return getattr(self.record, "name", self.id)

    @property
    def path(self) -> str:
        return getattr(self.record, "path", "")

    @property
    def text(self) -> str:
        return getattr(self.record, "text", "") or getattr(self.record, "task", "")

    @property
    def status(self) -> str | None:
        return getattr(self.record, "status", None)


class SkillDraft(BaseModel):
    """A skill written from experience, waiting outside the routed library for a person.

    Lives at `<root>/drafts/<name>/SKILL.md` until `adopt` moves it into the skills folder;
    `sources` are the experience ids it was drawn from, `revises` the skill it would replace
    (with `diff` against that skill's SKILL.md as it is when the draft is read).
    """

    model_config = _DEFERRED

    name: str
    path: str
    description: str
    sources: list[str] = Field(default_factory=list)
    revises: str | None = None
    diff: str | None = None
    reason: str = ""
    drafted_by: str = "rules"  # "rules", or "model" when an LLM wrote the text
    #: A revision: the hash of the SKILL.md text it was drawn from (after `edit_draft`, of the
    #: one it was edited against; None on new skills). Every draft: the hash of its own SKILL.md
    #: as skillbank wrote it, so `propose` tells a person's edit and never writes over it
    #: (hunt-drafts #1, session 26; new-skill drafts kept none before). None on drafts written
    #: before they were kept.
    base_hash: str | None = None
    written_hash: str | None = None
    #: Read, not kept: the revised skill's SKILL.md is no longer the text the draft was drawn
    #: from, so adopting it as it is would undo those changes and is refused (hunt-author #1,
    #: session 24: an author's edit made after `propose` vanished on `adopt`).
    base_changed: bool = False
    created: datetime = Field(default_factory=utcnow)
    status: Literal["pending", "adopted", "discarded"] = "pending"
    #: The namespaces of the experiences it was drawn from: only a caller who reads all of them
    #: sees the draft, only one who reviews all of them adopts or discards it (skillbank.scope).
    #: None on drafts written before namespaces were recorded (read as the bank's namespace).
    namespaces: list[str] | None = None
    #: The skill adopting it writes: the revised skill, or the new skill's name. A draft drawn
    #: from namespaces other than the bank's own is named apart from it (`<skill>-<tag>`,
    #: `drafting.namespace_tag`), so drafts of two namespace sets never take or reveal each
    #: other's names (hunt-untrusted #2 and #3, session 27). Read as `revises` or `name` on
    #: drafts written before it was kept.
    skill: str | None = None

    @model_validator(mode="after")
    def _skill_it_becomes(self) -> "SkillDraft":
        if self.skill is None:
            self.skill = self.revises or self.name
        return self


class SkillVersion(BaseModel):
    """An earlier SKILL.md of a skill, kept as a file under `<skill>/.versions/`."""

    model_config = _DEFERRED

    name: str
    version: str  # file stem: a sortable UTC stamp
    path: str
    saved: datetime
    reason: str = ""
    description: str = ""


class Finding(BaseModel):
    """One validation result for a file: what is wrong, how bad, where."""

    model_config = _DEFERRED

    severity: Literal["error", "warning"]
    code: str
    message: str
    path: str | None = None

    def __str__(self) -> str:
        where = f"{self.path}: " if self.path else ""
        return f"{where}{self.severity} [{self.code}] {self.message}"


class SyncReport(BaseModel):
    """What a sync did, so a CLI, a log or a test can say exactly what changed."""

    model_config = _DEFERRED

    added: list[str] = Field(default_factory=list)
    changed: list[str] = Field(default_factory=list)
    removed: list[str] = Field(default_factory=list)
    unchanged: int = 0
    skipped: list[str] = Field(default_factory=list)  # paths that could not be loaded
    findings: list[Finding] = Field(default_factory=list)
    embedded: int = 0  # how many texts were sent to the embedding function (in this call)
    #: Texts this sync staged and left to be embedded behind it (`sync(embed=False)`: a
    #: watcher's own thread, the MCP server's start), searchable by keyword meanwhile; 0 when
    #: the sync embedded them itself. A watch event said "0 texts embedded" for the skill it
    #: had just added (hunt-clicorpus #4, session 36).
    queued: int = 0
    seconds: float = 0.0
    #: What syncs no one asked for (a watcher's, a read's re-check, the opening sync) put in
    #: the index since the last sync someone did ask for, by "added"/"changed"/"removed":
    #: the three lists above are this sync's own (`skills/unasked.py`, hunt-corpus #4).
    already: dict[str, list[str]] = Field(default_factory=dict)

    @property
    def changed_anything(self) -> bool:
        return bool(self.added or self.changed or self.removed)
