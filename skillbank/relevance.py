"""How closely one search hit matches its query, on one 0..1 scale whatever memory it came from.

Each memory ranks by a fused score of its own: reciprocal-rank fusion plus a vote prior for
guidelines (2/61 = 0.0328 for a hit first on both sides, whatever its similarity), z-scores
plus a usage prior for experiences (about 0.001, and below 0 for a hit ranked under the mean).
Such a score orders the hits of one search and says nothing on its own, yet the retrievers
handed it on as a LangChain document's and a LlamaIndex node's ``score``: a
``SimilarityPostprocessor(similarity_cutoff=0.3)`` dropped every guideline and experience,
exact matches included (hunt-rag #3, session 24). `relevance` reads the evidence a hit carries
instead; the ranking is left as it is.
"""

from __future__ import annotations

#: BM25's k1 (`skillbank.keyword._Keyword` reads it from here). A word a text of average length
#: holds once scores 1 / (1 + k1) of its idf, and the best possible score a keyword share is
#: measured against is (1 + k1) times the idf: so a text holding every query word once has a
#: share of 1 / (1 + k1) ** 2, about 0.21 (`recall.MIN_KEYWORD_ALONE`'s "word for word").
BM25_K1 = 1.2
WORD_FOR_WORD = 1.0 / (1.0 + BM25_K1) ** 2


def relevance(dense: float | None, keyword: float | None) -> float:
    """How closely a hit matches its query, 0..1, higher is closer.

    The cosine similarity of the query and the hit's nearest embedded text (below 0: 0) when the
    hit was seen by the dense search. Else (no embedding model, or a hit found by its words
    alone) its keyword share rescaled so that a text holding each of the query's words once
    scores 1 (words no record holds do not count). 0 for a hit with no evidence of either.
    """
    if dense is not None:
        return min(1.0, max(0.0, float(dense)))
    if keyword is not None:
        return min(1.0, max(0.0, float(keyword)) / WORD_FOR_WORD)
    return 0.0
