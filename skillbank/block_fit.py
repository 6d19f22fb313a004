"""Which guideline candidates a block keeps beyond the family vote, and when it keeps none.

Two defects users met with ``coherent_guidelines``' one family per block (hunt, session 20):

* **the rule that fits was hidden**: an agent's rule "Use the ORM instead of raw SQL." (its
  ``when_to_use`` "When writing database access code") was never shown for "Write database
  access code for the invoices table" (model cosine 0.66) because two Python rules of the
  same critique (0.40 and 0.16) won the vote; after "Skip terraform plan for docs-only changes;
  apply directly." (filed under `writing`), a Terraform task got those and not the Terraform
  rule (0.71). A rule of a losing family whose own words match the task clearly
  (``CLEAR_MATCH``) and at least as well as anything the winning family offers now comes too.
* **no abstention on small banks**: with five support and SQL rules, "Plan a birthday party
  for my seven year old daughter" and "Explain how photosynthesis works" got the three support
  rules (best cosine 0.10 and 0.18: a shared word or chance). The skills' out-of-scope guard
  (``memories.skills.fit``) compares the best skill with background prototypes of what no
  library covers (general knowledge, everyday life, personal advice ...); the block now does the
  same for its guidelines: when the chosen rules' best cosine does not reach the best prototype's
  (less ``BACKGROUND_MARGIN``), the task is about something else and the section abstains. Only
  with all-MiniLM-L6-v2, for which those prototypes were measured; not when the caller named
  the topic (then the block keeps to it, as ``coherent_guidelines`` says).

The experience section abstains too (hunt-expscale #1, session 37): with a few hundred software
runs in the bank, "Bake a chocolate cake for the party" got two of them ("Write a SQL query
joining sessions…", cosine 0.19-0.20), as recall's floor is the skills' 0.18 and the
background prototypes sit lower still for such tasks (0.15), so ``off_topic`` cannot tell.
``fit_experiences`` shows none when no recalled run reaches ``EXPERIENCE_FLOOR`` by model
cosine and none shares most of the task's words (``KEYWORD_SUPPORT``). ``recall`` itself keeps its
floor: a caller ranking runs (the benchmark's leave-one-out queries) still gets them.
"""

from __future__ import annotations

import threading
from typing import Any

#: Model cosine (task against the rule and its ``when_to_use``) from which a rule of a family
#: that lost the vote is still shown, when no rule of the winning family matches better.
CLEAR_MATCH = 0.5

#: Model cosine (all-MiniLM-L6-v2, task against a run's task / when_to_use) from which a
#: recalled run is about the task: unrelated English tasks reach 0.18-0.25 against a bank of
#: 2,000 runs (docs/benchmarks.md, experience recall, session 37).
EXPERIENCE_FLOOR = 0.3
#: BM25 share of the task's best possible score from which a run below that floor is shown
#: all the same: most of the task's words, not one ("Book a dentist appointment" shares
#: "book" with household runs at 0.36, "Bake a chocolate cake for the party" "party" at 0.30;
#: recall's own bar, 0.25, lets one such word through).
KEYWORD_SUPPORT = 0.5

_backgrounds: dict[int, Any] = {}
_lock = threading.Lock()


def _dense(hit: Any, local: dict[int, float] | None = None) -> float:
    value = getattr(hit, "dense", None)
    if value is None and local:
        value = local.get(id(hit))
    return float(value) if value is not None else 0.0


def with_clear_matches(hits: list[Any], chosen: list[Any],
                       local: dict[int, float] | None = None) -> list[Any]:
    """`chosen` plus the hits of other families that clearly match the task, in `hits` order
    (`local`: the model cosine of hits the index gave none, see `local_cosines`)."""
    kept = {id(h) for h in chosen}
    bar = max([CLEAR_MATCH, *(_dense(h, local) for h in chosen)])
    kept |= {id(h) for h in hits if _dense(h, local) >= bar}
    return [h for h in hits if id(h) in kept]


def local_cosines(bank: Any, task: str, hits: list[Any]) -> dict[int, float]:
    """The model cosine (by `id(hit)`) of the hits the index gave no dense score, computed in
    this process from the texts the index embeds for each rule, when the search's dense side
    did not answer for them: a Chroma outage (every hit found by keyword) or rules staged for
    the index. Why: with no cosine a rule of a family that lost the vote could never be a
    clear match, so during an outage a relevant rule that search still found was hidden from
    the block (hunt-lxteam #3, session 37: the infra rule "Always renew the gateway TLS
    certificate with certbot staging first", cosine 0.75, dropped for a rule filed under
    `code`). Empty on the normal path (every hit has its cosine, or the search's dense side was
    complete: a hit beyond the index's nearest texts is no clear match), for a task the model
    does not read (its cosine is no evidence, `skillbank.unread`) and without a model."""
    missing = [h for h in hits if getattr(h, "dense", None) is None]
    if not missing or not _model_cosine(bank):
        return {}
    if len(missing) < len(hits) and getattr(hits, "dense_complete", True):
        return {}
    from skillbank.embeddings import embed_query, embed_texts
    from skillbank.unread import mostly_unread

    if mostly_unread(task):
        return {}
    function = bank.embedding_function
    index_item = getattr(getattr(bank, "guidelines", None), "_index_item", None)
    texts: list[list[str]] = []
    for hit in missing:
        g = hit.record
        try:
            texts.append(list(index_item(g, "").embed_texts) if index_item else [])
        except Exception:  # noqa: BLE001 - the rule and its `when`, as the index's first text
            texts.append([])
        if not texts[-1]:
            when = " ".join(str(getattr(g, "when_to_use", "") or "").split())
            texts[-1] = [f"{g.text} {when}".strip()]
    try:
        query = embed_query(function, task)
        vectors = embed_texts(function, [t for group in texts for t in group])
    except Exception:  # noqa: BLE001 - no model at hand: keyword-only, as before
        return {}
    cosines: dict[int, float] = {}
    start = 0
    for hit, group in zip(missing, texts):
        cosines[id(hit)] = float(max(vectors[start:start + len(group)] @ query))
        start += len(group)
    return cosines


def _background(function: Any) -> Any:
    from skillbank.memories.skills.fit import Background

    with _lock:
        found = _backgrounds.get(id(function))
        if found is None or found.embedding_function is not function:
            found = _backgrounds[id(function)] = Background(function)
        return found


def off_topic(bank: Any, task: str, chosen: list[Any],
              local: dict[int, float] | None = None) -> bool:
    """Whether the task is about something no chosen rule is about: their best model cosine
    is below the nearest background prototype's by more than the skills' margin."""
    from skillbank.embeddings import MiniLMEmbedding, embed_query
    from skillbank.memories.skills.fit import BACKGROUND_MARGIN

    function = getattr(bank, "embedding_function", None)
    dense = [_dense(h, local) for h in chosen
             if getattr(h, "dense", None) is not None or id(h) in (local or {})]
    if not isinstance(function, MiniLMEmbedding) or not dense:
        return False
    try:
        similarities = _background(function).similarities(embed_query(function, task))
    except Exception:  # noqa: BLE001 - no model at hand: keep what the vote chose
        return False
    # No absolute floor beside it: the skills' chance level (0.2) as one cost repeated mistakes
    # on the learning loop (no model 0.549 -> 0.537 at 400 tokens, agent-written 0.833 -> 0.827;
    # docs/benchmarks.md, session 20), so "Explain how photosynthesis works" (0.18 against a
    # support rule, prototypes 0.15) still gets rules.
    return max(dense) < float(similarities.max(initial=-1.0)) - BACKGROUND_MARGIN


def _model_cosine(bank: Any) -> bool:
    """Whether the hits' dense cosine is a model's reading of meaning: the hash embedding's is
    word overlap, which the keyword side already counts (a support rule sharing three words
    with a Python task reached 0.5 with it)."""
    from skillbank.embeddings import HashEmbedding

    function = getattr(bank, "embedding_function", None)
    return function is not None and not isinstance(function, HashEmbedding)


def fit_to_task(bank: Any, task: str, hits: list[Any], chosen: list[Any],
                topic: str | None) -> list[Any]:
    """The guideline hits a block shows: the family vote's `chosen`, with clear matches of
    other families, or none when the task is off every rule's topic (see the module
    docstring). A topic the caller named is kept to as it is."""
    if topic is not None:
        return chosen
    local = local_cosines(bank, task, hits)  # none on the normal path
    if _model_cosine(bank):
        chosen = with_clear_matches(hits, chosen, local)
    return [] if chosen and off_topic(bank, task, chosen, local) else chosen


def fit_experiences(bank: Any, task: str, hits: list[Any]) -> list[Any]:
    """The recalled runs a block shows: those of `hits` about the task (model cosine at least
    `EXPERIENCE_FLOOR`, or most of the task's words shared, `KEYWORD_SUPPORT`); none when the
    task is about something no run is about. Only with all-MiniLM-L6-v2, for which the floor was
    measured. A hit without a cosine is one BM25 found and dense search did not: judged by
    its words alone (the cake task's third run, "Add a comment 'Thank you so much!' to all
    the venmo payments", shared one word at 0.30). Recall whose dense side did not see every
    record (`dense_complete` false: the model or its server out, records not embedded yet)
    and a task the model does not read (`mostly_unread`: recall weighs its shared tokens)
    keep them all."""
    from skillbank.embeddings import MiniLMEmbedding
    from skillbank.unread import mostly_unread

    if not hits or not isinstance(getattr(bank, "embedding_function", None), MiniLMEmbedding):
        return hits
    if not getattr(hits, "dense_complete", True) or mostly_unread(task):
        return hits
    # Run by run, not all or none: one run at 0.73 kept recall's 0.25 "Translate the CLI docs
    # into French" beside it for "libvips SIGSEGV" (review 2, session 37).
    return [h for h in hits if _dense(h) >= EXPERIENCE_FLOOR
            or (getattr(h, "keyword", None) or 0.0) >= KEYWORD_SUPPORT]
