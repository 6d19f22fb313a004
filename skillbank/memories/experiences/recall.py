"""Recall: hybrid search filtered inside the index, ranked with a small usage-aware prior.

Ranking: the index's fused rank score, floored (a hit needs real dense or keyword evidence), plus
a small prior: helpfulness from the usage log (marks), an exploration bonus for rarely recalled
records and a recency bonus. The prior is sized against reciprocal-rank scores (about 1/61 for a
first place) so it reorders near ties and never lifts a poor match over a clearly better one.
Every query is filtered by namespace and active status in Chroma and in BM25 alike: nothing
crosses namespaces.
"""

from __future__ import annotations

import logging
import math
import time
from typing import Any, Callable, Mapping, Sequence

from skillbank import scope as scopes
from skillbank.errors import InvalidInputError, NotFoundError
from skillbank.fsutil import check_unicode
from skillbank.index import FUSED_SCALE, HybridIndex, IndexHit, fuse_candidates, matches
from skillbank.index_mirror import count_where, pending_where
from skillbank.index_outage import CHROMA_DOWN, dense_unless_down
from skillbank.keyword import tokenize
from skillbank.model_state import known_unavailable
from skillbank.query_limits import check_length, wordless
from skillbank.records import MAX_TEXT, Experience, Hit, Hits
from skillbank.outside_votes import outsider_of
from skillbank.usage import UsageLog
from skillbank.unread import mostly_unread
from skillbank.memories.experiences.indexing import MAX_EMBED_TEXTS
from skillbank.memories.experiences.threads import in_open_episode
from skillbank.memories.experiences.validation import _clean_tags, _outcomes, _since_timestamp


log = logging.getLogger("skillbank.experiences")

MAX_K = 200
#: Ranking prior (see the module docstring). Near the top, a fused reciprocal-rank score drops
#: by ~0.0005 per place (two lists, ~0.00026 each), so: marks can move a record up to ~8 places
#: once many agree (as `UsageLog.prior` does for skills), exploration ~1 place, recency ~1.
UTILITY_WEIGHT = 0.004  # ± at most this, from the marks (helped / not helped)
EXPLORE_WEIGHT = 0.0005  # + this / sqrt(1 + uses): rarely recalled records get a look
RECENCY_WEIGHT = 0.0005  # + this, halving every RECENCY_HALF_LIFE_DAYS
RECENCY_HALF_LIFE_DAYS = 30.0
MIN_KEYWORD = 0.25  # BM25 share of the query's best possible score that counts as evidence
#: ... while a Chroma server does not answer and keyword is the only evidence there is: a task
#: matched word for word scores ~0.2 (the best possible score assumes a word repeated without
#: end), so at 0.25 an outage recalled nothing at all.
MIN_KEYWORD_ALONE = 0.15
#: A task mostly in a script the model does not read (`skillbank.unread`) has no dense evidence,
#: and its BM25 share is none either (hunt-upgrade #2, session 23). A run's CJK feedback adds
#: many character pairs, so length normalisation put a Japanese run's own task at 0.13, under
#: MIN_KEYWORD_ALONE: among four English runs, 11 of 20 CJK runs were not recalled by their own
#: task. And the share's best possible score counts only the request's pairs some record holds,
#: so a request about another task sharing a pair or two ("する") scored up to 0.27: 11 of 20
#: such requests recalled runs. The evidence is the tokens a request shares with a record as the
#: keyword index reads them (CJK character pairs, other scripts' words): the share of the
#: request's tokens the record's text holds, or of the record's own task's tokens the request
#: holds (a request that repeats a task and says more), whichever is larger; neither depends on
#: how long the feedback is. `python benchmarks/unread_recall.py --pairs` (20 Japanese, Chinese,
#: Korean and Russian runs; 76 requests for them: own task, paraphrase, task and a sentence
#: more, words of its feedback; 20 about other tasks; 1,844 pairs of a request and another
#: run): at 0.5, 75 of 76 requests reach their run (the miss: a paraphrase sharing 40%) and 2
#: other pairs pass, both on a topic of that run's feedback ("rebuild the index", "take a
#: backup"); at 0.4, 4 pass; at 0.6, 6 miss.
MIN_SHARED_TOKENS = 0.5
#: A match on an experience's second vector (its feedback and lessons: `indexing.embed_texts_of`)
#: counts as evidence only this far above the floor that a task match needs. Lessons are long,
#: varied sentences that any request resembles a little (an off-topic request's best cosine with
#: a reflection: median 0.19), while a task is short and close to the new task when it applies.
#: 0.17 puts the lesson floor at 0.35 for the default 0.18 (docs/benchmarks.md, "Experience
#: recall"); ranking still uses the best of the two similarities.
CONTENT_FLOOR_MARGIN = 0.17
LESSON_PREFIX = "lsn-"
#: Filters are applied by over-fetching unfiltered results (cheap in Chroma and BM25) and keeping
#: those that pass; only when too few pass is the filter handed to the index (exact either way).
OVERFETCH = 4
MAX_OVERFETCH = 16  # dense: Chroma's cost grows with n (100k records: n=1600 ~15 ms)
MAX_OVERFETCH_KEYWORD = 64  # BM25's top-n is cheap; scanning what it returns is the cost


def _predicate(where: dict[str, Any]) -> Callable[[Mapping[str, Any]], bool]:
    """`index.matches(where, meta)` as one flat function, for the `$and` filters recall builds.

    Scanning thousands of candidates per query is where the time goes under a selective filter;
    a flat list of checks costs about half of the generic recursive evaluation.
    """
    clauses = where.get("$and") if list(where) == ["$and"] else [where]
    checks: list[tuple[str, str, Any]] = []
    for clause in clauses or []:
        if not isinstance(clause, dict) or len(clause) != 1:
            return lambda meta: matches(where, meta)
        (key, condition), = clause.items()
        if key.startswith("$"):
            return lambda meta: matches(where, meta)
        if not isinstance(condition, dict):
            condition = {"$eq": condition}
        for op, value in condition.items():
            if op not in ("$eq", "$in", "$contains", "$gte"):
                return lambda meta: matches(where, meta)
            checks.append((key, op, frozenset(value) if op == "$in" else value))

    def passes(meta: Mapping[str, Any]) -> bool:
        for key, op, value in checks:
            found = meta.get(key)
            if op == "$eq":
                if found != value:
                    return False
            elif op == "$in":
                if found not in value:
                    return False
            elif op == "$contains":
                if not isinstance(found, (list, tuple)) or value not in found:
                    return False
            elif found is None or found < value:
                return False
        return True

    return passes


def shared_evidence(words: set[str], held: set[str], task: str) -> float:
    """`MIN_SHARED_TOKENS`'s evidence that a record answers a request the model does not read:
    the share of the request's tokens (`words`) the record's text holds (`held`), or of the
    record's own `task`'s tokens found in `words`, the larger. Recall reads `held` from the BM25
    row (`RecallMixin._unread_evidence`); the journal's full-text fallback, from the record it
    found (`text_recall.recall_by_journal_text`): one judgement, whichever search answered."""
    own = set(tokenize(task))
    return max(len(held) / len(words) if words else 0.0,
               len(own & words) / len(own) if own else 0.0)


class RecallMixin:
    """Search, filters and the ranking prior of `ExperienceMemory`."""

    index: HybridIndex
    usage: UsageLog
    settings: Any

    def _where(self, namespace: str | tuple[str, ...], outcome: Any, tags: Any, since: Any,
               kind: Any) -> dict[str, Any]:
        """The filter of a recall; `namespace` is one namespace or a `read_namespaces` tuple."""
        spaces = scopes.where((namespace,) if isinstance(namespace, str) else namespace)
        clauses: list[dict[str, Any]] = [*([spaces] if spaces else []), {"status": "active"}]
        outcomes = _outcomes(outcome)
        if outcomes:
            clauses.append({"outcome": outcomes[0]} if len(outcomes) == 1
                           else {"outcome": {"$in": outcomes}})
        for tag in _clean_tags(tags):
            clauses.append({"tags": {"$contains": tag}})
        since_ts = _since_timestamp(since)
        if since_ts is not None:
            clauses.append({"created": {"$gte": since_ts}})
        if kind is not None:
            if kind not in ("experience", "lesson"):
                raise InvalidInputError(f"unknown kind {kind!r}; use 'experience' or 'lesson'")
            clauses.append({"kind": kind})
        return {"$and": clauses} if len(clauses) > 1 else clauses[0]

    def _filtered(self, fetch: Callable[[int, Any], dict[str, float]], where: dict[str, Any],
                  n: int, *, enough: int | None = None, cap: int = MAX_OVERFETCH
                  ) -> dict[str, float]:
        """The top `n` of `fetch` among items passing `where`, as `fetch(n, where)` gives them.

        Both sides of the index are much cheaper unfiltered (Chroma's filtered query and the
        BM25 filter mask cost time in proportion to the collection: 0.1-0.5 s at 100k records),
        so fetch more unfiltered and keep what passes, widening by the share that passed, up to
        `cap` times `n`. What is returned is always the exact head of the filtered ranking
        (nothing that passes can rank below an item that was fetched): all `n` of it, or every
        candidate there is, or, once the cap is reached, at least `enough` of it. A filter too
        rare for that is handed to the index.
        """
        enough = n if enough is None else min(enough, n)
        passes = _predicate(where)
        limit = n * cap
        wide = min(n * OVERFETCH, limit)
        scanned: dict[str, bool] = {}
        while True:
            got = fetch(wide, None)
            kept: dict[str, float] = {}
            for item_id, score in sorted(got.items(), key=lambda kv: kv[1], reverse=True):
                passed = scanned.get(item_id)
                if passed is None:
                    meta = self.index.metadata(item_id)
                    passed = scanned[item_id] = meta is not None and passes(meta)
                if passed:
                    kept[item_id] = score
                    if len(kept) >= n:
                        return kept
            if len(got) < wide:
                return kept
            if wide >= limit:
                return kept if len(kept) >= enough else fetch(n, where)
            # Widen by the share that passed (all the way when none did): even the widest
            # unfiltered fetch costs less than a filtered one on a large collection.
            share = len(kept) / len(got)
            wide = limit if not kept else min(limit, max(wide * 2, math.ceil(1.3 * n / share)))

    def _dense_items(self, vector: Any, evidence: dict[str, float] | None = None
                     ) -> Callable[[int, Any], dict[str, float]]:
        """`fetch(n, where)`: the `n` records nearest to `vector` (each by its best vector).

        The index counts texts, and a record has up to MAX_EMBED_TEXTS of them, so `n` texts
        may be fewer than `n` records while more exist; `_filtered` reads "fewer than asked"
        as "no more there". Asking for `n * MAX_EMBED_TEXTS` texts gives `n` records unless
        the collection holds fewer. `evidence` (when given) collects each record's similarity
        as the floor sees it: a second-vector match counts `CONTENT_FLOOR_MARGIN` less.
        """
        index = self.index

        def fetch(n: int, where: Any) -> dict[str, float]:
            got: dict[str, float] = {}
            # A Chroma server that does not answer: keyword only, saying so (`dense_error`),
            # as skills and guidelines do; recall raised httpx's ConnectError, and with it
            # the whole memory block.
            # Within the window after a request that timed out, keyword at once, as skill
            # search does: each recall waited the whole chroma_timeout again (hunt-chroma #2).
            quiet = getattr(index, "_quiet", None)
            texts, index.dense_error = (None, index.dense_error) if quiet and quiet() else \
                dense_unless_down(lambda: index.dense_texts(vector, n * MAX_EMBED_TEXTS, where),
                                  bool(getattr(index, "shared", False)), index.dense_error,
                                  on_outage=getattr(index, "_timed_out", None))
            for text_id, similarity in (texts or {}).items():
                record_id, _, second = text_id.partition("#")
                got[record_id] = max(got.get(record_id, -2.0), similarity)
                if evidence is not None:
                    lesson = record_id.startswith(LESSON_PREFIX)
                    counted = similarity - CONTENT_FLOOR_MARGIN if second or lesson \
                        else similarity
                    evidence[record_id] = max(evidence.get(record_id, -2.0), counted)
            if len(got) > n:
                got = dict(sorted(got.items(), key=lambda kv: (-kv[1], kv[0]))[:n])
            return got

        return fetch

    def _search(self, task: str, where: dict[str, Any], candidates: int,
                enough: int | None = None, evidence: dict[str, float] | None = None
                ) -> list[IndexHit]:
        """`HybridIndex.search(task, where=where, candidates=candidates)`, filtering adaptively.

        z-score fusion of the dense and keyword candidates; under a selective filter a list may
        be cut shorter, but never below `enough` (see `_filtered`). `evidence` collects each
        dense candidate's similarity as the floor sees it (`_dense_items`).
        """
        index = self.index
        if not index.count():
            return []
        vector = self._task_vector(task)
        dense = {} if vector is None else self._filtered(
            self._dense_items(vector, evidence), where, candidates * 2, enough=enough)
        keyword = self._filtered(lambda n, w: index.keyword(task, n, w), where, candidates,
                                 enough=enough, cap=MAX_OVERFETCH_KEYWORD)
        # z-score fusion over the candidates (skillbank.index.fuse_candidates): equal evidence
        # gives equal scores (the prior breaks the tie), and a side with nothing to say (flat
        # scores) does not outvote the other, as rank fusion did.
        fused = {item_id: FUSED_SCALE * value
                 for item_id, value in fuse_candidates(dense, keyword).items()}
        hits = []
        for item_id, score in fused.items():
            meta = index.metadata(item_id)
            if meta is None:
                continue
            in_dense, in_keyword = item_id in dense, item_id in keyword
            why = "both" if in_dense and in_keyword else ("dense" if in_dense else "keyword")
            hits.append(IndexHit(id=item_id, score=score, dense=dense.get(item_id),
                                 keyword=keyword.get(item_id), why=why, metadata=meta))
        hits.sort(key=lambda h: h.score, reverse=True)
        return hits

    def _task_vector(self, task: str) -> Any:
        """The task's vector, or None while no embedding model can be loaded: recall answers
        by keyword then, as skill and guideline search do, and `dense_error` says why. It
        raised the model error, and with it every `context_for` of an offline machine whose
        root held an experience (hunt-ops #1)."""
        from skillbank.embeddings import ModelUnavailableError, embed_query

        index = self.index
        if mostly_unread(task):
            # Its cosine is no evidence: "迁移订单表" (migrate the orders table) recalled the
            # users-table run first, both runs of [UNK] to the model (hunt-i18n #1).
            return None
        try:
            vector = embed_query(index.embedding_function, task)
        except ModelUnavailableError as exc:
            index._model_unavailable(exc)
            return None
        if index.dense_error and not index.dense_error.startswith(CHROMA_DOWN):
            index.dense_error = None  # the model is back
        return vector

    def _unread_evidence(self, words: set[str], hit: IndexHit) -> float:
        """How much a task the model does not read shares with a record (`MIN_SHARED_TOKENS`):
        the share of the task's tokens (`words`) the record's keyword text holds (from its BM25
        row), or of the record's own task's tokens found in `words`, the larger. The second
        reads the record (cached), only when the first falls short; a record missing from the
        journal counts by the first (recall logs it when it reads the hits)."""
        if not words:
            return 0.0
        held = self.index.held_terms(hit.id, words)
        share = len(held) / len(words)
        if share >= MIN_SHARED_TOKENS:
            return share
        try:
            record = self._journal_record(hit.id, hit.metadata)  # type: ignore[attr-defined]
        except NotFoundError:
            return share
        return shared_evidence(words, held, record.task)

    def prior(self, record_id: str, meta: Mapping[str, Any], now: float | None = None,
              usage: Any = None) -> float:
        """The rank bonus of a record: helpfulness, exploration and recency (see module doc).
        `usage`: its counts when the caller read them already (`_usages`)."""
        usage = self.usage.get(record_id) if usage is None else usage
        judged = usage.successes + usage.failures
        utility = 0.0
        if judged:
            confidence = judged / (judged + 3)
            utility = UTILITY_WEIGHT * (2 * usage.successes / judged - 1) * confidence
        explore = EXPLORE_WEIGHT / math.sqrt(1 + usage.uses)
        age_days = max(0.0, ((now or time.time()) - float(meta.get("created", 0.0) or 0.0)) / 86400)
        recency = RECENCY_WEIGHT * 0.5 ** (age_days / RECENCY_HALF_LIFE_DAYS)
        return utility + explore + recency

    def _usages(self, ids: list[str]) -> dict[str, Any]:
        """The counts of every candidate at once: one query in PostgreSQL (team mode), where
        one per candidate was most of a recall's time (~125 round trips)."""
        many = getattr(self.usage, "get_many", None)
        return many(ids) if many is not None and ids else {}

    def recall(
        self,
        task: str,
        k: int = 5,
        outcome: str | Sequence[str] | None = None,
        tags: Sequence[str] | None = None,
        namespace: str | None = None,
        since: Any = None,
        kind: str | None = None,
        *,
        count_use: bool = True,
        min_score: float | None = None,
        exclude_thread: str | None = None,
    ) -> Hits:
        """Past experiences and lessons for a task, best first; empty when nothing matches.

        A `Hits`, as skill and guideline search return, on every path: `dense_complete` False
        (and `pending`: how many records had no vector to be found by) while some records are
        searchable by keyword only, `best_dense` / `best_keyword` the best evidence seen.

        Filters (all applied inside the search, never after it): `outcome` (one or a list),
        `tags` (every tag given must be on the record), `since` (datetime, ISO date, unix time, or
        a timedelta meaning "within the last …"), `kind` ("experience" or "lesson"). The
        namespace is always a filter (`None`: the caller's own and shared namespaces, see
        `skillbank.scope`; one outside the caller's scope recalls nothing) and retired records never
        come back. A hit needs a dense similarity of at least `min_score` (default
        `settings.min_score`; `CONTENT_FLOOR_MARGIN` more when only its feedback/lessons vector
        matched) or BM25 evidence; each returned hit counts a use unless `count_use=False`.
        `exclude_thread`: a conversation's open episode is left out (it never recalls itself;
        its closed episodes are past experiences like any other).
        """
        if isinstance(task, str):
            check_length(task, "experience recall")
        if not isinstance(task, str) or not task.strip():
            return Hits()
        task = check_unicode(task, "task")  # an empty bank too: the same answer as guidelines.search
        if wordless(task):  # emoji or punctuation alone: nothing to recall on, and say so
            empty = Hits()  # ("😀" recalled an "ok" run, two bidi marks four runs: session 34)
            empty.reason = wordless(task)
            return empty
        if isinstance(k, bool) or not isinstance(k, int) or k < 0 or k > MAX_K:
            raise InvalidInputError(f"k must be an integer from 0 to {MAX_K}")
        if k == 0:
            return Hits()
        if namespace is not None:
            self._namespace(namespace)  # "*" is not a namespace to recall from
        scope = self._scope()  # type: ignore[attr-defined]
        spaces = self._read_spaces(namespace, scope)  # type: ignore[attr-defined]
        where = self._where(spaces or ("-",), outcome, tags, since, kind)
        if not spaces:
            return Hits()  # outside the caller's scope: empty, as if nothing were there
        if min_score is not None and (isinstance(min_score, bool)
                                      or not isinstance(min_score, (int, float))
                                      or not math.isfinite(min_score)):
            raise InvalidInputError(f"min_score must be a number such as 0.3, not {min_score!r}")
        if not isinstance(count_use, bool):
            raise InvalidInputError("count_use must be true or false")
        floor = self.settings.min_score if min_score is None else float(min_score)
        evidence: dict[str, float] = {}
        raw = self._search(task[:MAX_TEXT], where, candidates=max(50, 3 * k),
                           enough=max(10, 2 * k), evidence=evidence)
        # No dense evidence: no server or no model (BM25 alone), or a task the model does not
        # read (the tokens it shares with a record: MIN_SHARED_TOKENS).
        unread = mostly_unread(task)
        words = set(tokenize(task[:MAX_TEXT])) if unread else set()
        bar = MIN_KEYWORD_ALONE if self.index.dense_error else MIN_KEYWORD
        now = time.time()
        usages = self._usages([hit.id for hit in raw])
        scored = []
        for hit in raw:
            if in_open_episode(hit.metadata, exclude_thread):
                continue  # the conversation asking: never its open episode as "past"
            dense_ok = evidence.get(hit.id, -2.0) >= floor
            if hit.keyword is None:
                keyword_ok = False
            elif unread:
                keyword_ok = self._unread_evidence(words, hit) >= MIN_SHARED_TOKENS
            else:
                keyword_ok = hit.keyword >= bar
            if not (dense_ok or keyword_ok):
                continue
            scored.append((hit.score + self.prior(hit.id, hit.metadata, now, usages.get(hit.id)),
                           hit))
        scored.sort(key=lambda pair: pair[0], reverse=True)
        hits = Hits()
        index = self.index
        # What dense search could not see: every record while its server or the model is out
        # (`dense_error`; a model known missing before any record asked for it), else the
        # records whose vectors are not written yet; of those this search reads only (`where`:
        # the caller's namespaces), never the whole bank's (review 1 #8, session 32).
        why = index.dense_error or known_unavailable(index.embedding_function)
        hits.pending = count_where(index, where) if why else pending_where(index, where)
        hits.dense_complete = not (why or hits.pending)
        if why:
            hits.note = f"{why}; these were found by keyword"
        hits.best_dense = max((h.dense for h in raw if h.dense is not None), default=0.0)
        hits.best_keyword = max((h.keyword for h in raw if h.keyword is not None), default=0.0)
        for score, hit in scored[:k]:
            try:
                record = self._read_record(hit.id, hit.metadata)
            except NotFoundError:
                log.warning("recall: %s is indexed but missing from the journal", hit.id)
                continue
            hits.append(Hit[Experience](id=hit.id, score=round(score, 6), why=hit.why,
                                        record=record, dense=hit.dense, keyword=hit.keyword))
        if count_use:
            for hit in hits:  # an untrusted caller's recalls are counted apart
                self.usage.record(hit.id, use=1, trusted=scope.trusted,
                                  principal=scope.principal,  # (untrusted: once each)
                                  outsider=outsider_of(scope, hit.record.namespace))
        return hits
