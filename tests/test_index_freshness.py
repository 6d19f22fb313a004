"""Indexes that stay true in a long-running process: keyword statistics current after every write.

A process that searched once and then learnt a rule used to score the new rule with BM25
statistics of the few items written since (an idf over one document): "Always cite the source"
scored 0.284 against a Python task, and 0.058 after a reopen. Here every sequence of writes and
searches in one process must rank (and score) exactly as a fresh reopen of the same root.
"""

from __future__ import annotations

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from skillbank import Skillbank
from skillbank.embeddings import HashEmbedding
from skillbank.index import HybridIndex, IndexItem, make_client

CODE_RULES = [
    "Write docstrings for every public Python function.",
    "Use pathlib instead of os.path in Python code.",
    "Parse dates with datetime.fromisoformat in Python.",
    "Add type hints to Python function signatures.",
    "Keep Python functions under fifty lines.",
    "Raise ValueError for bad arguments in Python functions.",
]


def item(i: int, text: str) -> IndexItem:
    return IndexItem(id=f"it-{i:03d}", embed_texts=[text], keyword_text=text,
                     metadata={"hash": str(i)})


def test_an_item_written_after_the_first_search_is_scored_as_a_fresh_build_scores_it(tmp_path):
    client = make_client(path=str(tmp_path / "chroma"))
    index = HybridIndex(client, "t_fresh", HashEmbedding())
    index.upsert([item(i, text) for i, text in enumerate(CODE_RULES)])
    query = "Write a Python function that parses ISO dates"
    assert index.keyword(query, 10)  # the full BM25 is built now
    index.upsert([item(99, "Always cite the source of every claim in the summary.")])
    live = index.keyword(query + " source", 10)
    fresh = HybridIndex(client, "t_fresh", HashEmbedding()).keyword(query + " source", 10)
    assert live == fresh
    # The new rule shares one word with the query; it must not outscore the Python rules.
    assert live["it-099"] < max(v for k, v in live.items() if k != "it-099")


def test_changed_and_deleted_items_leave_the_statistics_too(tmp_path):
    client = make_client(path=str(tmp_path / "chroma"))
    index = HybridIndex(client, "t_fresh2", HashEmbedding())
    index.upsert([item(i, text) for i, text in enumerate(CODE_RULES)])
    index.keyword("python", 5)
    index.upsert([item(1, "Cite the source of every quoted figure.")])
    index.delete(["it-002"])
    for query in ("python function", "cite the source", "dates"):
        fresh = HybridIndex(client, "t_fresh2", HashEmbedding())
        assert index.keyword(query, 10) == fresh.keyword(query, 10), query


# ------------------------------------------------------------------ property: live == reopened
WORDS = ["python", "dates", "source", "cite", "summary", "sql", "query", "index", "slides",
         "chart", "refund", "customer", "tests", "deploy", "docs", "paragraph", "email", "tabs"]
PHRASE = st.lists(st.sampled_from(WORDS), min_size=2, max_size=6).map(" ".join)
OPS = st.lists(st.one_of(
    st.tuples(st.just("add"), PHRASE),
    st.tuples(st.just("record"), PHRASE),
    st.tuples(st.just("save"), PHRASE),
    st.tuples(st.just("search"), PHRASE),
), min_size=1, max_size=8)
QUERIES = ["Write a Python function that parses ISO dates", "summarise the news and cite sources",
           "fix the slow sql query", "reply to an angry customer about a refund"]


def _ranking(bank: Skillbank, query: str) -> tuple:
    guidelines = tuple((h.id, h.score) for h in bank.guidelines.search(query, k=10))
    experiences = tuple(h.id for h in bank.experiences.recall(query, k=10, count_use=False))
    skills = tuple(h.name for h in bank.skills.search(query, k=10))
    return guidelines, experiences, skills


@settings(max_examples=12, deadline=None,
          suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow])
@given(ops=OPS)
def test_any_sequence_in_one_process_ranks_as_a_fresh_reopen(tmp_path_factory, ops):
    root = tmp_path_factory.mktemp("fresh")
    bank = Skillbank.open(root, embedding_function=HashEmbedding(), include_bundled=False)
    try:
        for query in QUERIES:  # every index built before the writes
            _ranking(bank, query)
        for number, (op, text) in enumerate(ops):
            if op == "add":
                bank.guidelines.add(f"Always {text} {number}.", topic="general")
            elif op == "record":
                bank.experiences.record(task=f"{text} task {number}", outcome="success")
            elif op == "save":
                bank.skills.create(f"skill-{number}", description=f"{text} helper {number}",
                                   body=f"# {text}\n\nDo {text}.")
            else:
                _ranking(bank, text)
        live = [_ranking(bank, q) for q in QUERIES + [text for _, text in ops]]
    finally:
        bank.close()
    reopened = Skillbank.open(root, embedding_function=HashEmbedding(), include_bundled=False)
    try:
        # No snapshot of a delta: the reopened bank builds its keyword side from the items.
        again = [_ranking(reopened, q) for q in QUERIES + [text for _, text in ops]]
    finally:
        reopened.close()
    assert live == again


if __name__ == "__main__":  # pragma: no cover
    raise SystemExit(pytest.main([__file__, "-q"]))
