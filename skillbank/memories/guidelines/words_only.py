"""Learning a rule while no embedding model can be loaded: matching by words alone.

A rule is matched against the guidelines in play by the cosine of their profiles plus the
TF-IDF overlap of their words (`matching`). Without a model the cosine had no vectors, and
`learn` and `add` raised the model error: an offline machine that lost its model (a new
container without the model cache, a wrong SKILLBANK_MODEL_DIR) could not learn a rule at all
(hunt-ops #1). While the model cannot be loaded, the profiles are built from the feature-hashing
embedding instead, whose cosine is word overlap: the deterministic word rules the hash embedding
has always decided by (`GuidelineMatching._model_evidence` is then False, so no merge rests on
a model's evidence of meaning). Their vectors are kept apart from the model's, so nothing
learnt meanwhile mixes two kinds of vectors in one profile; the rule's own index entry is
staged and embedded by the model once it is back (`HybridIndex.stage`, `fill`).

A rule the model does not read (mostly Chinese, Japanese, Cyrillic ...: `skillbank.unread`) is
matched by words too, model or not: four different Chinese rules were merged into one "by
meaning" at model cosine 0.78-0.88, since the model sees any two of them as alike runs of
`[UNK]` (hunt-i18n #2). Its index entry is the model's as usual; only the decision is by words.
"""

from __future__ import annotations

import contextlib
import logging
from typing import Any, Iterator

from skillbank.unread import mostly_unread

log = logging.getLogger("skillbank.guidelines")


@contextlib.contextmanager
def matching_by_words_if_unread(memory: Any, text: str) -> Iterator[bool]:
    """Within the block, `memory` matches by words alone if the model cannot embed `text` or
    does not read it (yields whether it does). Held under the memory's locks, as every
    decision is."""
    if not mostly_unread(text) and _model_embeds(memory, text):
        yield False
        return
    saved = memory._embed_fn, memory._vectors, memory._profiles
    words = _word_caches(memory)
    memory._embed_fn, memory._vectors, memory._profiles = words
    memory._words_only = True
    try:
        yield True
    finally:
        memory._embed_fn, memory._vectors, memory._profiles = saved
        memory._words_only = False


def _model_embeds(memory: Any, text: str) -> bool:
    """Whether the model embeds `text` (else keyword-only mode is said, once per process)."""
    from skillbank.embeddings import ModelUnavailableError

    try:
        memory._vectors_for([text])  # cached: the decision embeds this text first anyway
    except ModelUnavailableError as exc:
        memory.index._model_unavailable(exc)
        return False
    return True


def _word_caches(memory: Any) -> tuple[Any, dict[str, Any], dict[str, Any]]:
    """The hash embedding and the vector and profile caches of word matching (kept across
    calls: the hash embedding is deterministic)."""
    caches = getattr(memory, "_word_matching", None)
    if caches is None:
        from skillbank.embeddings import HashEmbedding

        caches = memory._word_matching = (HashEmbedding().embed, {}, {})
    return caches
