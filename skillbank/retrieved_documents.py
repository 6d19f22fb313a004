"""How memory search hits become retriever documents, for the LangChain and LlamaIndex retrievers.

Core, not adapter code: which hits fill `k` past filters and repeats, and what each document
says, is memory logic both frameworks' retrievers share (it lived in `adapters/`, which are
meant to be thin faces; session 25).

One text for the model (the content once; a skill's instructions on request), metadata worth
filtering on (never empty, never a file path), and the filters both retrievers accept. Calls the
facade only (`bank.skills.search`, `bank.guidelines.search`, `bank.experiences.recall`) and the
core's rules for what a hit is worth and which experiences say something new
(`Hit.relevance`, `skillbank.shown_experiences`).

A document's score is one number in [0, 1], higher is closer: a skill's fit probability, a
guideline's or experience's `Hit.relevance` (its dense cosine, else its keyword match); what
the search ranked by is ``rank_score``. A retrieval reads: it counts no use of what it returns.
"""

from __future__ import annotations

import logging
from typing import TYPE_CHECKING, Any

from skillbank import query_limits
from skillbank.errors import InvalidInputError
from skillbank.records import repaired
from skillbank.shown_experiences import DistinctExperiences, produced

if TYPE_CHECKING:
    from skillbank.bank import Skillbank

__all__ = ["RETRIEVER_KINDS", "normalise_kind", "search_hits", "document_score", "hit_document",
           "retrieve", "unsearchable"]

log = logging.getLogger("skillbank.retrievers")


def _round(score: Any) -> Any:
    return round(float(score), 4) if isinstance(score, (int, float)) else score


# --------------------------------------------------------------------------------------------
# Retriever documents
# --------------------------------------------------------------------------------------------

RETRIEVER_KINDS = ("skills", "guidelines", "experiences")
_KIND_ALIASES = {"skill": "skills", "skills": "skills", "guideline": "guidelines",
                 "guidelines": "guidelines", "experience": "experiences",
                 "experiences": "experiences", "lessons": "experiences"}


def normalise_kind(kind: str) -> str:
    try:
        return _KIND_ALIASES[str(kind).lower()]
    except KeyError:
        raise InvalidInputError(
            f"unknown retriever kind {kind!r}; use one of {list(RETRIEVER_KINDS)}") from None


#: Filters the facade applies itself (so they do not cost recall); others are applied to the
#: documents' metadata after a wider search.
_NATIVE_FILTERS = {"experiences": ("outcome", "tags", "kind"), "guidelines": ("topic",),
                   "skills": ()}


def search_hits(bank: "Skillbank", kind: str, query: str, k: int,
                namespace: str | None = None, native: dict[str, Any] | None = None,
                exclude_thread: str | None = None) -> list[Any]:
    """The facade search behind a retriever of `kind` (with the filters it understands).

    Experiences are recalled with ``count_use=False``: a retriever is a read, as a vector
    store's is, and each call counted a use of every record it returned, so a RAG chain that
    only read wrote the usage log, moved the records' ranking prior (the same query scored
    0.001, then 0.0007) and lowered their help rate, which `prune` retires by (hunt-rag #5,
    session 24). The memory block and middleware, which put memory in an agent's prompt and
    let it be rated, still count. `exclude_thread`: the calling conversation, whose open record
    is no past experience of its own (as `recall_experiences` leaves it out)."""
    kind = normalise_kind(kind)
    native = native or {}
    if kind == "skills":
        return bank.skills.search(query, k=k)
    if kind == "guidelines":
        return bank.guidelines.search(query, k=k, namespace=namespace, topic=native.get("topic"))
    extra = {"exclude_thread": exclude_thread} if exclude_thread else {}
    return bank.experiences.recall(query, k=k, namespace=namespace, count_use=False, **native,
                                   **extra)


def document_score(kind: str, hit: Any) -> float:
    """A document's score: a skill's calibrated fit probability (its search score), a
    guideline's or an experience's `Hit.relevance`. Their search scores are a rank-fusion value
    (0.0328 for an exact match) and a z-score plus a prior (0.001, even below 0): a
    `SimilarityPostprocessor(similarity_cutoff=0.3)` dropped every one (hunt-rag #3, session 24)."""
    return float(hit.score) if normalise_kind(kind) == "skills" else hit.relevance


def _plain(value: Any) -> Any:
    """Metadata values that every vector store and serializer accepts."""
    if value is None or isinstance(value, (str, int, float, bool)):
        return value
    if isinstance(value, (list, tuple)):
        return [_plain(v) for v in value]
    return str(value)


def hit_document(kind: str, hit: Any, body: str | None = None,
                 lessons: list[str] | None = None) -> tuple[str, str, dict[str, Any]]:
    """(id, text, metadata) for one search hit, as a model should read it.

    The text carries the content once (a skill's name and description, and its SKILL.md body
    when `body` is given; a rule; an experience's task, outcome, lessons, feedback, steps and
    what it produced); metadata has ``kind``, ``score`` (`document_score`), ``rank_score``
    (what the search ranked by) and ``why`` plus the fields worth filtering on, never an empty
    one and never a file path. `lessons`: the lessons an experience's text shows
    (`DistinctExperiences.keep`), None: all of them.
    """
    kind = normalise_kind(kind)
    record = hit.record
    meta: dict[str, Any] = {"score": _round(document_score(kind, hit)),
                            "rank_score": _round(hit.score), "why": hit.why}
    if kind == "skills":
        text = f"{record.name}: {record.description}"
        if body:
            text = f"{text}\n\n{body.strip()}"
        meta.update(kind="skill", name=record.name)
        return f"skill:{record.name}", text, meta
    if kind == "guidelines":
        meta.update(kind="guideline", topic=record.topic, status=record.status,
                    when_to_use=record.when_to_use)
        return record.id, record.text, _clean(meta)
    if record.kind == "lesson":  # its own lesson, once: not a "Task:" said twice
        lesson = record.lessons[0].text if record.lessons else record.task
        lines = [f"Lesson: {lesson}"]
        if record.when_to_use:
            lines.append(f"When: {record.when_to_use}")
        if record.source:
            lines.append(f"From: {record.source}")
        meta.update(kind="lesson", when_to_use=record.when_to_use, tags=list(record.tags),
                    namespace=record.namespace, source=record.source,
                    created=record.created.isoformat() if record.created else None)
        return record.id, "\n".join(lines), _clean(meta)
    lines = [f"Task: {record.task}", f"Outcome: {record.outcome}"]
    lessons = [lesson.text for lesson in record.lessons] if lessons is None else lessons
    if lessons:
        lines.append("Lessons: " + "; ".join(lessons))
    if record.feedback:
        lines.append(f"Feedback: {record.feedback}")
    # What the run produced, as the memory block's line shows it: the answer, not the step
    # that gave it ("Steps: final answer" was all a chat run's document said; hunt-rag #4).
    actions = [s.action for s in record.steps if s.action and s.action != "final answer"][:8]
    if actions:
        lines.append("Steps: " + " -> ".join(actions))
    answer = produced(record)
    if answer:
        lines.append(f"Produced: {answer}")
    meta.update(kind=record.kind, outcome=record.outcome, when_to_use=record.when_to_use,
                tags=list(record.tags), namespace=record.namespace,
                created=record.created.isoformat() if record.created else None)
    return record.id, "\n".join(lines), _clean(meta)


def _clean(meta: dict[str, Any]) -> dict[str, Any]:
    return {k: _plain(v) for k, v in meta.items() if v not in (None, "", [], ())}


def _matches(meta: dict[str, Any], filters: dict[str, Any]) -> bool:
    """Metadata equality filters: a value, a list of allowed values, or {"$in"/"$nin"/"$ne"}."""
    for key, wanted in filters.items():
        have = meta.get(key)
        values = have if isinstance(have, list) else [have]
        if isinstance(wanted, dict):
            for op, operand in wanted.items():
                if op == "$eq" and operand not in values:
                    return False
                if op == "$ne" and operand in values:
                    return False
                if op == "$in" and not set(values) & set(operand):
                    return False
                if op == "$nin" and set(values) & set(operand):
                    return False
        elif isinstance(wanted, (list, tuple, set)):
            if not set(values) & set(wanted):
                return False
        elif wanted not in values:
            return False
    return True


def retrieve(bank: "Skillbank", kind: str, query: str, k: int, *, namespace: str | None = None,
             filters: dict[str, Any] | None = None, include_body: bool = False,
             exclude_thread: str | None = None) -> list[tuple[str, str, dict[str, Any], float]]:
    """What a retriever returns: (id, text, metadata, score), at most `k`, best first.

    `filters` match the documents' metadata (``{"outcome": "failure"}``, ``{"tags": "csv"}``,
    ``{"topic": {"$in": ["data", "python"]}}``); the ones the facade knows are applied in the
    search, the rest to a wider candidate list. `include_body` adds each skill's instructions.
    `exclude_thread` is the calling conversation (a LangChain thread id, a LlamaIndex session):
    a retriever tool served an agent its own unfinished record as a past experience, where the
    memory tools leave it out (hunt-threads #4, session 38).
    """
    kind = normalise_kind(kind)
    if isinstance(k, bool) or not isinstance(k, int) or k < 1:
        raise InvalidInputError(f"k must be a positive integer, not {k!r}")
    if filters is not None and not isinstance(filters, dict):
        raise InvalidInputError("filter must be a dict of metadata key -> value")
    filters = dict(filters or {})
    for wanted in filters.values():
        bad = sorted(set(wanted) - {"$eq", "$ne", "$in", "$nin"}) if isinstance(wanted, dict) else []
        if bad:
            raise InvalidInputError(f"unsupported filter operator(s) {bad}; use $eq, $ne, $in "
                                    "or $nin")
    native: dict[str, Any] = {}
    for key in _NATIVE_FILTERS[kind]:
        if isinstance(filters.get(key), str):
            value = filters.pop(key)
            native[key] = [value] if key == "tags" else value
    query = repaired(query) if isinstance(query, str) else query  # a cut emoji: one char less
    problem = unsearchable(query)
    if problem:
        log.warning("%s retriever: no documents, as the query %s", kind, problem)
        return []
    fetch = k if not filters else min(max(4 * k, 20), MAX_FETCH)
    while True:
        hits = search_hits(bank, kind, query, fetch, namespace=namespace, native=native,
                           exclude_thread=exclude_thread)
        out = _documents(bank, kind, hits, k, filters, include_body)
        if len(out) >= k or len(hits) < fetch or fetch >= MAX_FETCH:
            return out
        # Filtered out or repeats: a wider search fills `k` (hits past the first `fetch`).
        fetch = min(max(4 * k, 20, 2 * fetch), MAX_FETCH)


def unsearchable(query: Any) -> str:
    """Why the memory cannot search `query` ('' when it can): over `MAX_QUERY_CHARS`, or a lone
    surrogate (an emoji escape cut in half; `retrieve` repairs one first, as the middleware
    repairs chat text, so the rest of the query is searched). A retriever answers such a query
    with no documents
    and logs the reason, as a retriever answers a query that matches nothing: the searches
    raise InvalidInputError, and an agent whose retriever tool (`create_retriever_tool`) raised
    ended its whole run on the exception, where the adapters' own tools answer a tool error
    (hunt-badinput #9, session 26). The caller's own mistakes (`k`, filters, a namespace) still
    raise: they are the program's to fix, not the model's."""
    if not isinstance(query, str):
        return ""  # the search names the wrong type
    return query_limits.unsearchable(query)


#: The longest query a retriever searches: skill search's and experience recall's limit.
MAX_QUERY_CHARS = query_limits.MAX_TASK_CHARS

#: The most hits a retrieval asks a memory for, to fill `k` past filters and repeats.
MAX_FETCH = 100


def _documents(bank: "Skillbank", kind: str, hits: list[Any], k: int, filters: dict[str, Any],
               include_body: bool) -> list[tuple[str, str, dict[str, Any], float]]:
    """The first `k` documents of `hits` that pass `filters`, each fact once.

    Experiences follow the memory block's rule (`skillbank.shown_experiences`): a run recorded
    again (one per chat thread) and a lesson its experience's document states already are left
    out, and an experience's "Lessons:" omits a lesson an earlier document states. Three runs
    of "Where is my order 42?" came back as three identical documents (hunt-rag #4, session 24).
    """
    if filters:
        hits = [hit for hit in hits if _matches(hit_document(kind, hit)[2], filters)]
    distinct = DistinctExperiences(hits) if kind == "experiences" else None
    out = []
    for hit in hits:
        lessons = distinct.keep(hit) if distinct is not None else None
        if distinct is not None and lessons is None:
            continue
        body = _skill_body(bank, hit.name) if include_body and kind == "skills" else None
        doc_id, text, meta = hit_document(kind, hit, body, lessons)
        out.append((doc_id, text, meta, document_score(kind, hit)))
        if len(out) >= k:
            break
    return out


def _skill_body(bank: Any, name: str) -> str:
    """A skill's body for a retrieved document: a skill not the bank's own comes fenced and
    labelled as data, as the memory block shows it (#28), never as bare instructions."""
    from skillbank.memories.skills.trust import as_data

    skill = bank.skills.load(name)
    trust = getattr(skill, "trust", "own")
    return skill.body if trust == "own" else as_data(skill.name, trust, skill.body)
