"""The LangChain tools, toolkit and retrievers fill a namespace template per run, as the
middleware does (session 16).

Before, `skillbank_tools(bank, namespace="{user_id}")` (and `SkillbankToolkit`,
`SkillbankRetriever`) took the template literally: Alice's rule was stored in a namespace named
"{user_id}" and Bob's agent was shown it. A real `create_agent` run with a scripted model, in
process and through a client of another process that owns the root.
"""

from __future__ import annotations

from typing import Any

import pytest

pytest.importorskip("langchain")

from langchain.agents import create_agent  # noqa: E402
from langchain_core.language_models.fake_chat_models import GenericFakeChatModel  # noqa: E402
from langchain_core.messages import AIMessage, ToolMessage  # noqa: E402

from owner_client import bank_for  # noqa: E402
from skillbank import Skillbank  # noqa: E402
from skillbank.adapters.langchain import (  # noqa: E402
    SkillbankCallbackHandler,
    SkillbankRetriever,
    SkillbankToolkit,
    skillbank_tools,
)
from skillbank.embeddings import HashEmbedding  # noqa: E402
from skillbank.errors import InvalidInputError  # noqa: E402


class Model(GenericFakeChatModel):
    def bind_tools(self, tools: Any, **kw: Any) -> "Model":
        return self


def call(name: str, args: dict) -> AIMessage:
    return AIMessage(content="", tool_calls=[{"name": name, "args": args, "id": "c1"}])


def run(bank: Any, user: str, tool: str, args: dict) -> str:
    agent = create_agent(Model(messages=iter([call(tool, args), AIMessage(content="ok")])),
                         tools=skillbank_tools(bank, namespace="{user_id}"))
    state = agent.invoke({"messages": [{"role": "user", "content": "Write an email"}]},
                         {"configurable": {"user_id": user}})
    return [m.content for m in state["messages"] if isinstance(m, ToolMessage)][0]


@pytest.mark.parametrize("remote", [False, True], ids=["in-process", "client-of-owner"])
def test_each_user_has_their_own_namespace(tmp_path, remote):
    with bank_for(tmp_path, remote) as bank:
        run(bank, "alice", "learn_from_critique",
            {"critique": "Always sign emails as Alice from Accounting."})
        seen_by_bob = run(bank, "bob", "memory_context", {"task": "Write an email and sign it"})
        assert "Alice from Accounting" not in seen_by_bob
        stored = {(g.namespace, g.text) for g in bank.guidelines.list(namespace="*")}
        assert stored == {("alice", "Always sign emails as Alice from Accounting.")}
        retriever = SkillbankRetriever(bank, kind="guidelines", namespace="{user_id}")
        as_alice = retriever.invoke("sign the email", config={"configurable": {"user_id": "alice"}})
        as_bob = retriever.invoke("sign the email", config={"configurable": {"user_id": "bob"}})
        assert [d.page_content for d in as_alice] and not as_bob
        with pytest.raises(InvalidInputError, match="needs 'user_id'"):
            retriever.invoke("sign the email")  # no value: refused, never a shared namespace


def test_a_malformed_template_fails_when_the_tools_are_made(tmp_path):
    with Skillbank.open(tmp_path / "root", embedding_function=HashEmbedding(),
                        include_bundled=False) as bank:
        with pytest.raises(InvalidInputError, match="user.id"):
            SkillbankToolkit(bank=bank, namespace="{user.id}").get_tools()
        with pytest.raises(Exception, match="user.id"):
            SkillbankRetriever(bank, kind="guidelines", namespace="{user.id}")
        with pytest.raises(InvalidInputError, match="is a template"):
            SkillbankCallbackHandler(bank, namespace="{user_id}")


def test_tool_errors_name_only_tools_the_model_has(tmp_path):
    """A LangChain model was told to find ids "with search()" or "list_pending()", neither of
    which it has (list_pending is MCP's)."""
    with Skillbank.open(tmp_path / "root", embedding_function=HashEmbedding(),
                        include_bundled=False) as bank:
        tools = {t.name: t for t in skillbank_tools(bank, include="all")}
        for name, args in [("add_guideline", {"text": "Use British spelling.",
                                              "replaces": "gl-0123456789ab"}),
                           ("rate_memory", {"id": "gl-0123456789ab", "helpful": False})]:
            message = tools[name].invoke(args)
            assert "search_guidelines(task)" in message, message
            assert "list_pending" not in message and "search()" not in message, message
