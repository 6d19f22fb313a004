"""A tool error reaches the model in tool terms on every face: the LangChain and LlamaIndex
tools said "find ids with bank.guidelines.search(task) or list(), or run sync()", Python a
model cannot call (the MCP server already rewrote it)."""

from __future__ import annotations

import contextlib

import pytest

from owner_client import client_of_owner
from skillbank import Skillbank
from skillbank.embeddings import HashEmbedding
from skillbank.errors import NotFoundError

UNKNOWN = "gl-0123456789ab"


@contextlib.contextmanager
def _bank(tmp_path, through):
    root = tmp_path / "root"
    Skillbank.open(root, embedding_function=HashEmbedding(), include_bundled=False).close()
    if through == "client-of-owner":
        with client_of_owner(root) as bank:
            yield bank
    else:
        with Skillbank.open(root, embedding_function=HashEmbedding(),
                            include_bundled=False) as bank:
            yield bank


def _model_terms(text: str) -> None:
    assert "no guideline" in text and "search_guidelines(task)" in text, text
    assert "bank." not in text and "sync()" not in text, text


@pytest.mark.parametrize("through", ["in-process", "client-of-owner"])
def test_langchain_and_llamaindex_tools_say_it_in_tool_terms(tmp_path, through):
    pytest.importorskip("langchain_core")
    pytest.importorskip("llama_index.core")
    from skillbank.adapters.langchain import skillbank_tools
    from skillbank.adapters.llamaindex import SkillbankToolSpec

    with _bank(tmp_path, through) as bank:
        tools = {tool.name: tool for tool in skillbank_tools(bank, include="all")}
        _model_terms(tools["rate_memory"].invoke({"id": UNKNOWN, "helpful": True}))
        with pytest.raises(NotFoundError) as caught:
            SkillbankToolSpec(bank).rate_memory(id=UNKNOWN, helpful=True)
        _model_terms(str(caught.value))
    with pytest.raises(NotFoundError) as direct:  # the Python API keeps its Python hints
        with _bank(tmp_path / "again", "in-process") as bank:
            bank.rate(UNKNOWN, helpful=True)
    assert "bank.guidelines" in str(direct.value)
