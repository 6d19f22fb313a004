"""How much each side of skill search is worth for this library and this request.

Skill search fuses a dense side (MiniLM cosine over "name: description") and a keyword side
(BM25 over name, description, headings and the opening of the body) by per-query z-score. Equal
weights were tuned on libraries whose skills have bodies; on a catalog of one-line tool
descriptions (MetaTool's 199 plugins) they lost to the dense side alone (top-1 0.625 vs 0.637):
BM25 over ten words per item mostly sees a request's filler. Two properties decide the weights,
both read off the library and the request, none fitted to a set (docs/benchmarks.md, "Routing
on libraries it was never tuned on"):

* **The keyword side's say grows with how much text it has per item**:
  `min(1, ln(words) / ln(256))`, full once an item offers as many words as MiniLM reads in one
  window (256 word pieces); a one-line catalog gets ~0.6.
* **The dense side's say is the share of the request the model can read**: all-MiniLM-L6-v2
  is an English model, so a request in Chinese is matched on its characters (the keyword side
  indexes CJK text as bigrams) and the fit is decided on keyword evidence.
"""

from __future__ import annotations

import math
import threading
from typing import Any

from skillbank.query_limits import check_length, wordless

#: Words per item at which the keyword side gets its full say: one MiniLM window.
FULL_TEXT_WORDS = 256
#: Neither side is ever switched off entirely (a stray English word in a Chinese request, an
#: exact name in a one-line catalog still count a little).
MIN_WEIGHT = 0.05
#: The fit's "no shared word" bar (fit.py) looks for a shared word among this many skills nearest
#: in meaning (the hits a caller sees by default) where skills carry less text than one MiniLM
#: window, not only the nearest: on MetaTool's one-line catalog the nearest alone emptied 8.3 %
#: of answerable requests (guard 3 %), the five 2.7 %. Where skills have bodies the nearest
#: shares a word with every answerable dev request, and looking further only lets unrelated
#: requests through (out of scope answered empty on the dev library 0.924 -> 0.907).
SHARED_WORD_AMONG = 5


def shared_word_among(words: float) -> int:
    """How many of the nearest skills may supply the shared word, for this library."""
    return 1 if words >= FULL_TEXT_WORDS else SHARED_WORD_AMONG
#: Below this share of readable letters the model's cosine is not evidence for the fit, and
#: the fit is the keyword side's: a match on at least one twentieth of the request's best
#: possible BM25 (one character bigram of a twenty-bigram request) against the library.
READABLE_FOR_FIT = 0.5
UNREADABLE_MIN_KEYWORD = 0.05


def mixed_min_keyword(task: str) -> float | None:
    """The keyword share that answers a request the model reads only in part, or None.

    A request mixing scripts ("导成能进 EndNote 或 Zotero 的参考文献库") is read by the English
    model on its Latin words alone, so the skill nearest in meaning is often not the one the
    request names, shares no word with it, and the no-shared-word bar empties the answer (2 of 74
    answerable trigger-eval requests, the only ones emptied there). The unread part is the
    keyword side's: a match on `UNREADABLE_MIN_KEYWORD` of the request's best BM25 answers a
    request that is half unreadable (where the keyword side alone decides, READABLE_FOR_FIT),
    and the bar rises with the square of how much less is unread, past the whole best BM25
    (never cleared) once a request is 89 % Latin: an accented word in an English request
    changes nothing. None for a request the model reads whole."""
    share = readable_share(task)
    if share >= 1.0:
        return None
    return UNREADABLE_MIN_KEYWORD * ((1.0 - READABLE_FOR_FIT) / max(1.0 - share, 1e-9)) ** 2

_cache: dict[int, tuple[int, float]] = {}
_lock = threading.Lock()


def words_per_item(index: Any) -> float:
    """Mean whitespace words of the items' keyword texts (cached per index and item count)."""
    count = index.count()
    with _lock:
        known = _cache.get(id(index))
    if known is not None and known[0] == count:
        return known[1]
    mean = mean_words(index)
    _remember(index, count, mean)
    return mean


def _remember(index: Any, count: int, mean: float) -> None:
    with _lock:
        if len(_cache) > 64:
            _cache.clear()
        _cache[id(index)] = (count, mean)


def mean_words(index: Any) -> float:
    """Mean whitespace words of the items' keyword texts, computed now (no cache)."""
    with index._lock:  # {id: (keyword text, metadata)}; read-only here
        texts = [text for text, _ in index._load_mirror().values()]
    return sum(len(t.split()) for t in texts) / len(texts) if texts else 0.0


def seed_words_per_item(index: Any, mean: float) -> None:
    """`words_per_item` of `index` as measured earlier on the same texts (the index snapshot
    keeps it): the first search of a new process need not split every item's text (#27)."""
    _remember(index, index.count(), float(mean))  # count() runs before `_lock` is taken


def keyword_weight(words: float) -> float:
    if words <= 1:
        return MIN_WEIGHT
    return max(MIN_WEIGHT, min(1.0, math.log(words) / math.log(FULL_TEXT_WORDS)))


def readable_share(task: str) -> float:
    """Share of the request's letters in the Latin script (what the English model reads)."""
    if task.isascii():  # every letter (if any) is ASCII: 1.0 either way, without the loop
        return 1.0  # (the loop over a routed request's letters ran three times per search)
    letters = [c for c in task if c.isalpha()]
    if not letters:
        return 1.0  # digits, symbols, emoji: nothing to gain by trusting either side less
    return sum(c.isascii() for c in letters) / len(letters)


def weights(task: str, words: float) -> tuple[float, float]:
    """(dense_weight, keyword_weight) for z-score fusion of this request in this library."""
    return max(MIN_WEIGHT, readable_share(task)), keyword_weight(words)


#: The say of the body side (each skill's best cosine over its summary and body sections) next
#: to the summary's dense side and the keyword side, for a request the model reads whole.
BODY_WEIGHT = 0.75


def body_weight(task: str) -> float:
    """The body side's weight for this request: it is the English model's too, so it follows
    the share of the request the model can read, as the dense side's does."""
    return BODY_WEIGHT * readable_share(task)


#: Up to MAX_TASK_CHARS (longer is refused), routing reads the first ROUTED_CHARS (MiniLM reads
#: ~256 word pieces anyway, and BM25 over a whole document would match every skill on some word).
ROUTED_CHARS = 4_000


def routable(task: str) -> tuple[str, str]:
    """(the part of `task` to route on, why nothing can be routed or ''); raises
    InvalidInputError for a request over MAX_TASK_CHARS (`skillbank.query_limits`, which every
    search asks)."""
    check_length(task, "skill search")
    unroutable = wordless(task)
    if unroutable:
        return task, unroutable
    return task[:ROUTED_CHARS], ""


def nearest_by_cosine(index: Any, task: str, vector: Any, default: Any) -> Any:
    """The skill nearest the request in meaning, as an IndexHit with its keyword evidence.

    The fit needs it when it fell out of the fused hits (weak keyword evidence, as a rule: about
    one search in six on a 1,739-skill library). A second fused search over every item cost a
    whole search again (Chroma's 1,000 nearest, BM25, fusion, a hit per item); the nearest few
    texts and one BM25 pass are what the answer rests on. `default` when nothing is found.
    """
    from skillbank.index import IndexHit

    with index._lock:  # as HybridIndex.search reads both sides (an RLock)
        found = index.dense(vector, SHARED_WORD_AMONG, {"chunk": 0})  # summaries, not sections
        mirror = index._load_mirror()
        found = {i: s for i, s in found.items() if i in mirror}
        if not found:
            return default
        best = max(found, key=lambda i: (found[i], i))
        keyword = index.keyword(task, len(mirror)).get(best)
        return IndexHit(id=best, score=0.0, dense=found[best], keyword=keyword,
                        why="both" if keyword else "dense", metadata=mirror[best][1])
