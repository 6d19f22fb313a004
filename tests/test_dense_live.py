"""The dense side of a small index ranks by exact cosine in memory, current after every write.

Asking Chroma for the nearest 1,000 texts was ~45% of a warm skill search at 2,000 skills; a
collection of a few thousand vectors is ranked exactly (and quicker) by one matrix product.
These tests check the in-memory ranking equals a brute-force cosine over what Chroma holds after
writes (adds, longer and shorter bodies, metadata changes, deletes), that it answers without
asking Chroma's nearest-neighbour query, that another process's writes are seen once the change
feed calls `refresh`/`invalidate`, and that a collection over the bound keeps Chroma's query.
"""

from __future__ import annotations

import numpy as np
import pytest

from skillbank import dense_live
from skillbank.embeddings import HashEmbedding
from skillbank.index import HybridIndex, IndexItem, make_client

DIM = 24


@pytest.fixture
def queries(monkeypatch):
    """Counts Chroma's nearest-neighbour queries (the real query still runs)."""
    import chromadb.api.models.Collection as module

    calls = []
    real = module.Collection.query

    def counted(self, *args, **kwargs):
        calls.append(kwargs.get("n_results"))
        return real(self, *args, **kwargs)

    monkeypatch.setattr(module.Collection, "query", counted)
    return calls


def vectors(rng: np.random.Generator, n: int) -> np.ndarray:
    return rng.normal(size=(n, DIM)).astype(np.float32)


def item(rng, i: int, chunks: int = 1, kind: str = "a") -> IndexItem:
    texts = [f"item {i} text {k}" for k in range(chunks)]
    return IndexItem(id=f"it-{i:03d}", embed_texts=texts, keyword_text=texts[0],
                     metadata={"hash": str(i), "kind": kind}, vectors=vectors(rng, chunks))


def brute_force(index: HybridIndex, query: np.ndarray, n: int, where=None) -> dict[str, float]:
    """Cosine of the query with every text Chroma holds that passes `where`: the truth."""
    got = index._collection.get(include=["embeddings", "metadatas"], where=where)
    scored = {}
    for text_id, vector in zip(got["ids"], got["embeddings"]):
        vector = np.asarray(vector, dtype=np.float64)
        scored[text_id] = float(vector @ query / (np.linalg.norm(vector) * np.linalg.norm(query)))
    best = sorted(scored.items(), key=lambda kv: -kv[1])[:n]
    return dict(best)


def assert_same(live: dict[str, float], truth: dict[str, float]) -> None:
    assert list(live) == list(truth)
    for text_id, similarity in truth.items():
        assert live[text_id] == pytest.approx(similarity, abs=1e-5)


def test_ranking_equals_brute_force_cosine_after_writes_without_asking_chroma(tmp_path, queries):
    rng = np.random.default_rng(7)
    index = HybridIndex(make_client(path=str(tmp_path / "chroma")), "t_dense", HashEmbedding())
    index.upsert([item(rng, i, chunks=1 + i % 3, kind="ab"[i % 2]) for i in range(60)])
    query = vectors(rng, 1)[0]
    assert_same(index.dense_texts(query, 25), brute_force(index, query, 25))  # Chroma answers
    assert queries == [25] and index._dense.matrix is None  # a one-shot process reads no vectors
    queries.clear()
    assert_same(index.dense_texts(query, 25), brute_force(index, query, 25))  # loaded now
    # Writes after the first search: a longer body, a shorter one, new items, metadata, deletes.
    index.upsert([item(rng, 3, chunks=5), item(rng, 5, chunks=1), item(rng, 100, chunks=2)])
    index.update_metadata("it-010", kind="b")
    index.delete(["it-007", "it-011"])
    index.upsert([item(rng, 101, chunks=3, kind="b")])
    for _ in range(5):
        query = vectors(rng, 1)[0]
        assert_same(index.dense_texts(query, 30), brute_force(index, query, 30))
        assert_same(index.dense_texts(query, 1000), brute_force(index, query, 1000))
        where = {"kind": "b"}
        assert_same(index.dense_texts(query, 20, where), brute_force(index, query, 20, where))
    assert queries == []  # every search was answered from memory


def test_a_write_from_this_process_is_seen_by_the_next_search(tmp_path, queries):
    rng = np.random.default_rng(11)
    index = HybridIndex(make_client(path=str(tmp_path / "chroma")), "t_dense2", HashEmbedding())
    index.upsert([item(rng, i) for i in range(30)])
    target = vectors(rng, 1)[0]
    index.dense(target, 5)  # Chroma answers the first search
    queries.clear()
    assert "it-200" not in index.dense(target, 5)
    index.upsert([IndexItem(id="it-200", embed_texts=["x", "y"], keyword_text="x",
                            metadata={"hash": "n"}, vectors=np.vstack([-target, target]))])
    best = index.dense(target, 5)
    assert max(best, key=best.get) == "it-200" and best["it-200"] == pytest.approx(1.0, abs=1e-5)
    assert next(iter(index.dense_texts(target, 5))) == "it-200#1"  # its section, not its summary
    index.update_metadata("it-200", kind="hidden")
    assert "it-200" not in index.dense(target, 5, {"kind": {"$ne": "hidden"}})
    index.delete(["it-200"])
    assert "it-200" not in index.dense(target, 50)
    assert queries == []


def test_another_process_write_is_seen_after_the_change_feed_refresh_or_invalidate(tmp_path,
                                                                                  queries):
    rng = np.random.default_rng(3)
    path = str(tmp_path / "chroma")
    writer = HybridIndex(make_client(path=path), "t_dense3", HashEmbedding())
    writer.upsert([item(rng, i) for i in range(20)])
    reader = HybridIndex(make_client(path=path), "t_dense3", HashEmbedding())
    target = vectors(rng, 1)[0]
    reader.dense(target, 5)  # Chroma answers the first search
    queries.clear()
    assert "it-300" not in reader.dense(target, 5)  # the reader holds the vectors now
    writer.upsert([IndexItem(id="it-300", embed_texts=["z"], keyword_text="z",
                             metadata={"hash": "n"}, vectors=target[None, :])])
    reader.refresh(["it-300"])  # what the change feed does for a few ids
    best = reader.dense(target, 5)
    assert max(best, key=best.get) == "it-300"
    writer.delete(["it-300"])
    writer.upsert([IndexItem(id="it-301", embed_texts=["w"], keyword_text="w",
                             metadata={"hash": "m"}, vectors=target[None, :])])
    reader.invalidate()  # what the change feed does when it lost track
    best = reader.dense(target, 5)
    assert max(best, key=best.get) == "it-301" and "it-300" not in best
    assert_same(reader.dense_texts(target, 10), brute_force(reader, target, 10))
    assert queries == []


def test_a_collection_over_the_bound_keeps_chromas_query(tmp_path, queries, monkeypatch):
    monkeypatch.setattr(dense_live, "MAX_TEXTS", 10)
    rng = np.random.default_rng(5)
    index = HybridIndex(make_client(path=str(tmp_path / "chroma")), "t_dense4", HashEmbedding())
    index.upsert([item(rng, i) for i in range(8)])
    query = vectors(rng, 1)[0]
    index.dense_texts(query, 8)  # Chroma answers the first search
    queries.clear()
    assert_same(index.dense_texts(query, 8), brute_force(index, query, 8))
    assert queries == [] and index._dense.matrix is not None
    index.upsert([item(rng, i) for i in range(8, 14)])  # past the bound: the matrix is let go
    assert_same(index.dense_texts(query, 14), brute_force(index, query, 14))
    assert len(queries) == 1 and index._dense.matrix is None
