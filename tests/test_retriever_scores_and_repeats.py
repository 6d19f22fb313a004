"""The LangChain and LlamaIndex retrievers: what a document's score means, each fact once, and a
retrieval that reads only (hunt-rag #3, #4, #5, session 24).

#3: a guideline scored 0.0328 (its rank-fusion value) and an experience ~0.001 (a z-score plus a
prior, even below 0) for their own text, so a `SimilarityPostprocessor(similarity_cutoff=0.3)`
dropped every one. #4: three runs of one chat request came back as three identical documents,
and a lesson beside the experience whose "Lessons:" held it. #5: every experience retrieval
counted a use, so a read-only chain wrote the usage log and moved the next retrieval's score.
"""

from __future__ import annotations

import pytest

pytest.importorskip("langchain_core")
pytest.importorskip("llama_index.core")

from llama_index.core.postprocessor import SimilarityPostprocessor  # noqa: E402
from owner_client import bank_for  # noqa: E402

from skillbank.adapters.langchain import ExperienceRetriever  # noqa: E402
from skillbank.adapters.langchain import SkillbankRetriever as LangChainRetriever  # noqa: E402
from skillbank.adapters.llamaindex import SkillbankRetriever as LlamaIndexRetriever  # noqa: E402

BOTH_WAYS = pytest.mark.parametrize("remote", [False, True], ids=["in-process", "client-of-owner"])

GUIDELINE = "Detect the encoding of a CSV file before parsing it."
TASK = "Clean a CSV file of customer orders"


def _fill(bank) -> None:
    bank.skills.create("csv-cleaning", "Clean and normalise CSV files with pandas.", "# Steps\n")
    bank.guidelines.add(GUIDELINE)
    bank.guidelines.add("Round money in sales reports to two decimals.")
    bank.experiences.record(task=TASK, outcome="failure",
                            feedback="Encoding was latin-1, detect it first.")
    bank.experiences.record(task="Write the weekly sales report", outcome="success")
    bank.flush()


def _ranked(bank, kind: str, query: str) -> list[str]:
    """The ids in the order the memory's own search ranks them."""
    if kind == "guidelines":
        return [hit.id for hit in bank.guidelines.search(query, k=5)]
    return [hit.id for hit in bank.experiences.recall(query, k=5, count_use=False)]


@BOTH_WAYS
def test_a_document_score_is_a_relevance_in_0_1_that_a_similarity_cutoff_keeps(
        tmp_path, minilm, remote):
    with bank_for(tmp_path, remote, minilm) as bank:
        _fill(bank)
        for kind, exact in (("skills", "Clean and normalise CSV files with pandas."),
                            ("guidelines", GUIDELINE), ("experiences", TASK)):
            docs = LangChainRetriever(bank=bank, kind=kind).invoke(exact)
            nodes = LlamaIndexRetriever(bank, kind).retrieve(exact)
            assert exact in docs[0].page_content and exact in nodes[0].node.get_content()
            # Its own text scores near 1 (it scored 0.0328 and 0.001), and every score is in
            # [0, 1] (a lesson scored -0.0021).
            assert docs[0].metadata["score"] >= 0.9 and nodes[0].score >= 0.9, kind
            assert all(0.0 <= d.metadata["score"] <= 1.0 for d in docs)
            assert all(0.0 <= n.score <= 1.0 for n in nodes)
            kept = SimilarityPostprocessor(similarity_cutoff=0.3).postprocess_nodes(nodes)
            assert [n.node.node_id for n in kept][:1] == [nodes[0].node.node_id]
            if kind != "skills":  # the order is the search's own, and so is `rank_score`
                assert [d.id for d in docs] == _ranked(bank, kind, exact)[:len(docs)]
                assert all("rank_score" in d.metadata for d in docs)
                # Evidence, not a rank: a hit the query does not match scores far lower.
                assert all(d.metadata["score"] < 0.9 for d in docs[1:])


@BOTH_WAYS
def test_without_a_model_an_exact_match_scores_by_its_words(tmp_path, monkeypatch, remote):
    """Keyword-only mode (no embedding model): the keyword share of a text holding every word
    of the query is ~0.21 (its best possible score assumes each word repeated without end);
    its relevance is 1."""
    from skillbank.embeddings import MiniLMEmbedding

    missing = tmp_path / "no-model-here"
    monkeypatch.setenv("SKILLBANK_MODEL_DIR", str(missing))  # the owner's model too
    monkeypatch.setenv("HOME", str(tmp_path / "home"))  # and no Chroma model cache
    monkeypatch.setattr("skillbank.index_fill._warned_keyword_only", False)
    with bank_for(tmp_path, remote, MiniLMEmbedding(model_dir=str(missing))) as bank:
        bank.guidelines.add(GUIDELINE)
        bank.experiences.record(task=TASK, outcome="failure",
                                feedback="Encoding was latin-1, detect it first.")
        bank.flush()
        assert bank.search_mode() == "keyword"
        for kind, exact in (("guidelines", GUIDELINE), ("experiences", TASK)):
            [doc] = LangChainRetriever(bank=bank, kind=kind).invoke(exact)
            assert doc.metadata["why"] == "keyword" and doc.metadata["score"] >= 0.9, kind
            assert SimilarityPostprocessor(similarity_cutoff=0.3).postprocess_nodes(
                LlamaIndexRetriever(bank, kind).retrieve(exact)), kind


def _chat(bank, thread: str, question: str, answer: str) -> None:
    bank.experiences.record_messages([{"role": "user", "content": question},
                                      {"role": "assistant", "content": answer}],
                                     outcome="success", thread=thread)


@BOTH_WAYS
def test_runs_of_one_request_are_one_document_as_in_the_memory_block(
        tmp_path, minilm, remote):
    with bank_for(tmp_path, remote, minilm) as bank:
        for thread in ("chat-1", "chat-2", "chat-3"):  # one support request, three sessions
            _chat(bank, thread, "Where is my order 42?", "It shipped on Monday.")
        _chat(bank, "chat-4", "Where is my order 77?", "It is held at customs.")
        bank.flush()

        docs = ExperienceRetriever(bank=bank, k=5).invoke("where is my order")
        nodes = LlamaIndexRetriever(bank, "experiences", k=5).retrieve("where is my order")
        for texts in ([d.page_content for d in docs], [n.node.get_content() for n in nodes]):
            said = [t for t in texts if "order 42" in t]
            # Once, with what the run answered, as the memory block's line has it.
            assert len(said) == 1 and "Produced: It shipped on Monday." in said[0], texts
            assert any("order 77" in t for t in texts)  # k is not spent on the repeats
        block = bank.context_for("where is my order").text
        assert block.count("order 42") == 1 and "Produced: It shipped on Monday." in block
        two = ExperienceRetriever(bank=bank, k=2).invoke("where is my order")
        assert sorted("order 42" in d.page_content for d in two) == [False, True]


@BOTH_WAYS
def test_a_lesson_is_not_shown_again_beside_the_experience_that_holds_it(
        tmp_path, minilm, remote):
    with bank_for(tmp_path, remote, minilm) as bank:
        failed = bank.experiences.record(
            task="Import the supplier CSV into Postgres", outcome="failure",
            feedback="The file was latin-1 encoded.",
            lessons=["Detect the CSV encoding before importing it."])
        bank.flush()
        query = "import a supplier csv file into postgres"
        docs = ExperienceRetriever(bank=bank, k=10).invoke(query)
        nodes = LlamaIndexRetriever(bank, "experiences", k=10).retrieve(query)
        for ids, texts in (([d.id for d in docs], [d.page_content for d in docs]),
                           ([n.node.node_id for n in nodes], [n.node.get_content() for n in nodes])):
            assert failed in ids and not any(i.startswith("lsn-") for i in ids), ids
            assert sum("Detect the CSV encoding" in t for t in texts) == 1
        lessons = ExperienceRetriever(bank=bank, search_kwargs={"filter": {"kind": "lesson"}})
        [lesson] = lessons.invoke(query)  # asked for lessons alone, it is there
        assert lesson.metadata["source"] == failed


@BOTH_WAYS
def test_a_retrieval_reads_and_counts_no_use(tmp_path, remote):
    """A retriever is a read, as a vector store's is: it counts no use (a use lowers a
    record's exploration bonus and its help rate, which `prune` retires by). The memory
    block, which puts memory in an agent's prompt, still counts one."""
    with bank_for(tmp_path, remote) as bank:
        eid = bank.experiences.record(task=TASK, outcome="success")
        bank.flush()
        before = bank.experiences.get(eid).usage.uses
        scores, ranks = set(), []
        for _ in range(3):
            [doc] = ExperienceRetriever(bank=bank).invoke("clean a csv file of customer orders")
            [node] = LlamaIndexRetriever(bank, "experiences").retrieve("clean a csv file")
            assert doc.id == node.node.node_id == eid
            scores.add(doc.metadata["score"])
            ranks.append(doc.metadata["rank_score"])
        # The same query, the same score; the rank score moved 0.001 -> 0.0007 as uses were
        # counted (what is left is its recency bonus, which fades over days).
        assert len(scores) == 1 and max(ranks) - min(ranks) < 0.00005, ranks
        assert bank.experiences.get(eid).usage.uses == before
        assert eid in bank.context_for("clean a csv file of customer orders").ids
        assert bank.experiences.get(eid).usage.uses == before + 1
