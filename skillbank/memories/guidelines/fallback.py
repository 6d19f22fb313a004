"""Searching guidelines while the index cannot answer: the records' own full-text search.

The index (Chroma, dense and keyword) is derived from the records. While its server does not
answer, or while it has missed writes (``_index_behind``: kept in the records, indexed when the
server is back), a search asks the records themselves (`GuidelineRecords.search_text`: in team
mode, PostgreSQL's full-text search) and says so: the result is a `Hits` with
``dense_complete=False`` (what every face already reports as a keyword-only answer) and a
``note`` that begins as the index's own outage note does (`index_outage.CHROMA_DOWN`; a
collection the server lost: its own words, `INDEX_GONE`). A column
without a search of its own falls back to the index's in-process keyword side, with the same
note. A mixin of ``GuidelineMemory``, ahead of ``GuidelineSearch``.
"""

from __future__ import annotations

import contextvars
from typing import Any

from skillbank.index_outage import CHROMA_DOWN, INDEX_GONE, ChromaUnavailableError, is_outage
from skillbank.memories.guidelines.search import holding_enough
from skillbank.records import Hits
from skillbank.unread import mostly_unread

#: Why the current search answered without the index (None: it did not).
_WITHOUT_INDEX: contextvars.ContextVar[str | None] = contextvars.ContextVar(
    "skillbank_guidelines_without_index", default=None)


class GuidelineFallback:
    """`search` and `_fuse` with a way round an index that cannot answer."""

    def search(self, task: str, k: int = 5, namespace: str | None = None,
               topic: str | None = None) -> Hits:
        token = _WITHOUT_INDEX.set(None)
        try:
            hits = super().search(task, k, namespace, topic)  # type: ignore[misc]
            note = _WITHOUT_INDEX.get()
        finally:
            _WITHOUT_INDEX.reset(token)
        if note is not None:  # every rule was out of dense search's reach
            hits.dense_complete = False
            hits.pending = self._unseen(namespace, every=True)  # type: ignore[attr-defined]
            hits.note = note
        return hits

    def _fuse(self, query: str, where: dict[str, Any], candidates: int
              ) -> list[tuple[str, float, float | None, float | None, dict[str, Any]]]:
        if self._index_behind is None:  # type: ignore[attr-defined]
            try:
                return super()._fuse(query, where, candidates)  # type: ignore[misc]
            except Exception as exc:
                if not (isinstance(exc, ChromaUnavailableError) or is_outage(exc)):
                    raise
                why = (str(exc).strip().splitlines() or [type(exc).__name__])[0]
        else:
            why = "it missed writes while it was down; they are in the records"
        _WITHOUT_INDEX.set(
            f"{why}; these were found by keyword" if why.startswith(INDEX_GONE) else  # it answers (hunt-chromahttp #2, session 34)
            f"{CHROMA_DOWN} ({why}); searching by keyword only, with the records' own "
            "full-text search, until it is back")
        return self._fuse_records(query, where, candidates)

    def _fuse_records(self, query: str, where: dict[str, Any], candidates: int
                      ) -> list[tuple[str, float, float | None, float | None, dict[str, Any]]]:
        """Keyword scores from the records (or the index's in-process side), ranked as
        `_fuse` ranks one side; the caller filters by scope, status and topic as always."""
        from skillbank.index import RRF_K

        self._refresh()  # type: ignore[attr-defined]  # the records are the truth: read them
        spaces, topic = _scope_of(where)
        scores = self._records.search_text(  # type: ignore[attr-defined]
            query, max(200, candidates * 4), spaces, topic)
        if scores is None:
            try:
                scores = self.index.keyword(query, candidates, where)  # type: ignore[attr-defined]
                if mostly_unread(query):  # a rule sharing one pair with it is no match
                    scores = holding_enough(self.index, query, scores)  # type: ignore[attr-defined]
            except ChromaUnavailableError:  # not even read once yet (or dropped): no answer
                scores = {}
        out = []
        rank, previous = 0, None
        for position, gid in enumerate(sorted(scores, key=lambda i: (-scores[i], i))):
            if scores[gid] != previous:
                rank, previous = position, scores[gid]
            meta = {"hash": self._digests.get(gid)}  # type: ignore[attr-defined]
            out.append((gid, 1.0 / (RRF_K + rank + 1), None, scores[gid], meta))
        return out


def _scope_of(where: dict[str, Any]) -> tuple[tuple[str, ...] | None, str | None]:
    """The namespaces (None: all) and topic a search's index filter names (`search` builds it
    from `scope.where` and the topic), for the records' own search to filter by too."""
    clauses = where.get("$and", [where]) if isinstance(where, dict) else []
    spaces: tuple[str, ...] | None = None
    topic: str | None = None
    for clause in clauses:
        if not isinstance(clause, dict):
            continue
        ns = clause.get("namespace")
        if isinstance(ns, str):
            spaces = (ns,)
        elif isinstance(ns, dict) and isinstance(ns.get("$in"), list):
            spaces = tuple(str(n) for n in ns["$in"])
        if isinstance(clause.get("topic"), str):
            topic = clause["topic"]
    return spaces, topic
