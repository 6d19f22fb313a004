"""Matching a candidate rule against the guidelines in play: profiles, words, neighbours.

A guideline's *profile* is the mean of the vectors of every wording that ever reinforced it
(rule, critique sentence and critique of each source), plus the TF-IDF overlap of their words,
minus a small penalty across topics. A mixin of ``GuidelineMemory``.
"""

from __future__ import annotations

import math
import re
from typing import Callable, Iterable, Sequence

import numpy as np

from skillbank.index import tokenize
from skillbank.memories.guidelines.decisions import critique_context, kept_apart_why
from skillbank.memories.guidelines.files import IN_PLAY
from skillbank.records import MAX_SHORT, Guideline

MAX_PROFILE_TEXTS = 24  # wordings averaged into a guideline's matching profile
MAX_NEIGHBOURS = 5  # nearest guidelines handed to distiller.relate per candidate (look-alikes are
#                    kept apart now, so an overruled rule often has several wordings)
SHORTLIST = 24  # guidelines the index proposes for a profile comparison (large pools)

# ------------------------------------------------------------------------------------ wording

_CONTENT_RE = re.compile(r"[a-z0-9][a-z0-9_'-]*")
_FILLER = frozenset(
    """a an the and or but to of in on at by for with from into as is are be it its this that
    these those you your we our they them their do does did not no never always please also just
    so very should must can could would will make use using""".split()
)


def _content_words(text: str) -> set[str]:
    return {w for w in tokenize(text) if w not in _FILLER}


def more_specific(new: str, old: str) -> bool:
    """True when `new` says everything `old` says and more (wording replaced on merge).

    Content words are compared after stemming (the index's tokenizer): the new wording must
    contain every content word of the old one and add at least one, and stay a short rule.
    "Add tests." -> "Add tests for edge cases and failure paths." is taken; a paraphrase that
    drops a word of the old wording is not, so the wording a person reviewed stays put.
    """
    old_words, new_words = _content_words(old), _content_words(new)
    if not old_words or len(new) > 400:
        return False
    return old_words < new_words



class GuidelineMatching:
    """Similarity of candidate rules to stored guidelines (see the module docstring)."""

    def _embed(self, texts: list[str]) -> np.ndarray:
        if not texts:
            return np.zeros((0, 0), dtype=np.float32)
        if self._embed_fn is not None:
            vectors = np.asarray(self._embed_fn(texts), dtype=np.float32)
        else:
            from skillbank.embeddings import embed_texts

            vectors = np.asarray(embed_texts(self.index.embedding_function, texts), dtype=np.float32)
        norms = np.linalg.norm(vectors, axis=1, keepdims=True)
        norms[norms == 0] = 1.0
        return vectors / norms

    def _vectors_for(self, texts: Sequence[str]) -> np.ndarray:
        missing = [t for t in dict.fromkeys(texts) if t not in self._vectors]
        if missing:
            for text, vector in zip(missing, self._embed(missing)):
                self._vectors[text] = vector
            if len(self._vectors) > 50_000:  # a cache, not a store: drop the oldest half
                for key in list(self._vectors)[:25_000]:
                    del self._vectors[key]
        return np.stack([self._vectors[t] for t in texts])

    # Matching ------------------------------------------------------------------------------------
    #: How one wording becomes a matching vector: the weighted mean of the vectors of the rule,
    #: the critique sentence it came from and the whole critique, which carries the context a
    #: short rule loses ("Lead with it." says little; the critique around it says what "it" is).
    MEMBER_WEIGHTS = {"rule": 1.0, "sentence": 1.0, "critique": 1.0}
    #: Subtracted from the similarity of a guideline filed under another topic (neither being
    #: "general"): the same words mean different rules in different domains ("signature").
    TOPIC_PENALTY = 0.1

    def _member_vector(self, rule: str, sentence: str | None, critique: str | None) -> np.ndarray:
        parts = [(rule, self.MEMBER_WEIGHTS["rule"])]
        if sentence and sentence != rule:
            parts.append((sentence, self.MEMBER_WEIGHTS["sentence"]))
        if critique and critique not in (rule, sentence) and self.MEMBER_WEIGHTS["critique"]:
            parts.append((critique[:2000], self.MEMBER_WEIGHTS["critique"]))
        parts = [(t, w) for t, w in parts if t and w]
        vectors = self._vectors_for([t for t, _ in parts])
        weights = np.asarray([w for _, w in parts], dtype=np.float32)[:, None]
        total = (vectors * weights).sum(axis=0)
        return total / (float(np.linalg.norm(total)) or 1.0)

    def _kept_apart_why(self, text: str, old: str, score: float) -> str:
        """`decisions.kept_apart_why` for a look-alike, with `_words_similarity` as its
        similarity (hunt-lxteam #6, session 37)."""
        return kept_apart_why(text, old, self._words_similarity(text, old, score))

    def _words_similarity(self, text: str, old: str, score: float) -> float:
        """The model cosine of two rules' own words, what an agent or a person reads as
        "similarity". Why not the matching score (`_nearest`: profile cosine plus TF-IDF
        cosine, capped at 1): it told "similarity 1.00" for "Always drain connections before
        restarting the primary database." beside "Always warn the team before ..." (cosine
        0.67), and for "last name" beside "first name" in a learn's `nearest` (hunt-lxteam #6,
        session 37; hunt-learnfaces #3, session 38). The score is kept where the model cannot
        read the words (no model; mostly unread text)."""
        from skillbank.errors import SkillbankError
        from skillbank.unread import mostly_unread

        if mostly_unread(text) or mostly_unread(old):
            return score
        try:
            first, second = self._vectors_for([text, old])
        except SkillbankError:  # no model: keyword-only learning, the score as before
            return score
        return float(first @ second)

    @staticmethod
    def _members(g: Guideline) -> tuple[tuple[str, str | None, str | None], ...]:
        """(rule, sentence, critique) of each wording that reinforced `g`, most recent last."""
        members: list[tuple[str, str | None, str | None]] = [(g.text, None, None)]
        for source in g.sources:
            rule = " ".join((getattr(source, "rule", None) or "").split())
            if rule:
                members.append((rule, getattr(source, "sentence", None), source.critique))
        return tuple(members[:1] + members[1:][-(MAX_PROFILE_TEXTS - 1):])

    @staticmethod
    def _member_texts(rule: str, sentence: str | None, critique: str | None) -> list[str]:
        """The texts `_member_vector` embeds for one wording (rule, sentence, critique head)."""
        texts = [rule]
        if sentence and sentence != rule:
            texts.append(sentence)
        if critique and critique not in (rule, sentence):
            texts.append(critique[:2000])
        return [t for t in texts if t]

    def _profiles_of(self, guidelines: Sequence[Guideline]) -> np.ndarray:
        """Profiles of several guidelines, their unseen texts embedded in one batch.

        One model call per text cost ~5 ms each, and a shortlist of rules not profiled yet (500
        pending rules in a namespace, or the first learn after a restart) holds dozens: one
        batch makes a learn's neighbour profiles several times cheaper.
        """
        unseen = [t for g in guidelines
                  if (cached := self._profiles.get(g.id)) is None or cached[0] != self._members(g)
                  for m in self._members(g) for t in self._member_texts(*m)]
        if unseen:
            self._vectors_for(unseen)
        return np.stack([self._profile(g) for g in guidelines])

    def _profile(self, g: Guideline) -> np.ndarray:
        """Mean of the member vectors: the guideline as all its paraphrases say it."""
        members = self._members(g)
        cached = self._profiles.get(g.id)
        if cached is not None and cached[0] == members:
            return cached[1]
        total = np.sum([self._member_vector(*m) for m in members], axis=0)
        profile = (total / (float(np.linalg.norm(total)) or 1.0)).astype(np.float32)
        self._profiles[g.id] = (members, profile)
        return profile

    @property
    def _model_evidence(self) -> bool:
        """Whether vector cosines are a model's evidence of meaning (what ``merge_evidence``'s
        dense and context bars assume). The hash embedding's cosine is word overlap, which the
        lexical part of the similarity already counts, so it is none; nor is it while no
        model can be loaded and rules are matched by words alone (``words_only``)."""
        from skillbank.embeddings import HashEmbedding

        if getattr(self, "_words_only", False):
            return False
        return not isinstance(getattr(self.index, "embedding_function", None), HashEmbedding)

    def _context_similarity(self, context: str, g: Guideline) -> float | None:
        """Best cosine of a candidate's critique context with the contexts of `g`'s critiques.

        None when either side has no context (a critique that is only its rule): then the
        decision rests on the rule wordings alone.
        """
        if not context:
            return None
        theirs = list(dict.fromkeys(
            c for c in (critique_context(critique[:2000] if critique else None, sentence or rule)
                        for rule, sentence, critique in self._members(g)[1:]) if c))
        if not theirs:
            return None
        vectors = self._vectors_for([context] + theirs)
        return float(np.max(vectors[1:] @ vectors[0]))

    #: Weight of the lexical evidence added to the dense similarity. Critiques of one rule
    #: share its jargon ("sign-off", "NULL", "`$` prompt") even when their sentences differ.
    LEXICAL_WEIGHT = 1.0

    def _bag(self, g: Guideline) -> tuple[dict[str, float], frozenset[str]]:
        """A guideline's words (text and every member's rule, sentence and critique)."""
        members = self._members(g)
        cached = self._bags.get(g.id)
        if cached is not None and cached[0] == members:
            return cached[1], cached[2]
        counts: dict[str, int] = {}
        seen: set[str] = set()
        for rule, sentence, critique in members:
            for text in (rule, sentence, critique):
                if text and text not in seen:
                    seen.add(text)
                    for token in tokenize(text[:4000]):
                        counts[token] = counts.get(token, 0) + 1
        tf = {t: 1.0 + math.log(c) for t, c in counts.items()}
        self._bags[g.id] = (members, tf, frozenset(tf))
        return tf, frozenset(tf)

    @staticmethod
    def _tfidf(tf: dict[str, float], idf: Callable[[str], float]) -> dict[str, float]:
        weighted = {t: w * idf(t) for t, w in tf.items()}
        norm = math.sqrt(sum(v * v for v in weighted.values())) or 1.0
        return {t: v / norm for t, v in weighted.items()}

    def _lexical(self, query: str, pool: list[Guideline], scored: list[Guideline]) -> np.ndarray:
        """TF-IDF cosine of the query with the words of each `scored` guideline (idf: `pool`)."""
        df: dict[str, int] = {}
        for g in pool:
            for t in self._bag(g)[1]:
                df[t] = df.get(t, 0) + 1
        n = len(pool)
        idf = lambda t: math.log(1.0 + (n + 1) / (df.get(t, 0) + 1))  # noqa: E731
        counts: dict[str, int] = {}
        for token in tokenize(query):
            counts[token] = counts.get(token, 0) + 1
        q = self._tfidf({t: 1.0 + math.log(c) for t, c in counts.items()}, idf)
        out = np.zeros(len(scored), dtype=np.float32)
        for i, g in enumerate(scored):
            tf, words = self._bag(g)
            shared = words.intersection(q)
            if shared:
                d = self._tfidf(tf, idf)
                out[i] = sum(q[t] * d[t] for t in shared)
        return out

    def _shortlist(self, query: str, namespace: str, pool: list[Guideline],
                   always: frozenset[str] = frozenset(),
                   statuses: tuple[str, ...] = IN_PLAY) -> list[Guideline]:
        """The guidelines worth a profile comparison: all of a small pool, else the index's best.

        Profiles need every member embedded; the persistent index narrows a large pool first so
        the first learn after a restart does not embed the whole memory.
        """
        if len(pool) <= SHORTLIST:
            return pool
        where = {"$and": [{"namespace": namespace}, {"status": {"$in": list(statuses)}}]}
        hits = self.index.search(query[:MAX_SHORT], k=SHORTLIST, where=where,
                                 candidates=SHORTLIST * 2)
        by_id = {g.id: g for g in pool}
        ids = list(dict.fromkeys([h.id for h in hits] + sorted(always)))
        return [by_id[i] for i in ids if i in by_id]

    def _warm_index(self, text: str, namespace: str) -> None:
        """Read what other processes wrote to a shared index before a write takes the
        deployment's write lock, so that write's `_shortlist` answers from this process's memory.

        Why: the shortlist's search reads other workers' new vectors from Chroma first; under
        the lock, a Chroma server that stopped answering held every other worker's rule write
        up for its whole timeout (hunt-teamchurn #3, session 33). Met here, it holds no one up,
        and the search under the lock answers by keyword at once (the index's quiet window)."""
        if not getattr(self.index, "shared", False) or sum(  # a copy: writers may add meanwhile
                g.namespace == namespace for g in list(self._items.values())) <= SHORTLIST:
            return
        self.index.search(text[:MAX_SHORT], k=1, where={"namespace": namespace})

    def _seen(self, namespace: str, trusted: bool) -> tuple[str, ...]:
        """The statuses of the rules a write to `namespace` is decided against: in play
        (active and pending) for a caller who reviews the namespace, else active only.

        Pending items are shown only to whoever may decide on them (docs/scope.md). A learn's
        `nearest` and `detail` quoted an untrusted client's pending rule (id and text) to a
        contributor whose `list(status="pending")` was empty, another untrusted client's
        paraphrase was merged into it, and a trusted contributor's restatement superseded it
        ("confirms pending …"), a decision that is a reviewer's (hunt-scopes #1, session 32)."""
        return IN_PLAY if trusted and self._scope().can_review(namespace) else ("active",)

    def _related_closure(self, gid: str, hops: int) -> list[str]:
        """Guidelines linked to `gid` as related (either direction), up to `hops` links away."""
        seen = {gid}
        frontier = {gid}
        for _ in range(hops):  # links both ways from the map (`lookup`), not a walk per hop
            found = {other for f in frontier for other in self._lookup.linked(f)
                     if other not in seen and other in self._items}
            seen |= found
            frontier = found
            if not frontier:
                break
        seen.discard(gid)
        return sorted(seen)

    def _nearest(self, vector: np.ndarray, query: str, namespace: str, topic: str,
                 rule_vector: np.ndarray | None = None, touched: frozenset[str] = frozenset(),
                 n: int = MAX_NEIGHBOURS, only: Iterable[str] | None = None,
                 floor: float | None = None, statuses: tuple[str, ...] = IN_PLAY
                 ) -> list[tuple[float, str]]:
        """Guidelines of the namespace in `statuses` most like a candidate, best first.

        Similarity = cosine with the guideline's profile + LEXICAL_WEIGHT x TF-IDF cosine of
        words - TOPIC_PENALTY across topics; neighbours under `match_floor` are dropped.
        Guidelines this very critique already created or reinforced (`touched`) share its text,
        which says nothing about whether two of its rules are one: they are compared by rule and
        sentence alone (`rule_vector` against what this critique contributed to them), so two
        rules from one sentence tend to merge and rules from different sentences stand apart.
        ``only`` scores just those guidelines; ``floor`` replaces `match_floor`. ``statuses``:
        in play (active and pending) for a caller who reviews the namespace, else active only
        (`_seen`): a pending rule is neither shown to nor decided on by a
        caller who may not decide on it (hunt-scopes #1, session 32).
        """
        pool = [g for g in self._items.values()
                if g.namespace == namespace and g.status in statuses]
        if not pool:
            return []
        if only is not None:
            wanted = set(only)
            scored = [g for g in pool if g.id in wanted]
        else:
            scored = self._shortlist(query, namespace, pool, touched, statuses)
        if not scored:
            return []
        profiles = self._profiles_of(scored)
        sims = profiles @ vector
        if self.LEXICAL_WEIGHT:
            sims = sims + self.LEXICAL_WEIGHT * self._lexical(query, pool, scored)
        if self.TOPIC_PENALTY:
            other = np.asarray([g.topic != topic and "general" not in (g.topic, topic)
                                for g in scored])
            sims = sims - self.TOPIC_PENALTY * other
        if touched and rule_vector is not None:
            for i, g in enumerate(scored):
                if g.id in touched:
                    last = g.sources[-1]
                    mine = self._member_vector(getattr(last, "rule", None) or g.text,
                                               getattr(last, "sentence", None), None)
                    sims[i] = float(mine @ rule_vector)
        # Ranked before the cap: several look-alikes capped at 1.00 tied with the very same
        # rule learnt again, and the cut to `n` could leave that one out (it was added again).
        order = np.argsort(-sims, kind="stable")[:n]
        sims = np.minimum(sims, 1.0)
        floor = self.match_floor if floor is None else floor
        return [(float(sims[i]), scored[i].id) for i in order if sims[i] >= floor]

