"""Experience recall by the journal's own full-text search, while the index does not answer.

`ExperienceMemory.recall` falls back to it during a Chroma outage (PostgreSQL's full-text
search in team mode): the same filters, scope, evidence floor and use counting as
`RecallMixin.recall`, so one judgement holds whichever search answered.
"""

from __future__ import annotations

import inspect
from typing import Any

from skillbank import scope as scopes
from skillbank.errors import InvalidInputError
from skillbank.memories.experiences.recall import MIN_KEYWORD, RecallMixin
from skillbank.memories.experiences.threads import in_open_episode
from skillbank.outside_votes import outsider_of
from skillbank.records import Experience, Hit, Hits


def recall_by_journal_text(memory: Any, task: str, *args: Any, **kwargs: Any) -> Hits | None:
    """Recall by the journal's full-text search, with recall's filters and scope (`memory`'s);
    None when the journal has no search of its own (the files: the index's keyword side
    answers instead)."""
    from skillbank.keyword import tokenize
    from skillbank.memories.experiences.indexing import _index_item
    from skillbank.memories.experiences.recall import (
        MAX_K, MIN_SHARED_TOKENS, _predicate, shared_evidence)
    from skillbank.records import MAX_TEXT
    from skillbank.unread import mostly_unread

    bound = inspect.signature(RecallMixin.recall).bind(memory, task, *args, **kwargs)
    bound.apply_defaults()
    a = bound.arguments
    k = a["k"]
    if not isinstance(task, str) or not task.strip():
        return Hits()
    if isinstance(k, bool) or not isinstance(k, int) or not 0 <= k <= MAX_K:
        raise InvalidInputError(f"k must be an integer from 0 to {MAX_K}")
    scope = memory._scope()
    spaces = memory._read_spaces(a["namespace"], scope)
    if not spaces or k == 0:
        return Hits()
    passes = _predicate(memory._where(spaces, a["outcome"], a["tags"], a["since"], a["kind"]))
    found = memory.journal.search(task, max(50, 3 * k),
                                None if scopes.ALL in spaces else tuple(spaces))
    if found is None:
        return None
    # A task the model does not read is judged as recall judges it (MIN_SHARED_TOKENS), not
    # by the full-text share of its words: to PostgreSQL a clause of Chinese or Japanese is
    # one word, so the task and two sentences more shared 0.2 with its own run, and recall
    # had it while the full-text fallback dropped it (18 of 20 such requests).
    words = set(tokenize(task[:MAX_TEXT])) if mostly_unread(task) else None
    hits = Hits()
    for row in found:
        try:
            record = Experience.model_validate(row["record"])
        except (ValueError, TypeError):
            continue
        item = _index_item(record, row["loc"], row["digest"], row["status"],
                           row["duplicates"])
        meta = item.metadata
        if in_open_episode(meta, a["exclude_thread"]) or not passes(meta):
            continue
        if words is None:
            if row["score"] < MIN_KEYWORD:
                continue
        elif shared_evidence(words, words & set(tokenize(item.keyword_text)),
                             record.task) < MIN_SHARED_TOKENS:
            continue
        hits.append(Hit[Experience](
            id=record.id, score=row["score"], why="keyword", keyword=row["score"],
            record=record.model_copy(update={"status": row["status"],
                                             "duplicates": row["duplicates"],
                                             "usage": memory.usage.get(record.id)})))
        if len(hits) >= k:
            break
    if a["count_use"]:
        for hit in hits:
            memory.usage.record(hit.id, use=1, trusted=scope.trusted,
                              principal=scope.principal,  # (untrusted: once each)
                              outsider=outsider_of(scope, hit.record.namespace))
    return hits
