"""Which guideline candidates a block keeps beyond the family vote.

What users met with ``coherent_guidelines``' one family per block (hunt, session 20):

* **the rule that fits was hidden**: an agent's rule "Use the ORM instead of raw SQL." (its
  ``when_to_use`` "When writing database access code") was never shown for "Write database
  access code for the invoices table" (model cosine 0.66) because two Python rules of the
  same critique (0.40 and 0.16) won the vote; after "Skip terraform plan for docs-only changes;
  apply directly." (filed under `writing`), a Terraform task got those and not the Terraform
  rule (0.71). A rule of a losing family whose own words match the task clearly
  (``CLEAR_MATCH``) and at least as well as anything the winning family offers now comes too.
"""

from __future__ import annotations

from typing import Any

#: Model cosine (task against the rule and its ``when_to_use``) from which a rule of a family
#: that lost the vote is still shown, when no rule of the winning family matches better.
CLEAR_MATCH = 0.5


def _dense(hit: Any) -> float:
    value = getattr(hit, "dense", None)
    return float(value) if value is not None else 0.0


def with_clear_matches(hits: list[Any], chosen: list[Any]) -> list[Any]:
    """`chosen` plus the hits of other families that clearly match the task, in `hits` order."""
    kept = {id(h) for h in chosen}
    bar = max([CLEAR_MATCH, *(_dense(h) for h in chosen)])
    kept |= {id(h) for h in hits if _dense(h) >= bar}
    return [h for h in hits if id(h) in kept]


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
    other families (see the module docstring). A topic the caller named is kept to as it is."""
    if topic is not None:
        return chosen
    if _model_cosine(bank):
        chosen = with_clear_matches(hits, chosen)
    return chosen
