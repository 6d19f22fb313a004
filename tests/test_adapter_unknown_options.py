"""A misspelt or unknown option of an adapter is an error naming it, never ignored (hunt-rag #2
and #7, session 24).

The LangChain retrievers and `SkillbankToolkit` are pydantic models, and pydantic ignores
extras by default: `ExperienceRetriever(bank, namspace="alice")` read the shared namespace,
`SkillbankToolkit(bank, trustd=False)` gave an untrusted agent tools that add active rules, and
`search_type="mmr"` was accepted and did nothing. LangChain passes a tool only the arguments its
schema names, so a model's misspelt `replace` for `replaces` added a second rule beside the one
it meant to replace. The LlamaIndex `SkillbankRetriever` read `similarity_top_k=0` as "not
given" and returned 5 nodes. Real LangChain and LlamaIndex pieces, in process and through a
client of another process that owns the root.
"""

from __future__ import annotations

import json
from typing import Any

import pytest

pytest.importorskip("langchain.agents")
pytest.importorskip("llama_index.core")

from langchain.agents import create_agent  # noqa: E402
from langchain_core.language_models.fake_chat_models import GenericFakeChatModel  # noqa: E402
from langchain_core.messages import AIMessage, ToolMessage  # noqa: E402
from llama_index.core.schema import QueryBundle  # noqa: E402

from owner_client import bank_for  # noqa: E402
from skillbank.adapters.langchain import (  # noqa: E402
    ExperienceRetriever,
    GuidelineRetriever,
    SkillbankRetriever,
    SkillbankToolkit,
    SkillRetriever,
)
from skillbank.adapters.llamaindex import SkillbankRetriever as LlamaRetriever  # noqa: E402
from skillbank.errors import InvalidInputError  # noqa: E402

RETRIEVERS = (SkillbankRetriever, SkillRetriever, GuidelineRetriever, ExperienceRetriever)


class Model(GenericFakeChatModel):
    def bind_tools(self, tools: Any, **kw: Any) -> "Model":
        return self


@pytest.mark.parametrize("remote", [False, True], ids=["in-process", "client-of-owner"])
def test_a_misspelt_retriever_option_is_refused_and_the_right_one_reads_its_namespace(
        tmp_path, remote):
    with bank_for(tmp_path, remote) as bank:
        mine = bank.experiences.record(task="Deploy the billing service to staging",
                                       outcome="success", namespace="alice")
        bank.experiences.record(task="Deploy the billing service with helm", outcome="success")
        for retriever in RETRIEVERS:
            with pytest.raises(InvalidInputError,
                               match=r"has no option 'namspace' \(did you mean 'namespace'\?\)"):
                retriever(bank, namspace="alice")
            with pytest.raises(ValueError, match="has no option 'namspace'"):  # pydantic's way in
                retriever.model_validate({"bank": bank, "namspace": "alice"})
        with pytest.raises(InvalidInputError, match="has no option 'search_type' .*skillbank's "
                           r"own hybrid search.*; its options are bank, include_body, k, kind"):
            ExperienceRetriever(bank, search_type="mmr", search_kwargs={"k": 2})

        docs = ExperienceRetriever(bank, namespace="alice").invoke("deploy the billing service")
        assert [d.id for d in docs] == [mine]


@pytest.mark.parametrize("remote", [False, True], ids=["in-process", "client-of-owner"])
def test_a_misspelt_toolkit_option_is_refused_and_trusted_false_leaves_rules_pending(
        tmp_path, remote):
    with bank_for(tmp_path, remote) as bank:
        with pytest.raises(InvalidInputError, match=r"SkillbankToolkit has no option 'trustd' "
                           r"\(did you mean 'trusted'\?\); its options are available_tools, bank, "
                           "include, namespace, trusted"):
            SkillbankToolkit(bank, include=["add_guideline"], trustd=False)
        with pytest.raises(InvalidInputError, match="has no option 'namspace'"):
            SkillbankToolkit(bank=bank, namspace="alice")
        [add] = SkillbankToolkit(bank, include=["add_guideline"], trusted=False).get_tools()
        reply = json.loads(add.invoke({"text": "Always deploy on Fridays."}))
        assert bank.guidelines.get(reply["guideline_id"]).status == "pending"


@pytest.mark.parametrize("remote", [False, True], ids=["in-process", "client-of-owner"])
def test_a_tool_call_with_an_argument_the_tool_lacks_is_refused(tmp_path, remote):
    with bank_for(tmp_path, remote) as bank:
        old = bank.guidelines.add("Keep slides to ten bullets.").guideline_id
        tools = SkillbankToolkit(bank, include=["add_guideline", "find_skills"]).get_tools()
        model = Model(messages=iter([
            AIMessage(content="", tool_calls=[
                {"name": "add_guideline", "id": "c1",
                 "args": {"text": "Keep slides to five bullets.", "replace": old}},
                {"name": "find_skills", "id": "c2", "args": {"task": "slides", "kk": 1}}]),
            AIMessage(content="I could not change the rule.")]))
        agent = create_agent(model, tools=tools)
        result = agent.invoke({"messages": [{"role": "user", "content": "Five bullets, please."}]})

        replies = {m.tool_call_id: m for m in result["messages"] if isinstance(m, ToolMessage)}
        assert replies["c1"].status == "error" and replies["c2"].status == "error"
        assert replies["c1"].content == ("invalid arguments for add_guideline: replace is not an "
                                         f"argument of this tool (got {old!r})")
        assert "kk is not an argument of this tool (got 1)" in replies["c2"].content
        assert [g.text for g in bank.guidelines.list()] == ["Keep slides to ten bullets."]


@pytest.mark.parametrize("remote", [False, True], ids=["in-process", "client-of-owner"])
def test_llamaindex_top_k_of_zero_or_less_is_refused_and_none_is_the_default(tmp_path, remote):
    with bank_for(tmp_path, remote) as bank:
        for n in range(7):
            bank.experiences.record(task=f"Deploy the billing service, attempt {n}",
                                    outcome="success")
        for bad in ({"similarity_top_k": 0}, {"k": 0}, {"similarity_top_k": -1}, {"k": -3},
                    {"similarity_top_k": True}, {"k": 2.5}):
            with pytest.raises(InvalidInputError, match="must be a positive whole number"):
                LlamaRetriever(bank, "experiences", **bad)
        assert LlamaRetriever(bank, "experiences").similarity_top_k == 5
        assert LlamaRetriever(bank, "experiences", k=None, similarity_top_k=None).k == 5
        query = QueryBundle("deploy the billing service")
        assert len(LlamaRetriever(bank, "experiences", similarity_top_k=1).retrieve(query)) == 1
        assert len(LlamaRetriever(bank, "experiences", k=2).retrieve(query)) == 2
