"""The hybrid index: filters, incremental keyword search, fusion, chunked items."""

from __future__ import annotations

import numpy as np
import pytest

from skillbank.embeddings import HashEmbedding
from skillbank.index import HybridIndex, IndexItem, make_client, matches, tokenize


@pytest.fixture
def index(tmp_path):
    return HybridIndex(make_client(path=str(tmp_path / "chroma")), "t_index", HashEmbedding())


def item(i: int, text: str, **meta) -> IndexItem:
    return IndexItem(id=f"it-{i}", embed_texts=[text], keyword_text=text,
                     metadata={"hash": str(i), **meta})


def test_where_evaluator_matches_chroma_semantics():
    meta = {"ns": "a", "n": 3, "tags": ["x", "y"]}
    assert matches({"ns": "a"}, meta) and not matches({"ns": "b"}, meta)
    assert matches({"$and": [{"n": {"$gte": 3}}, {"ns": {"$in": ["a", "c"]}}]}, meta)
    assert matches({"$or": [{"n": {"$lt": 1}}, {"tags": {"$contains": "y"}}]}, meta)
    assert not matches({"missing": {"$gt": 1}}, meta)
    with pytest.raises(ValueError):
        matches({"n": {"$near": 1}}, meta)


def test_tokenize_stems_and_drops_stop_words():
    assert tokenize("Deploying the apps to Kubernetes") == ["deploy", "app", "kubernet"]


def test_written_items_are_found_without_rebuilding_the_whole_keyword_index(index):
    index.upsert([item(i, f"common words number {i} filler") for i in range(50)])
    assert index.keyword("filler", 5)
    full = index._live.full
    index.upsert([item(100, "a rare zeppelin word")])
    assert "it-100" in index.keyword("zeppelin", 5)
    assert index._live.full is full  # scored by the delta, no full rebuild
    index.upsert([item(3, "now about zeppelin too")])  # a changed item: stale row masked
    assert set(index.keyword("zeppelin", 5)) == {"it-100", "it-3"}
    assert "it-3" not in index.keyword("number 3", 50) or index.keyword("number 3", 50)["it-3"] < 1
    index.delete(["it-100"])
    assert set(index.keyword("zeppelin", 5)) == {"it-3"}
    # Same answers as a freshly built index.
    fresh = HybridIndex(index.client, index.name, index.embedding_function)
    assert set(fresh.keyword("zeppelin", 5)) == {"it-3"}


def test_filters_apply_to_both_sides(index):
    index.upsert([item(1, "deploy the service", ns="a"), item(2, "deploy the service", ns="b")])
    hits = index.search("deploy service", k=5, where={"ns": "b"})
    assert [h.id for h in hits] == ["it-2"] and hits[0].why == "both"
    assert index.search("deploy service", k=5, where={"ns": "c"}) == []


def test_z_fusion_reports_the_best_evidence(index):
    index.upsert([item(i, t) for i, t in enumerate(
        ["pdf reports with tables", "sql query tuning", "kafka consumer lag", "css grid layout"])])
    hits = index.search("tune a slow sql query", k=2, fusion="z")
    assert hits[0].id == "it-1" and len(hits) == 2
    assert hits.best_keyword > 0 and hits.best_dense > 0
    empty = index.search("zzz qqq", k=2, fusion="z")
    assert empty.best_keyword == 0


def test_sections_are_one_item_and_shrink_cleanly(index):
    index.upsert([IndexItem("doc", ["summary text", "section one", "section two"], "kw", {"hash": "1"})])
    assert index.count() == 1 and index._chunks == 3
    index.upsert([IndexItem("doc", ["summary text"], "kw", {"hash": "2"})])
    assert index._collection.count() == 1 and index._chunks == 1
    assert [h.id for h in index.search("section two", k=3)] == ["doc"]


def test_precomputed_vectors_skip_embedding(index):
    embedding = index.embedding_function
    vector = embedding.embed(["hello there"])
    before = embedding.calls
    assert index.upsert([IndexItem("v", ["hello there"], "hello", {"hash": "1"}, vectors=vector)]) == 0
    assert embedding.calls == before
    assert index.search("hello there", k=1)[0].id == "v"


def test_metadata_updates_change_filters_without_embedding(index):
    index.upsert([item(1, "guideline text", status="active")])
    calls = index.embedding_function.calls
    index.update_metadata("it-1", status="retired")
    assert index.search("guideline text", k=1, where={"status": "active"}) == []
    assert index.embedding_function.calls == calls + 1  # the query only, not the item


def test_many_metadata_updates_reach_every_chunk_and_an_unknown_id_writes_nothing(index):
    """`update_metadatas`: the re-key of an upgraded root writes thousands at once, one Chroma
    update a batch (one each took 174 s at 3,000; hunt-upgrade #1, session 23)."""
    index.upsert([IndexItem("doc", ["summary text", "section one"], "kw", {"hash": "1"})]
                 + [item(i, f"text {i}", content="old") for i in range(3)])
    index.update_metadatas({"doc": {"content": "new"}, "it-0": {"content": "new"},
                            "it-2": {"content": "new", "status": "retired"}})
    in_chroma = index._collection.get(include=["metadatas"])
    got = {i: (m.get("content"), m.get("status")) for i, m in zip(in_chroma["ids"],
                                                                  in_chroma["metadatas"])}
    assert got == {"doc": ("new", None), "doc#1": ("new", None), "it-0": ("new", None),
                   "it-1": ("old", None), "it-2": ("new", "retired")}
    assert [index.metadata(i)["content"] for i in ("doc", "it-0", "it-1")] == ["new", "new", "old"]
    with pytest.raises(KeyError, match="it-9"):
        index.update_metadatas({"it-1": {"content": "newer"}, "it-9": {"content": "newer"}})
    assert index.metadata("it-1")["content"] == "old"
    assert index._collection.get(ids=["it-1"])["metadatas"][0]["content"] == "old"


def test_equal_scores_are_ordered_by_id_whatever_the_insertion_order(tmp_path):
    """Identical texts score identically: their order must not depend on how they went in."""
    from skillbank.embeddings import HashEmbedding
    from skillbank.index import HybridIndex, IndexItem, make_client

    orders = []
    for run, ids in enumerate((["b", "a", "d", "c"], ["c", "d", "a", "b"])):
        index = HybridIndex(make_client(path=str(tmp_path / f"c{run}")), "ties", HashEmbedding())
        index.upsert([IndexItem(id=i, embed_texts=["rotate the database credentials"],
                                keyword_text="rotate the database credentials",
                                metadata={"kind": "x"}) for i in ids])
        for fusion in ("rrf", "z"):
            orders.append([h.id for h in index.search("rotate database credentials", k=3,
                                                      fusion=fusion)])
    assert all(order == ["a", "b", "c"] for order in orders), orders


def test_ties_at_the_keyword_cut_are_broken_by_id(tmp_path):
    """More tied items than candidates: which ones make the cut must not depend on insertion."""
    import random

    from skillbank.embeddings import HashEmbedding
    from skillbank.index import HybridIndex, IndexItem, make_client

    names = [f"item-{n:02d}" for n in range(60)]
    results = []
    for run in range(3):
        order = names[:]
        random.Random(run).shuffle(order)
        index = HybridIndex(make_client(path=str(tmp_path / f"c{run}")), "ties", HashEmbedding())
        index.upsert([IndexItem(id=i, embed_texts=["rotate the database credentials"],
                                keyword_text="rotate the database credentials",
                                metadata={"kind": "x"}) for i in order])
        results.append(list(index.keyword("rotate database credentials", 5)))
    assert all(r == names[:5] for r in results), results


def test_best_first_matches_a_full_sort():
    import numpy as np

    from skillbank.index import best_first

    rng = np.random.default_rng(3)
    scores = rng.integers(0, 5, 400).astype(float)  # many ties
    ids = [f"id-{n:03d}" for n in rng.permutation(400)]
    full = sorted(range(400), key=lambda i: (-scores[i], ids[i]))
    for k in (0, 1, 7, 50, 399, 400, 1000):
        assert list(best_first(scores, ids, k)) == (full[:k] if k else full)
