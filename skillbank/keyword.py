"""The keyword side of search: the tokenizer and BM25 with a 0..1 normalisation.

Local Chroma has no BM25, so keyword search is ours. `keyword_format()` names what a saved BM25
depends on, so a snapshot built by another tokenizer is rebuilt rather than trusted.
"""

from __future__ import annotations

import math
import re
import unicodedata
from collections import Counter
from typing import Any, Callable

import numpy as np

from skillbank.fusion import id_ranks
from skillbank.relevance import BM25_K1
from skillbank.text_words import word_pattern

#: Bump when `tokenize` changes what it returns (saved BM25 indexes depend on it).
#: 2: Chinese/Japanese/Korean text yields character bigrams (it yielded nothing before).
#: 3: "about" is a stop word: every distilled rule's `when_to_use` ends "; about <key words>",
#: so "Tell me about whales" matched every rule by keyword and off-topic rules came into blocks.
#: 4: words of every script (NFKC, casefolded), not only a-z0-9: a skill described in Russian,
#: Arabic or Greek was not found by its own words, and "Größe prüfen" was read as gr/pr/fen.
TOKENIZER_VERSION = 4
#: Bump when the saved BM25 layout changes (2: skillbank's own arrays, no longer bm25s's).
BM25_FORMAT = 2
#: Runs of CJK characters (kana, CJK ideographs, hangul): no spaces between words, so they are
#: indexed as overlapping character bigrams, the usual unsupervised choice for these scripts.
_CJK = re.compile("[\u3040-\u30ff\u3400-\u4dbf\u4e00-\u9fff\uf900-\ufaff\uac00-\ud7af]+")
_ASCII_TOKEN = re.compile(r"[a-z0-9]+")  # the same words for ASCII text, without NFKC's cost
_STOPWORDS = frozenset(
    """a an and are as at be but by for from has have how i if in into is it its me my of on or
    our so that the their them then there these they this to was we what when where which who
    why will with you your can do does should would could i'm want need please use using
    about""".split()
)


_stemmer: Any = None


def _stem(words: list[str]) -> list[str]:
    global _stemmer
    if _stemmer is None:
        try:
            import Stemmer

            _stemmer = Stemmer.Stemmer("english").stemWords
        except ImportError:  # PyStemmer is optional: plain words still work
            _stemmer = lambda words: words  # noqa: E731
    return _stemmer(words)


def words(text: str) -> list[str]:
    """The words of `text` as `tokenize` reads them (letters and digits of any script, NFKC,
    casefolded), with no stop word dropped, no stem taken and a CJK run as one word: what
    decides whether two texts say the same thing (experience folding keys)."""
    if text.isascii():
        return _ASCII_TOKEN.findall(text.lower())
    return word_pattern().findall(unicodedata.normalize("NFKC", text).casefold())


def tokenize(text: str) -> list[str]:
    """Words of any script (NFKC, casefolded), stop words out, English stems (so 'deploying'
    finds 'deploy'); Chinese/Japanese/Korean runs as character bigrams.

    The English stemmer leaves words of other scripts as they are (its suffixes are a-z) and
    only trims English-looking endings of other Latin words ("résumés" -> "résumé"); query and
    items are stemmed alike, so it never hides a word. The stop words are English only: a
    German "die" is kept, as "die" is an English word too and English routing must not move.
    """
    if text.isascii():  # most text: NFKC and casefold change nothing, [^\W_] is [a-z0-9]
        return _stem([w for w in _ASCII_TOKEN.findall(text.lower())
                      if w not in _STOPWORDS and len(w) > 1])
    folded = unicodedata.normalize("NFKC", text).casefold()
    runs = _CJK.findall(folded)  # no spaces between words: bigrams below, not one long "word"
    if runs:
        folded = _CJK.sub(" ", folded)
    words = _stem([w for w in word_pattern().findall(folded)
                   if w not in _STOPWORDS and len(w) > 1])
    for run in runs:  # a request in Chinese shares no spaced word with anything
        words.extend([run] if len(run) == 1 else [run[i:i + 2] for i in range(len(run) - 1)])
    return words


def keyword_format() -> str:
    """What a saved BM25 depends on: the tokenizer (its version, whether words are stemmed)
    and the layout of the saved arrays. A snapshot built under another one is not restored."""
    tokenize("warm")  # decides the stemmer
    stemmed = getattr(_stemmer, "__self__", None) is not None
    return f"tokenize-v{TOKENIZER_VERSION}:{'stem' if stemmed else 'plain'}:bm25-v{BM25_FORMAT}"


class KeywordStats:
    """Collection statistics BM25 scores with: documents, total length, document frequencies.

    Scores of a fresh build depend on the statistics of the whole collection (idf, average
    length). An index that scores new items apart (``HybridIndex``'s delta) must score *both*
    parts with the statistics of the union, else a rule learnt after the first search has an
    idf computed over a handful of items and outscores everything (an "Always cite the source"
    that matched every prompt until the next restart).
    """

    def __init__(self, n: int, total: float, df: Callable[[str], int]) -> None:
        self.n = n
        self.total = total
        self.df = df

    @property
    def avgdl(self) -> float:
        return self.total / self.n if self.n else 1.0

    def idf(self, term: str) -> float:
        count = self.df(term)
        return math.log(1 + (self.n - count + 0.5) / (count + 0.5))

    def terms(self, query: str) -> list[str]:
        """The query's distinct terms that occur in the collection, in query order."""
        return [t for t in dict.fromkeys(tokenize(query)) if self.df(t) > 0]


class _Keyword:
    """BM25 (Lucene variant, as bm25s computes it) over the items' keyword texts, with a 0..1
    normalisation for score floors.

    Stored as numpy arrays in both directions: term -> (rows, term frequencies) for scoring and
    row -> terms for taking a changed row's words out of the collection statistics. Scores are
    computed at query time from statistics passed in (:class:`KeywordStats`), so an index whose
    newer items live in a second, small ``_Keyword`` scores every item exactly as a fresh build
    over all of them would.
    """

    k1 = BM25_K1
    b = 0.75

    def __init__(self, ids: list[str], texts: list[str]) -> None:
        counters = [Counter(tokenize(t)) for t in texts]
        vocabulary: dict[str, int] = {}
        row_ptr = [0]
        row_terms: list[int] = []
        row_tfs: list[int] = []
        for counter in counters:
            for term, count in counter.items():
                row_terms.append(vocabulary.setdefault(term, len(vocabulary)))
                row_tfs.append(count)
            row_ptr.append(len(row_terms))
        lengths = np.asarray([sum(c.values()) for c in counters], dtype=np.float64)
        self._setup(list(ids), list(vocabulary), np.asarray(row_ptr, dtype=np.int64),
                    np.asarray(row_terms, dtype=np.int64), np.asarray(row_tfs, dtype=np.float64),
                    lengths)

    def _setup(self, ids: list[str], terms: list[str], row_ptr: np.ndarray,
               row_terms: np.ndarray, row_tfs: np.ndarray, lengths: np.ndarray) -> None:
        self.ids = ids
        self.position = {item_id: i for i, item_id in enumerate(ids)}
        self._id_rank: np.ndarray | None = None
        self._id_array: np.ndarray | None = None
        self.terms = terms
        self.vocabulary = {t: i for i, t in enumerate(terms)}
        self.row_ptr, self.row_terms, self.row_tfs, self.lengths = (
            row_ptr, row_terms, row_tfs, lengths)
        rows = np.repeat(np.arange(len(ids), dtype=np.int64), np.diff(row_ptr))
        order = np.argsort(row_terms, kind="stable")
        self.term_rows = rows[order]
        self.term_tfs = row_tfs[order]
        counts = np.bincount(row_terms, minlength=len(terms))
        self.term_ptr = np.concatenate([[0], np.cumsum(counts)]).astype(np.int64)
        self.doc_freq = counts
        self.empty = not terms
        self.total = float(lengths.sum())

    @property
    def id_rank(self) -> np.ndarray:
        """Each row's place among the ids sorted (`fusion.best_first`'s tie order), computed
        once per build: a search asks for every matching row in that order."""
        if self._id_rank is None:
            self._id_rank = id_ranks(self.ids)
        return self._id_rank

    @property
    def id_array(self) -> np.ndarray:
        """The ids as an object array (once per build): a search names its matches by indexing
        it, not by a Python loop over every matching row."""
        if self._id_array is None:
            self._id_array = np.array(self.ids, dtype=object)
        return self._id_array

    @property
    def idf(self) -> dict[str, float]:
        """Idf per term under this build's own statistics (for inspection)."""
        stats = self.stats()
        return {t: stats.idf(t) for t in self.terms}

    def df(self, term: str) -> int:
        index = self.vocabulary.get(term)
        return 0 if index is None else int(self.doc_freq[index])

    def stats(self) -> KeywordStats:
        """This build's own statistics (exact when it holds the whole collection)."""
        return KeywordStats(len(self.ids), self.total, self.df)

    def row_words(self, row: int) -> tuple[list[str], float]:
        """The distinct terms of one row and its length."""
        start, end = self.row_ptr[row], self.row_ptr[row + 1]
        return [self.terms[i] for i in self.row_terms[start:end]], float(self.lengths[row])

    def scores(self, query: str, stats: KeywordStats | None = None
               ) -> tuple[np.ndarray, float] | None:
        """BM25 of every row for `query` under `stats` (default: this build's own), and the
        best score a row could reach (sum of idf x (k1 + 1)), or None when no term matches."""
        stats = stats or self.stats()
        terms = stats.terms(query)
        if self.empty or not terms or not stats.n:
            return None
        scores = np.zeros(len(self.ids), dtype=np.float64)
        norm = self.k1 * ((1 - self.b) + self.b * self.lengths / stats.avgdl)
        for term in terms:
            index = self.vocabulary.get(term)
            if index is None:
                continue
            start, end = self.term_ptr[index], self.term_ptr[index + 1]
            rows, tfs = self.term_rows[start:end], self.term_tfs[start:end]
            scores[rows] += stats.idf(term) * (tfs / (tfs + norm[rows]))
        best_possible = sum(stats.idf(t) * (self.k1 + 1) for t in terms)
        return scores.astype(np.float32), best_possible

    # Snapshot ---------------------------------------------------------------------------------
    def save(self, folder: Any) -> None:
        """Arrays to ``folder/arrays.npz`` (no pickle); ids and terms are the caller's JSON."""
        np.savez(str(folder / "arrays.npz"), row_ptr=self.row_ptr, row_terms=self.row_terms,
                 row_tfs=self.row_tfs, lengths=self.lengths)

    @classmethod
    def load(cls, folder: Any, ids: list[str], terms: list[str]) -> "_Keyword":
        """One read back from a snapshot (skillbank.index_snapshot), without re-tokenising."""
        self = cls.__new__(cls)
        with np.load(str(folder / "arrays.npz"), allow_pickle=False) as data:
            self._setup(ids, terms, data["row_ptr"], data["row_terms"], data["row_tfs"],
                        data["lengths"])
        if len(self.lengths) != len(ids) or len(self.row_ptr) != len(ids) + 1:
            raise ValueError("keyword snapshot arrays do not match its ids")
        return self


def union_stats(full: _Keyword, stale_rows: list[int], delta: "_Keyword | None") -> KeywordStats:
    """Statistics of the collection as it is now: `full` without its `stale_rows` (items
    changed or removed since it was built) plus `delta` (their current versions)."""
    removed: Counter[str] = Counter()
    removed_length = 0.0
    for row in stale_rows:
        words, length = full.row_words(row)
        removed.update(words)
        removed_length += length
    n = len(full.ids) - len(stale_rows) + (len(delta.ids) if delta is not None else 0)
    total = full.total - removed_length + (delta.total if delta is not None else 0.0)

    def df(term: str) -> int:
        return full.df(term) - removed.get(term, 0) + (delta.df(term) if delta is not None else 0)

    return KeywordStats(n, total, df)
