"""A retriever given a query the memory cannot search (over 50,000 characters) returns no
documents and logs why, on LangChain and LlamaIndex; a lone surrogate (an emoji cut in half) is
repaired and the rest of the query searched (hunt-badinput #9, session 26).

The searches raise InvalidInputError for such a query, and the retrievers passed it on: a
LangChain agent whose `create_retriever_tool` got a 100 KB query from the model ended its whole
run on the exception. A retriever answers a query that matches nothing with no documents; the
decision is the core's (`skillbank.retrieved_documents.unsearchable`). The program's own
mistakes (`k`) still raise. Real parts: a real `create_agent` run (scripted chat model), Chroma;
in process and as a client of another process that owns the root.
"""

from __future__ import annotations

import logging

import pytest

from conftest import write_skill
from owner_client import bank_for
from skillbank.errors import InvalidInputError

REMOTE = pytest.mark.parametrize("remote", [False, True], ids=["in-process", "client-of-owner"])
QUERIES = pytest.mark.parametrize("query", ["merge pdfs " * 9100], ids=["100k-chars"])
CUT_EMOJI = "merge two pdf files \ud83d"


def _skills(tmp_path):
    folder = tmp_path / "skills"
    write_skill(folder, "pdf-merge", "Merge several PDF files into one PDF document.")
    return (folder,)


@REMOTE
@QUERIES
def test_a_langchain_retriever_tool_keeps_the_agent_running(tmp_path, remote, query, caplog):
    """Fails before: agent.invoke raised InvalidInputError."""
    from langchain.agents import create_agent
    from langchain_core.messages import AIMessage, ToolMessage
    from langchain_core.tools import create_retriever_tool

    from scripted import Scripted, call
    from skillbank.adapters.langchain import SkillbankRetriever

    with bank_for(tmp_path, remote, skill_roots=_skills(tmp_path)) as bank:
        tool = create_retriever_tool(SkillbankRetriever(bank), "memory", "Search the memory.")
        model = Scripted(messages=iter([call("memory", {"query": query}, "c1"),
                                        AIMessage(content="done")]))
        with caplog.at_level(logging.WARNING, logger="skillbank.retrievers"):
            out = create_agent(model, [tool]).invoke({"messages": [{"role": "user",
                                                                     "content": "go"}]})
        assert SkillbankRetriever(bank).invoke("merge two pdf files")  # a good query answers
        with pytest.raises(InvalidInputError, match="k must be"):
            SkillbankRetriever(bank).invoke(query, k=0)
    (answer,) = [m for m in out["messages"] if isinstance(m, ToolMessage)]
    assert answer.content == "" and out["messages"][-1].content == "done"
    assert any("no documents, as the query" in r.getMessage() for r in caplog.records)


@REMOTE
@QUERIES
def test_a_llamaindex_retriever_returns_no_nodes(tmp_path, remote, query, caplog):
    """Fails before: retrieve raised InvalidInputError."""
    pytest.importorskip("llama_index.core")
    from skillbank.adapters.llamaindex import SkillbankRetriever

    with bank_for(tmp_path, remote, skill_roots=_skills(tmp_path)) as bank:
        with caplog.at_level(logging.WARNING, logger="skillbank.retrievers"):
            for kind in ("skills", "guidelines", "experiences"):
                assert SkillbankRetriever(bank, kind=kind).retrieve(query) == []
    reasons = [r.getMessage() for r in caplog.records if r.name == "skillbank.retrievers"]
    assert len(reasons) == 3 and "100,100 characters" in reasons[0]


@REMOTE
def test_a_cut_emoji_is_repaired_and_the_query_searched(tmp_path, remote):
    """Fails before: both retrievers raised InvalidInputError (a lone surrogate)."""
    pytest.importorskip("llama_index.core")
    from skillbank.adapters.langchain import SkillbankRetriever as LangChainRetriever
    from skillbank.adapters.llamaindex import SkillbankRetriever as LlamaIndexRetriever

    with bank_for(tmp_path, remote, skill_roots=_skills(tmp_path)) as bank:
        documents = LangChainRetriever(bank).invoke(CUT_EMOJI)
        nodes = LlamaIndexRetriever(bank, kind="skills").retrieve(CUT_EMOJI)
    assert [d.metadata["name"] for d in documents][:1] == ["pdf-merge"]
    assert [n.node.metadata["name"] for n in nodes][:1] == ["pdf-merge"]
