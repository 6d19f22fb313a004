"""Which guidelines a memory block takes: the rules of one topic family, one critique's rules
after the others.

Split from ``skillbank.context`` (which renders the block): this is the choice among the
guideline candidates, each rule's family read off its own words; ``block_fit`` adds what the
vote would hide and abstains when nothing fits.
"""

from __future__ import annotations

import functools
from typing import Any


#: Guidelines are shown only from one topic family: keyword and embedding overlap alone let
#: rules of another domain into a block ("Always cite the source" in a Python task).
COHERENT_TOP = 2  # the best hits with evidence of their own: a "general" rule only among them
#: The family is the one the best candidates with evidence of their own vote for, each with
#: its fused score (hunt-learnfaces #1, session 38: rules without evidence outvoted the one
#: that matched, by their number). The two
#: best hits were of two domains on about a quarter of the tasks (critique stream, dev,
#: agent-written rules: 92 of 396 best hits off-domain), and a block took both families.
#: Five voters: 3 / 5 / 8 / 12 were tried on the stream and on the set's 26 held-out tasks.
FAMILY_VOTERS = 5
#: Candidates the block chooses among (the family's rules, best first, until the budget is
#: full): a rule of the task's domain worded far from the task ranks 10th-35th.
FAMILY_POOL = 40


@functools.lru_cache(maxsize=8192)
def _family_of(topic: str, text: str, when: str) -> str:
    from skillbank.distill.topics import TOPIC_KEYWORDS, guess_topic, rule_only_topic, topic_family

    stored = topic_family(topic)
    if topic != "general" and topic not in {row[0] for row in TOPIC_KEYWORDS}:
        # a topic the writer named (not one of the keyword guess's): theirs, unless its name is
        # a word that files a rule ("deploy": infra, as the rule's own words would)
        meant = rule_only_topic(topic)
        return topic_family(meant) if meant else stored
    if not when:
        return stored
    guess = guess_topic(f"{text} {when}", own_words=text)
    return topic_family(guess) if guess != "general" else stored


def rule_family(record: Any) -> str:
    """The topic family a rule belongs to in a block, read off the rule's own words (its
    text and ``when_to_use``) when its stored topic is the keyword guess's.

    Why not the stored topic: a rule an agent writes without a topic is filed by the keyword
    guess over the rule, the task and the critique it came from, so the task's words can file
    it under the task's domain rather than the rule's ("Make every code sample complete and
    runnable" under `code`, "Write sequential procedures as numbered steps" under `slides`,
    both documentation rules by their ``when_to_use``). Such rules pulled the family vote to
    the wrong domain and came into other domains' blocks. Read off the rule and its `when`
    alone, 40 of the critique stream's 40 rules land in their domain (38 stored). A topic
    outside the guess's vocabulary (one a person or an agent named) is kept as written, as
    is the stored topic when the rule's words name none. A named topic that is also one of the
    guess's (``python``, ``sql``...) cannot be told from a guess (a record keeps no source for
    its topic), so its family is re-read too when the rule's words name another: a known limit
    (storing where a topic came from would lift it). ``guidelines.search`` and the stored
    topic are unchanged (filing by the rule's words first cost Recall@5 there, see
    ``distill.topics.guess_topic``); this is the block's choice of family only."""
    return _family_of(str(getattr(record, "topic", "general") or "general"),
                      str(getattr(record, "text", "") or ""),
                      " ".join(str(getattr(record, "when_to_use", "") or "").split()))


def coherent_guidelines(hits: list[Any], top: int = COHERENT_TOP,
                        voters: int = FAMILY_VOTERS, topic: str | None = None) -> list[Any]:
    """The hits of the topic family the best candidates vote for, best first (a "general"
    rule only when it is among the best `top` hits with evidence itself).

    Families, not slugs: a Python task's "code" rules and an analysis task's "sql" rules are
    its own (``skillbank.distill.topics.topic_family``). The family is chosen by the first
    `voters` hits that have evidence of their own (all of them when none has), each weighted
    by its score, not by the two best hits alone: the best two
    were of two domains on about a quarter of the tasks, and the block then showed both
    families. One family, all of its rules in the pool (not only the first 8-16 candidates):
    see docs/benchmarks.md (learning loop, session 7) for the figures and for the curve of a
    second family and of the evidence floors.

    A block still needs a hit with evidence of its own (``guidelines.search``'s floors); a
    rule of the task's family is often worded far from the task ("Add type hints ..." for
    "Refactor the CSV export module") and comes with them. With no hit of its own merit the
    section abstains.

    `topic`: the task's topic as the caller states it (the slug its rules are filed under,
    e.g. the ``topic`` an agent gave them in ``learn(rules=...)``): the block keeps to that
    topic's family instead of the vote. The vote picks the task's domain right on only ~80%
    of the critique stream's tasks with all-MiniLM-L6-v2, and every wrong vote shows another
    domain's rules; an agent knows what kind of task it is doing. A stated topic filters, as
    ``guidelines.search(topic=...)`` does: no rule of it, no guideline section (a "general"
    rule among the best hits still comes)."""
    from collections import defaultdict

    from skillbank.distill.topics import topic_family
    from skillbank.memories.guidelines.search import has_evidence

    best = [h for h in hits if has_evidence(h.dense, h.keyword)][:top]
    if not best:
        return []
    if topic is not None:  # the caller's topic names stored topics: their families
        stored = lambda h: topic_family(getattr(h.record, "topic", "general"))  # noqa: E731
        chosen = {id(h) for h in best if stored(h) == "general"}
        stated = topic_family(topic)
        return [h for h in hits if id(h) in chosen or stored(h) == stated]
    family = lambda h: rule_family(h.record)  # noqa: E731
    chosen = {id(h) for h in best if family(h) == "general"}
    # Only voters with evidence of their own (hunt-learnfaces #1, session 38): the fused
    # scores of the first candidates are nearly flat (0.0328 vs 0.0308), so rules the task
    # shares no meaning with (cosine 0.03-0.13, under both floors) outvoted the one rule that
    # matched, by their number alone: a SQL task got two support rules, or (the off-topic
    # guard then judging them) no section at all. All of them vote when none has evidence.
    voting = [h for h in hits[:voters] if has_evidence(h.dense, h.keyword)] or hits[:voters]
    votes: dict[str, float] = defaultdict(float)
    for hit in voting:
        if family(hit) != "general":
            votes[family(hit)] += max(1e-9, float(getattr(hit, "score", 0.0) or 0.0))
    if not votes:
        return [h for h in hits if id(h) in chosen]
    winner = min(votes, key=lambda f: (-votes[f], f))  # ties: by name, the same every run
    return [h for h in hits if id(h) in chosen or family(h) == winner]


def siblings_last(hits: list[Any]) -> list[Any]:
    """`hits` best first, except that a rule sharing a source critique with a better hit goes
    after every rule that does not (in its own order).

    Why: one critique often yields several rules ("Lead with the steps; chunk whatever
    explanation you keep." gives two), and they rank side by side because the critique is part
    of what each one matched on. At a small budget they filled the block with one review's
    rules while another review's rule for the same kind of task fell off the end. Deferred,
    they still come when there is room. On the critique stream (docs/benchmarks.md, "The
    learning loop", session 12) this put more of the taught rules in 400-token blocks, no
    model and agent-written rules alike."""
    seen: set[tuple[str, str]] = set()
    first: list[Any] = []
    later: list[Any] = []
    for hit in hits:
        keys = {(str(source.critique), str(source.task or ""))
                for source in getattr(hit.record, "sources", None) or ()}
        if keys & seen:
            later.append(hit)
        else:  # only a rule shown first makes its critiques' other rules wait
            first.append(hit)
            seen |= keys
    return first + later
