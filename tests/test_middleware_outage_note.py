"""The LangChain middleware's block says when memory was searched by keyword only.

During a Chroma outage `context_for` answers from the keyword index and says so in its note;
the `memory_context` tool passed it on, the middleware's injected block dropped it, so the model
read a thinner block as all there was (hunt-lxteam #6, session 37; the LlamaIndex block had the
same gap). Real bank on a real `chroma run` server, stopped; a real `create_agent` run.
"""

from __future__ import annotations

import pytest

pytest.importorskip("langchain.agents")

from langchain.agents import create_agent  # noqa: E402
from langchain_core.messages import AIMessage  # noqa: E402
from scripted import script, system_text  # noqa: E402

from skillbank.adapters.langchain import SkillbankMiddleware  # noqa: E402
from test_chroma_outage import alice_bank_while_chroma_is_down, own_chroma  # noqa: E402,F401

QUESTION = "Where is my order 1234?"
TRACKING = "Always include the tracking link when telling a customer where an order is."


def test_the_block_says_its_memory_was_searched_by_keyword_while_chroma_is_down(
        tmp_path, own_chroma):  # noqa: F811 - the fixture
    with alice_bank_while_chroma_is_down(tmp_path / "root", own_chroma, TRACKING,
                                         QUESTION) as bank:
        model = script(AIMessage(content="It ships today."))
        agent = create_agent(model, [], middleware=[
            SkillbankMiddleware(bank, namespace="alice", record=False, learn=False,
                                background=False)])
        agent.invoke({"messages": [{"role": "user", "content": QUESTION}]})
        shown = system_text(model.seen[0])
        assert "tracking link" in shown, shown
        assert "keyword only" in shown, shown
