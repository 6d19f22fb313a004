"""Reading guidelines: search for a task, get, list, topics, counts and the playbook.

A mixin of ``GuidelineMemory``.
"""

from __future__ import annotations

import contextvars
import hashlib
import math
from typing import Any

from skillbank import scope as scopes
from skillbank.errors import InvalidInputError, NotFoundError
from skillbank.index_mirror import pending_where
from skillbank.index_rebuild import wait_rebuilt
from skillbank.keyword import tokenize
from skillbank.memories.guidelines.files import (
    ALL_NAMESPACES, ID_RE, STATUSES, _check_text, written_namespace)
from skillbank.memories.guidelines.lookup import wording_key
from skillbank.memories.guidelines.shared_rules import overridden
from skillbank.model_state import known_unavailable
from skillbank.query_limits import MAX_TASK_CHARS, check_length, wordless
from skillbank.records import MAX_TEXT, Finding, Guideline, Hit, Hits
from skillbank.scope import Role
from skillbank.unread import mostly_unread


# Prior added to fused reciprocal-rank scores (~1/61 at rank 1, ~0.00026 between neighbouring
# ranks): at most ~0.0006, about two rank steps near the top, so it only reorders near ties.
VOTE_PRIOR = 0.0004
REINFORCEMENT_PRIOR = 0.0002

# A search hit needs some evidence: dense cosine or normalised BM25 at least this high.
MIN_DENSE = 0.15
MIN_KEYWORD = 0.15
#: A task mostly in a script the model does not read (`skillbank.unread`) has no dense side, and
#: its BM25 share is no evidence on its own: the share's best possible score counts only the
#: task's tokens some rule holds, so a task sharing one character pair with a rule ("する",
#: "写一") scored 0.30 against it whatever else it said, and 12 of 27 requests about other things
#: were served a rule (`benchmarks/unread_guidelines.py`). Such a task matches a rule by keyword
#: only when the rule's keyword text holds at least this many of the task's tokens (as
#: `HybridIndex.held_terms` reads them; all of them for a task of fewer). Two, not a share of the
#: task as experience recall counts (`recall.MIN_SHARED_TOKENS`): a task a rule applies to shares
#: a word or two with it, 15-40% of its tokens ("新しいクラスの変数名を決める" holds 変数 and 数名 of
#: 13), so a share of 0.5 missed 24 of 54 requests for a rule, and any share that keeps them let
#: polite endings through ("…してください" holds 4-6 of a critique's tokens); a count does not
#: depend on how long the task is. On the set: 4/54 missed (as before), 2/27 unrelated served
#: (12 before).
UNREAD_MIN_HELD = 2


_UNFLOORED: contextvars.ContextVar[bool] = contextvars.ContextVar(
    "skillbank_guidelines_unfloored", default=False)
#: Why the current search's dense side could not be asked (no embedding model), if it could not.
_NO_MODEL: contextvars.ContextVar[str | None] = contextvars.ContextVar(
    "skillbank_guidelines_no_model", default=None)


def _one_per_wording(hits: list[Hit[Guideline]]) -> list[Hit[Guideline]]:
    """The best-ranked hit of each wording (case, spacing and punctuation aside). A root that
    holds one rule active several times (a trusted critique repeated after an untrusted client
    echoed it made a new copy each time, before learn reinforced instead) had 7 of a search's
    8 slots filled by one rule, every other rule pushed out (soak hunt #1); the memory block
    already showed each text once."""
    seen: set[str] = set()
    out = []
    for hit in hits:
        key = wording_key(hit.record.text)
        if key and key in seen:
            continue
        seen.add(key)
        out.append(hit)
    return out


def has_evidence(dense: float | None, keyword: float | None) -> bool:
    """Whether a hit is found on its own merit: dense cosine or normalised BM25 at least
    the floors above."""
    return ((dense is not None and dense >= MIN_DENSE)
            or (keyword is not None and keyword >= MIN_KEYWORD))


def holding_enough(index: Any, query: str, scores: dict[str, float]) -> dict[str, float]:
    """The keyword `scores` of the rules that hold at least `UNREAD_MIN_HELD` of the tokens of
    `query`, a task the model does not read: a rule sharing one character pair with it is no
    match, in a search or as a memory block's candidate (see `UNREAD_MIN_HELD`)."""
    words = set(tokenize(query))
    need = min(UNREAD_MIN_HELD, len(words))
    return {gid: score for gid, score in scores.items()
            if len(index.held_terms(gid, words)) >= need}


class GuidelineSearch:
    """Search and the inventory views (see the module docstring)."""

    # Search --------------------------------------------------------------------------------------
    def search_candidates(self, task: str, k: int = 5, namespace: str | None = None
                          ) -> list[Hit[Guideline]]:
        """:meth:`search`, with the hits under the evidence floors too (see
        :func:`has_evidence`), each carrying its dense and keyword evidence: for a caller that
        keeps them only beside hits that have evidence of their own (the memory block shows
        the rules of the topic family its best candidates vote for, see
        ``skillbank.block_family.coherent_guidelines``)."""
        token = _UNFLOORED.set(True)
        try:
            return self.search(task, k, namespace)
        finally:
            _UNFLOORED.reset(token)

    def search(self, task: str, k: int = 5, namespace: str | None = None,
               topic: str | None = None) -> Hits:
        """Active guidelines for a task, best first; empty when nothing has real evidence.

        A `Hits`, as skill search and experience recall return, on every path:
        `dense_complete` False (`pending`: how many rules dense search could not see, `note`:
        why) while some rules are searchable by keyword only, `best_dense` / `best_keyword`
        the best evidence seen."""
        token = _NO_MODEL.set(None)
        try:
            hits = self._search(task, k, namespace, topic)
            # A model known missing before this search asked it (a task the model does not
            # read never asks): keyword-only all the same.
            no_model = _NO_MODEL.get() or known_unavailable(self.index.embedding_function)
        finally:
            _NO_MODEL.reset(token)
        # Rules staged while their vectors could not be written (`store._save`), or every rule
        # while no model can embed the task.
        hits.pending = self._unseen(namespace, every=bool(no_model))
        hits.dense_complete = not (no_model or hits.pending)
        if no_model:
            hits.note = f"{no_model}; these were found by keyword"
        return hits

    def _search(self, task: str, k: int, namespace: str | None, topic: str | None) -> Hits:
        wait_rebuilt(self.index)  # never from indexes a reindex emptied
        require_evidence = not _UNFLOORED.get()
        if isinstance(task, str):  # one limit and wording for every search (query_limits)
            check_length(task, "guideline search")
        task = _check_text(task, "task", MAX_TASK_CHARS)
        if isinstance(k, bool) or not isinstance(k, int) or k < 0:
            raise InvalidInputError("k must be a non-negative integer")
        spaces = self._read_spaces(namespace)  # the caller's own and shared namespaces
        if topic is not None:
            topic = self._check_topic(topic)
        if k == 0 or not task.strip() or not spaces:
            return Hits()
        if wordless(task):  # emoji or punctuation alone: as skill search and recall answer it
            empty = Hits()
            empty.reason = wordless(task)
            return empty
        with self._lock:
            self._recheck()  # rules changed by hand that the index would not offer
            in_scope = scopes.where(spaces)
            clauses: list[dict[str, Any]] = [*([in_scope] if in_scope else []),
                                             {"status": "active"}]
            if topic is not None:
                clauses.append({"topic": topic})
            where = {"$and": clauses} if len(clauses) > 1 else clauses[0]
            fused = self._fuse(task[:MAX_TEXT], where, max(50, k * 4))
            if any(gid not in self._items or self._digests.get(gid) != meta.get("hash")
                   for gid, *_, meta in fused):
                # Another process sharing a Chroma server wrote guidelines: read the files.
                self._refresh()
                fused = self._fuse(task[:MAX_TEXT], where, max(50, k * 4))
            hits = self._hits(fused, spaces, topic, require_evidence)
            if self._records.changed_among([h.record for h in hits[:k]]):
                # A person retired, rewrote or deleted a rule it is about to serve (the files
                # are the truth): read them, then rank again.
                self._refresh()
                hits = self._hits(self._fuse(task[:MAX_TEXT], where, max(50, k * 4)), spaces,
                                  topic, require_evidence)
        # Look-alikes linked as related are not moved behind other hits: they were kept apart
        # because nothing showed they are one rule, so each ranks on its own relevance (moving
        # them cost the critique stream Recall@5 0.522 -> 0.503).
        found = Hits(hits[:k])
        found.best_dense = max((d for _, _, d, _, _ in fused if d is not None), default=0.0)
        found.best_keyword = max((w for _, _, _, w, _ in fused if w is not None), default=0.0)
        return found

    def _unseen(self, namespace: str | None, *, every: bool) -> int:
        """How many of the active rules the caller reads dense search could not see: with
        `every`, all of them (no model, no server), else those whose vectors are not written
        yet. Only the caller's: every namespace's count told a scoped caller the size of other
        tenants' memory, over the sharing wire too (review 1 #8, session 32)."""
        spaces = self._read_spaces(namespace)  # as `_search` read them (it raised, or not)
        if not spaces:
            return 0
        if every:
            return sum(1 for g in list(self._items.values())
                       if g.status == "active" and scopes.covers(spaces, g.namespace))
        in_scope = scopes.where(spaces)
        where = {"$and": [in_scope, {"status": "active"}]} if in_scope else {"status": "active"}
        return pending_where(self.index, where)

    def _hits(self, fused: list[tuple[str, float, float | None, float | None, dict[str, Any]]],
              spaces: Any, topic: str | None, require_evidence: bool) -> list[Hit[Guideline]]:
        """The fused candidates that may be served, best first. Not a shared rule that a
        newer rule of the caller's own namespace contradicts (`shared_rules.overridden`): her
        block served both opposite rules (hunt-teamvotes #1, session 38)."""
        hits: list[Hit[Guideline]] = []
        hidden = overridden(self, self._scope(), spaces)
        for gid, score, dense, keyword, _meta in fused:
            g = self._items.get(gid)
            if g is None or g.status != "active" or not scopes.covers(spaces, g.namespace):
                continue  # the files are the truth, even before the index catches up
            if gid in hidden:
                continue
            if topic is not None and g.topic != topic:
                continue
            if require_evidence and not has_evidence(dense, keyword):
                continue
            why = "both" if dense is not None and keyword is not None else (
                "dense" if dense is not None else "keyword")
            hits.append(Hit[Guideline](id=g.id, score=round(score + self.prior(g), 6),
                                       why=why, record=g, dense=dense, keyword=keyword))
        hits.sort(key=lambda h: (-h.score, h.id))
        return _one_per_wording(hits)

    def _fuse(self, query: str, where: dict[str, Any], candidates: int
              ) -> list[tuple[str, float, float | None, float | None, dict[str, Any]]]:
        """Reciprocal-rank fusion of the index's dense and keyword scores, tie-proof.

        Items with equal scores share a rank (and ties are listed by id), so the result does
        not depend on the order the index happens to return them in: a reindex from the files
        gives the same ranking.
        """
        from skillbank.embeddings import ModelUnavailableError, embed_query
        from skillbank.index import RRF_K

        unread = mostly_unread(query)
        try:
            # A task the model does not read ("给客户写道歉信") is as alike to every rule it does
            # not read as to its own: its cosine is no evidence, its words are (skillbank.unread).
            vector = None if unread else embed_query(self.index.embedding_function, query)
        except ModelUnavailableError as exc:  # keyword-only mode: no model here (yet)
            vector = None
            _NO_MODEL.set(str(exc) or "no embedding model")  # `search` says so
        dense = self.index.dense(vector, candidates * 2, where) if vector is not None else {}
        keyword = self.index.keyword(query, candidates, where)
        if unread:
            keyword = holding_enough(self.index, query, keyword)
        fused: dict[str, float] = {}
        for scores in (dense, keyword):
            rounded = {i: round(v, 6) for i, v in scores.items()}
            rank, previous = 0, None
            for position, item in enumerate(sorted(rounded, key=lambda i: (-rounded[i], i))):
                if rounded[item] != previous:
                    rank, previous = position, rounded[item]
                fused[item] = fused.get(item, 0.0) + 1.0 / (RRF_K + rank + 1)
        out = []
        for item, score in fused.items():
            meta = self.index.metadata(item) or {}
            out.append((item, score, dense.get(item), keyword.get(item), meta))
        out.sort(key=lambda x: (-x[1], x[0]))
        return out

    @staticmethod
    def prior(g: Guideline) -> float:
        """Votes and reinforcements as a nudge, sized to reorder near ties only."""
        votes = math.tanh((g.helpful - g.harmful) / 3.0) * VOTE_PRIOR
        reinforced = math.tanh(g.reinforcements / 5.0) * REINFORCEMENT_PRIOR
        return votes + reinforced

    # Reading -------------------------------------------------------------------------------------
    def get(self, gid: str) -> Guideline:
        """One guideline by id, as the caller may see it: in a namespace it reads, and, when
        pending, one it reviews (`skillbank.scope`). Anything else is not found, the answer for
        an unknown id: an untrusted client told the id of another's pending proposal (learn
        joins a repeat of its wording to it) read that client's critiques in its `sources`."""
        g = self._get(gid)
        if g.status == "pending" and not self._scope().can_review(g.namespace):
            raise self._not_found(gid)
        return g

    def _get(self, gid: str) -> Guideline:
        """`get` for the memory's own reads inside a write (learn's report of its own pending
        rules): any status, in a namespace the caller reads."""
        self._check_id(gid)
        with self._lock:
            self._ensure_loaded()
            g = self._items.get(gid)
            if g is None or self._file_changed(g):
                self._refresh()  # written by another process, or edited by hand
                g = self._items.get(gid)
        if g is None or not self._scope().can_read(g.namespace):
            raise self._not_found(gid)  # outside the caller's scope: the same answer
        return g

    def __contains__(self, gid: object) -> bool:
        if not isinstance(gid, str) or not ID_RE.match(gid):
            return False
        try:
            self.get(gid)
        except NotFoundError:
            return False
        return True

    def __len__(self) -> int:
        self._ensure_loaded()
        return len(self._items)

    def list(self, status: str | None = None, topic: str | None = None,
             namespace: str | None = None) -> list[Guideline]:
        """Guidelines, newest first. ``namespace=None`` is the bank's namespace; ``"*"`` lists
        every namespace (an inventory), as for experiences."""
        if status is not None and status not in STATUSES:
            raise InvalidInputError(f"status must be one of {', '.join(STATUSES)}")
        if topic is not None:
            topic = self._check_topic(topic)
        scope = self._scope()
        spaces = self._read_spaces(namespace, allow_all=True, scope=scope)
        with self._lock:
            self._refresh()
            items = list(self._items.values())
        out = [g for g in items
               if (status is None or g.status == status)
               and (topic is None or g.topic == topic)
               and self._shown(g, spaces, scope)]
        out.sort(key=lambda g: (g.created, g.id), reverse=True)
        return out

    def problems(self) -> list[Finding]:
        """Guideline files a hand edit did not get through, each with its path and why: first
        the files that could not be read (severity "error"), then those read only in part or
        not read because of their name or folder ("warning").

        Guidelines are files a person edits: one YAML slip in a hand edit left the rule out
        of every list, count, search and block, and nothing named the file (its page said "no
        guideline ... run sync()"). The warnings were only logged: a `topic:` edited in the
        frontmatter (the folder decides), a file-manager copy `gl-… (copy).md`, keys the
        format does not have were ignored without a word to the curator (hunt-curator #4,
        session 25). Reviewers and admins only: a path names its namespace.

        Each file is told to the reviewers of its namespace only (`_file_shown`), as damaged
        drafts are (`skills.draft_problems`): every reviewer was shown every file, so a
        reviewer of `team` read alice's rule ids, topics and frontmatter values (hunt-scope
        #1, session 28)."""
        scope = self._scope()
        scope.require(Role.REVIEWER, "listing unreadable guideline files")
        with self._lock:
            self._refresh()
            found = list(self._unreadable) + list(self._file_warnings)
            read = {g.path: g.namespace for g in self._items.values()}
        return [f for f in found if self._file_shown(f.path, scope, read)]

    def _file_shown(self, path: str | None, scope: "scopes.Scope",
                    read: dict[str, str] | None = None) -> bool:
        """Whether `scope` is told what is wrong with the guideline file at `path`: it reviews
        the file's namespace, that of the rule read from it (`read`: path -> namespace), else
        the one the file itself names (`files.written_namespace`). A file whose namespace
        cannot be told (a folder, a link, not text, no `namespace:` line in a frontmatter that
        does not parse) is told to reviewers of every namespace ("*") only: it may be anyone's."""
        namespace = (read or {}).get(path or "") or written_namespace(path)
        if namespace is None:
            return ALL_NAMESPACES in scope.reviewable
        return scope.can_review(namespace)

    def topics(self, namespace: str | None = None) -> list[str]:
        """Topics that hold an active guideline the caller reads, in a namespace (default: the
        bank's): the topics `playbook` has rules for, and what every face lists.

        Not those holding only pending rules: an untrusted client's proposal put its own topic
        (a name it chose) into trusted sessions' `resources/list`, with a `list_changed`, as a
        playbook reading "No active guidelines" before anyone approved it (hunt-mcp-longlived
        #1, session 31). Pending rules are reviewed through `list(status="pending")`."""
        scope = self._scope()
        spaces = self._read_spaces(namespace, allow_all=True, scope=scope)
        with self._lock:
            self._refresh()
            return sorted(_served_topics(self._items.values(), spaces, scope, self._shown))

    def counts(self, namespace: str | None = None) -> dict[str, int]:
        """Guidelines by status; ``namespace=None`` is the bank's namespace, ``"*"`` all."""
        scope = self._scope()
        spaces = self._read_spaces(namespace, allow_all=True, scope=scope)
        out = {status: 0 for status in STATUSES}
        with self._lock:
            self._refresh()
            for g in self._items.values():
                if self._shown(g, spaces, scope):
                    out[g.status] = out.get(g.status, 0) + 1
        return out

    def playbook(self, topic: str | None = None, namespace: str | None = None) -> str:
        """Markdown: a heading per topic, its active rules with when_to_use and counts.

        ``topic=None`` gives every topic of the namespace.
        """
        if topic is not None:
            topic = self._check_topic(topic)
        scope = self._scope()
        spaces = self._read_spaces(namespace, scope=scope)
        with self._lock:
            self._refresh()
            # Not a shared rule a rule of the caller's namespace overrides, as in search: the
            # `guidelines://` resource served both opposite rules (review 3 #3, session 38).
            hidden = overridden(self, scope, spaces)
            active = [g for g in self._items.values()
                      if g.status == "active" and scopes.covers(spaces, g.namespace)
                      and (topic is None or g.topic == topic) and g.id not in hidden]
        topics = [topic] if topic is not None else sorted({g.topic for g in active})
        return _render_playbook(topics, active)

    def change_marker(self) -> str:
        """A value that differs after any change to the guideline records, whoever made it.

        The MCP change monitor asks it every poll and recomputes its guideline views only
        when it moved: recomputing every topic's playbook for every client scope each second
        cost 24 ms per scope and 1.2 s a poll with 50 tokens connected (review F3, session 24).
        It picks up other processes' writes first (`_refresh`: a stat per file, or the store's
        change feed), so a write by the CLI or by another process on the root moves it too.
        It says only that something changed, not what nor in which namespace."""
        with self._lock:
            self._refresh()
            return f"{self._marker_id}:{self._generation}"

    def playbook_digests(self, namespace: str | None = None) -> dict[str, str]:
        """topic -> sha256 of `playbook(topic)`, for every topic `topics()` lists, in one pass.

        What the MCP change monitor compares between polls: `topics()` then `playbook()` per
        topic scanned every rule once per topic (topics x rules per client scope, review F3,
        session 24); this scans them once and renders each topic as `playbook` does, so a
        digest is the one of the text a client reads."""
        scope = self._scope()
        spaces = self._read_spaces(namespace, scope=scope)
        listed = self._read_spaces(namespace, allow_all=True, scope=scope)
        with self._lock:
            self._refresh()
            items = list(self._items.values())
            hidden = overridden(self, scope, spaces)  # as `playbook` (review 3 #3)
        topics = _served_topics(items, listed, scope, self._shown)
        active: dict[str, list[Guideline]] = {}
        for g in items:
            if (g.status == "active" and g.topic in topics and scopes.covers(spaces, g.namespace)
                    and g.id not in hidden):
                active.setdefault(g.topic, []).append(g)
        return {topic: hashlib.sha256(
                    _render_playbook([topic], active.get(topic, [])).encode()).hexdigest()
                for topic in sorted(topics)}

    def learnt_from(self, critique: str, namespace: str | None = None) -> list[Guideline]:
        """The guidelines (any status) that hold this exact critique as a source, in the
        caller's namespaces: what an experience's feedback was learnt as. The memory block
        asks, so that a feedback line does not repeat a rule since superseded or shown
        already (``skillbank.feedback_view``)."""
        if not isinstance(critique, str) or not critique.strip():
            return []
        spaces = self._read_spaces(namespace)
        with self._lock:
            self._refresh()
            found = [self._items[gid] for gid in sorted(self._lookup.from_critique(critique))
                     if gid in self._items]
        return [g for g in found if scopes.covers(spaces, g.namespace)]


def _served_topics(items: Any, spaces: tuple[str, ...], scope: "scopes.Scope",
                   shown: Any) -> set[str]:
    """The topics `topics()` lists (and `playbook_digests` digests): those holding an active
    rule `shown` to the caller."""
    return {g.topic for g in items if g.status == "active" and shown(g, spaces, scope)}


def _render_playbook(topics: list[str], active: list[Guideline]) -> str:
    """The playbook markdown of `topics` from their `active` rules (`playbook`, and the
    digests `playbook_digests` takes of it)."""
    lines: list[str] = []
    for name in topics:
        rules = sorted((g for g in active if g.topic == name),
                       key=lambda g: (-(g.helpful - g.harmful), -g.reinforcements, g.created))
        if lines:
            lines.append("")
        lines.append(f"## {name}")
        if not rules:
            lines.append("")
            lines.append("_No active guidelines._")
            continue
        lines.append("")
        for g in rules:
            line = f"- **{g.text}**"
            if g.when_to_use:
                line += f" — {g.when_to_use}"
            line += (f" (reinforced {g.reinforcements}×, helpful {g.helpful}, "
                     f"harmful {g.harmful}; `{g.id}`)")
            lines.append(line)
    if not lines:
        lines = ["_No active guidelines._"]
    return "\n".join(lines) + "\n"
