"""The skill search's fast paths (#26, session 9) answer exactly as the general code did.

Each cut on the warm search path (precomputed id ranks for the keyword side's tie order, whole
array conversions of the dense and keyword scores) must change no ranking and no score: these
compare the fast path with the general one on the same input, ties included.
"""

from __future__ import annotations

import numpy as np

from skillbank.fusion import best_first, id_ranks
from skillbank.embeddings import HashEmbedding
from skillbank.index import HybridIndex, IndexItem, make_client
from skillbank.keyword import _Keyword


def _item(i: int, text: str) -> IndexItem:
    return IndexItem(id=f"s{i:02d}", embed_texts=[text], keyword_text=text,
                     metadata={"hash": str(i)})


def _names(n: int, rng: np.random.Generator) -> list[str]:
    names = [f"skill-{rng.integers(0, 10**6):06d}-{i}" for i in range(n)]
    rng.shuffle(names)
    return names


def test_best_first_with_id_ranks_orders_as_sorting_the_names() -> None:
    rng = np.random.default_rng(7)
    for n in (0, 1, 5, 40, 300):
        ids = _names(n, rng)
        # Few distinct values: many ties, which the id order has to break.
        scores = rng.integers(0, 4, size=n).astype(np.float32)
        ranks = id_ranks(ids)
        for k in (0, 1, 3, n, n + 5):
            expected = best_first(scores, ids, k)
            got = best_first(scores, ids, k, ranks)
            assert got.tolist() == expected.tolist(), (n, k)


def test_keyword_index_id_rank_is_kept_per_build() -> None:
    ids = ["b", "a", "c"]
    index = _Keyword(ids, ["deploy a service", "deploy", "write a poem"])
    assert index.id_rank.tolist() == [1, 0, 2]
    assert index.id_rank is index.id_rank  # computed once


def test_keyword_search_scores_are_those_of_the_loop(tmp_path) -> None:
    index = HybridIndex(make_client(path=str(tmp_path / "db")), "skills", HashEmbedding())
    index.upsert([_item(i, f"deploy service number {i % 3} to staging") for i in range(30)])
    found = index.keyword("deploy a service to staging", 30)
    live = index._live
    full = live.full_index()
    scores, best_possible = full.scores("deploy a service to staging",
                                        live.stats(full, live.delta_index()))
    loop = {full.ids[i]: float(scores[i]) / best_possible
            for i in best_first(scores, full.ids, int((scores > 0).sum()))}
    assert list(found.items()) == list(loop.items())


def test_dense_scores_without_sections_are_the_general_loops(tmp_path) -> None:
    function = HashEmbedding()
    index = HybridIndex(make_client(path=str(tmp_path / "db")), "skills", function)
    index.upsert([_item(i, f"task {i} about deploys and tests {i % 4}") for i in range(25)])
    vector = function.embed_query("deploy tests")
    for answered_by in ("chroma", "memory"):
        index._dense.enabled = answered_by == "memory"  # off: every search asks Chroma
        index.dense_texts(vector, 25)  # the first search in memory is still Chroma's
        best = index.dense(vector, 25)
        texts = index.dense_texts(vector, 25)
        assert all("#" not in i for i in texts) and len(texts) == 25
        if answered_by == "memory":
            assert index._dense.matrix is not None
        # The general loop over the same answer gives the same floats in the same order.
        loop: dict[str, float] = {}
        for text_id, similarity in texts.items():
            parent = text_id.split("#", 1)[0]
            if similarity > loop.get(parent, -2.0):
                loop[parent] = similarity
        assert list(loop.items()) == list(best.items())


def test_dense_text_scores_are_one_minus_each_distance(tmp_path) -> None:
    function = HashEmbedding()
    index = HybridIndex(make_client(path=str(tmp_path / "db")), "skills", function)
    index.upsert([_item(i, f"task {i} about deploys and tests {i % 4}") for i in range(25)])
    vector = function.embed_query("deploy tests")
    index.dense_texts(vector, 25)  # Chroma's; then the matrix answers
    ids, distances = index._dense.nearest(vector, 25)
    assert index.dense_texts(vector, 25) == {i: 1.0 - float(d) for i, d in zip(ids, distances)}
    assert list(index.dense_texts(vector, 25)) == list(ids)


def test_readable_share_of_ascii_requests_is_the_loops() -> None:
    from skillbank.memories.skills import search as routing

    def loop(task: str) -> float:
        letters = [c for c in task if c.isalpha()]
        return sum(c.isascii() for c in letters) / len(letters) if letters else 1.0

    for task in ("deploy the app", "", "123 !!", "naïve café", "导成 EndNote 库", "🙂🙂",
                 "Ünïcode only", "plain ascii, digits 42 and symbols #$%"):
        assert routing.readable_share(task) == loop(task), task


def test_keyword_index_id_array_names_the_rows() -> None:
    index = _Keyword(["b", "a", "c"], ["deploy a service", "deploy", "write a poem"])
    assert index.id_array.tolist() == ["b", "a", "c"] and index.id_array is index.id_array
    assert index.id_array[np.array([2, 0])].tolist() == ["c", "b"]
