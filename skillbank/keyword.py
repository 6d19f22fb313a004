"""The keyword side of search: the tokenizer and BM25 (bm25s) with a 0..1 normalisation.

Local Chroma has no BM25, so keyword search is ours. `keyword_format()` names what a saved BM25
depends on, so a snapshot built by another tokenizer is rebuilt rather than trusted.
"""

from __future__ import annotations

import math
import re
from collections import Counter
from typing import Any

import numpy as np

#: Bump when `tokenize` changes what it returns (saved BM25 indexes depend on it).
TOKENIZER_VERSION = 1
_TOKEN = re.compile(r"[a-z0-9]+")
_STOPWORDS = frozenset(
    """a an and are as at be but by for from has have how i if in into is it its me my of on or
    our so that the their them then there these they this to was we what when where which who
    why will with you your can do does should would could i'm want need please use using""".split()
)


_stemmer: Any = None


def tokenize(text: str) -> list[str]:
    """Lowercase words, stop words out, English stems (so 'deploying' finds 'deploy')."""
    global _stemmer
    if _stemmer is None:
        try:
            import Stemmer

            _stemmer = Stemmer.Stemmer("english").stemWords
        except ImportError:  # PyStemmer is optional: plain words still work
            _stemmer = lambda words: words  # noqa: E731
    words = [w for w in _TOKEN.findall(text.lower()) if w not in _STOPWORDS and len(w) > 1]
    return _stemmer(words)


def keyword_format() -> str:
    """What a saved BM25 depends on: the tokenizer (its version, whether words are stemmed)
    and the bm25s version. A snapshot built under another one is not restored."""
    import bm25s

    tokenize("warm")  # decides the stemmer
    stemmed = getattr(_stemmer, "__self__", None) is not None
    return f"tokenize-v{TOKENIZER_VERSION}:{'stem' if stemmed else 'plain'}:bm25s-{bm25s.__version__}"


class _Keyword:
    """BM25 over the items' keyword texts, with a 0..1 normalisation for score floors."""

    def __init__(self, ids: list[str], texts: list[str]) -> None:
        import bm25s

        self.ids = ids
        self.position = {item_id: i for i, item_id in enumerate(ids)}
        tokens = [tokenize(t) for t in texts]
        self.k1 = 1.2
        self.retriever = bm25s.BM25(k1=self.k1, b=0.75)
        vocabulary = {tok for doc in tokens for tok in doc}
        self.retriever.index(tokens, show_progress=False) if vocabulary else None
        self.empty = not vocabulary
        df: Counter[str] = Counter()
        for doc in tokens:
            df.update(set(doc))
        n = max(len(ids), 1)
        self.idf = {t: math.log(1 + (n - c + 0.5) / (c + 0.5)) for t, c in df.items()}

    @classmethod
    def restored(cls, ids: list[str], retriever: Any, idf: dict[str, float], k1: float
                 ) -> "_Keyword":
        """One read back from a snapshot (skillbank.index_snapshot), without re-tokenising."""
        self = cls.__new__(cls)
        self.ids = ids
        self.position = {item_id: i for i, item_id in enumerate(ids)}
        self.k1 = k1
        self.retriever = retriever
        self.empty = not idf
        self.idf = idf
        return self

    def scores(self, query: str) -> tuple[np.ndarray, float] | None:
        terms = [t for t in dict.fromkeys(tokenize(query)) if t in self.idf]
        if self.empty or not terms:
            return None
        scores = self.retriever.get_scores(terms)
        best_possible = sum(self.idf[t] * (self.k1 + 1) for t in terms)
        return np.asarray(scores, dtype=np.float32), best_possible
