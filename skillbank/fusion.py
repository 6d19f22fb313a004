"""How a hybrid search merges its dense and keyword scores into one ranking.

Rank fusion (RRF) for small candidate lists, z-score fusion over every item or over the
candidates for large collections, and a top-k that breaks ties by id so results never depend
on the order an index happened to return them in.
"""

from __future__ import annotations

from itertools import repeat
from typing import Any, Sequence

import numpy as np

from skillbank.filters import matches

RRF_K = 60


def best_first(scores: np.ndarray, ids: Sequence[str], k: int,
               id_rank: np.ndarray | None = None) -> np.ndarray:
    """Positions of the `k` best scores (all when k=0), best first, equal scores by id.

    Chroma and BM25 return equal scores in no fixed order; breaking ties by id makes the same
    candidates come back in the same order however the index was built. Only the items scoring
    at least the k-th best are sorted, so a small `k` over thousands of items stays cheap.
    (Which tied items Chroma itself returns at its `n_results` cut is up to Chroma.)

    `id_rank`: each position's place among `ids` sorted (`id_ranks`), for unique ids ranked
    often: the same order without sorting the chosen ids' strings again. The keyword side asks
    for every matching item of a skill library on each search, and sorting their names was
    ~1 ms of a warm search at 2,000 skills (cProfile, docs/benchmarks.md "Session 9").
    """
    n = len(scores)
    if n == 0:
        return np.zeros(0, dtype=np.int64)
    if k and k < n:
        kth_best = -np.partition(-scores, k - 1)[k - 1]
        chosen = np.nonzero(scores >= kth_best)[0]
    else:
        chosen = np.arange(n)
    if id_rank is not None:
        ordered = chosen[np.lexsort((id_rank[chosen], -scores[chosen]))]
        return ordered[:k] if k else ordered
    names = np.array([ids[i] for i in chosen], dtype=object)
    rank = np.empty(len(chosen), dtype=np.int64)
    rank[np.argsort(names, kind="stable")] = np.arange(len(chosen))
    ordered = chosen[np.lexsort((rank, -scores[chosen]))]
    return ordered[:k] if k else ordered


def id_ranks(ids: Sequence[str]) -> np.ndarray:
    """Each id's place in sorted order (for `best_first`'s `id_rank`; ids must be unique, so
    ranking the chosen ones among all of them orders them as ranking them among themselves)."""
    rank = np.empty(len(ids), dtype=np.int64)
    rank[np.argsort(np.array(list(ids), dtype=object), kind="stable")] = np.arange(len(ids))
    return rank


def _rrf_fuse(dense: dict[str, float], keyword: dict[str, float], dense_weight: float,
              keyword_weight: float, mirror: dict, where: dict[str, Any] | None
              ) -> tuple[list[str], np.ndarray]:
    fused: dict[str, float] = {}
    for weight, scores in ((dense_weight, dense), (keyword_weight, keyword)):
        ranked = sorted(scores, key=lambda item_id: (-scores[item_id], item_id))
        for rank, item_id in enumerate(ranked):
            fused[item_id] = fused.get(item_id, 0.0) + weight / (RRF_K + rank + 1)
    ids = [i for i in fused if i in mirror]
    return ids, np.array([fused[i] for i in ids], dtype=np.float64)


def _z_fuse(dense: dict[str, float], keyword: dict[str, float], dense_weight: float,
            keyword_weight: float, mirror: dict, where: dict[str, Any] | None,
            pending: set[str] = frozenset(),  # type: ignore[assignment]
            body: dict[str, float] | None = None, body_weight: float = 0.0
            ) -> tuple[list[str], np.ndarray]:
    """Average of per-query z-scores over every item that passes the filter.

    Items beyond the dense candidate list get the lowest similarity seen; items BM25 did not
    match score 0 on that side. Items without a current vector (`pending`: still being
    embedded, or no model at all) are scored by their keyword z-score alone, so the lowest
    similarity does not bury them while the dense side fills in. `body`: a third, dense side
    (each item's best cosine over all its texts), weighted `body_weight`, scored like `dense`.
    """
    # Built with map() over dict.get, not per-item comprehensions: this runs on every skill
    # search over every item, and the comprehensions were a sixth of a warm search at 1,739
    # skills (cProfile, docs/benchmarks.md "Routing ... search time").
    ids = list(mirror) if not where else [
        i for i, (_, meta) in mirror.items() if matches(where, meta)]
    if not ids:
        return [], np.zeros(0)
    n = len(ids)
    floor = min(dense.values()) if dense else 0.0
    d = np.fromiter(map(dense.get, ids, repeat(floor, n)), dtype=np.float64, count=n)
    if not body:
        body_weight = 0.0
    total = dense_weight + keyword_weight + body_weight
    kw = np.fromiter(map(keyword.get, ids, repeat(0.0, n)), dtype=np.float64, count=n)
    kw_z = _standardise(kw) if keyword else np.zeros(n)
    b = None
    if body_weight:
        assert body
        b_floor = min(body.values())
        b = np.fromiter(map(body.get, ids, repeat(b_floor, n)), dtype=np.float64, count=n)
    if not pending or pending.isdisjoint(ids):
        score = dense_weight / total * _standardise(d) + keyword_weight / total * kw_z
        if b is not None:
            score += body_weight / total * _standardise(b)
        return ids, score
    has_vector = np.fromiter((i not in pending for i in ids), dtype=bool, count=n)
    score = kw_z.copy()
    if has_vector.any():
        d_z = np.zeros(len(ids))
        d_z[has_vector] = _standardise(d[has_vector])
        fused = dense_weight / total * d_z + keyword_weight / total * kw_z
        if b is not None:
            b_z = np.zeros(len(ids))
            b_z[has_vector] = _standardise(b[has_vector])
            fused += body_weight / total * b_z
        score = np.where(has_vector, fused, kw_z)
    return ids, score


#: z units of `fuse_candidates` to the scale rank fusion scores had (one standard deviation is
#: about the rank-fusion gap between first and fifth place), so priors tuned on it keep their say.
FUSED_SCALE = 0.003


def fuse_candidates(dense: dict[str, float], keyword: dict[str, float],
                    dense_weight: float = 1.0, keyword_weight: float = 1.0) -> dict[str, float]:
    """z-score fusion over the candidates either side returned (for large collections).

    Each side's scores are standardised over the union of candidates (a dense miss gets the
    lowest similarity seen, a keyword miss 0), then averaged. Unlike rank fusion this adapts per
    query: a side whose scores are flat (every text alike, or no word in common) adds nearly
    nothing, a side with a clear standout adds a lot. Rank fusion gives both sides the same say
    whatever they know, and lost to a component: on the Reflexion ALFWorld lessons MRR 0.811 vs
    BM25's 0.873, in ReMe's cross-scenario mode 0.728 vs dense's 0.739; this fusion scores 0.873
    and 0.784 there, and ties or beats rank fusion elsewhere (docs/benchmarks.md).
    """
    ids = sorted(set(dense) | set(keyword))
    if not ids:
        return {}
    floor = min(dense.values()) if dense else 0.0
    total = dense_weight + keyword_weight
    score = np.zeros(len(ids))
    for weight, values in ((dense_weight, [dense.get(i, floor) for i in ids] if dense else None),
                           (keyword_weight, [keyword.get(i, 0.0) for i in ids] if keyword else None)):
        if values is not None:
            v = np.asarray(values, dtype=np.float64)
            # A spread below float noise is no evidence (identical texts): it must not be
            # blown up into standard deviations.
            score += weight / total * (v - v.mean()) / max(float(v.std()), 1e-4)
    return dict(zip(ids, score.tolist()))


def _standardise(values: np.ndarray) -> np.ndarray:
    return (values - values.mean()) / max(float(values.std()), 1e-9)
