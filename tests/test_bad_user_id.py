"""A user id that is no valid namespace costs the run its memory, never its answer.

With `namespace="{user_id}"`, an id with a trailing space (from a form) or of 200 characters
made LangChain's `agent.invoke` raise `InvalidInputError` from the recording step after the
model had answered (the context step already logged it and went on); LlamaIndex's memory block
raised the same way when it recorded in the foreground. "Memory errors are logged and the agent
goes on without memory" (examples/README.md). In process and through a client.
"""

from __future__ import annotations

import pytest

from owner_client import client_of_owner
from skillbank import Skillbank
from skillbank.embeddings import HashEmbedding

pytest.importorskip("langchain.agents")

BAD_IDS = ("alice ", "u" * 200)


def _langchain_runs(bank) -> None:
    from langchain.agents import create_agent
    from langchain_core.messages import AIMessage
    from scripted import Scripted

    from skillbank.adapters.langchain import SkillbankMiddleware

    for uid in BAD_IDS:
        model = Scripted(messages=iter([AIMessage(content="Your order ships today.")]))
        middleware = SkillbankMiddleware(bank, namespace="{user_id}", background=False)
        agent = create_agent(model, [], middleware=[middleware])
        out = agent.invoke({"messages": [{"role": "user", "content": "Where is my order?"}]},
                           {"configurable": {"user_id": uid}})
        assert out["messages"][-1].content == "Your order ships today."
        assert "invalid namespace" in str(middleware.last_error)
    assert bank.experiences.list(namespace="*") == []


def test_langchain_answers_with_a_bad_user_id(tmp_path):
    with Skillbank.open(tmp_path / "root", embedding_function=HashEmbedding(),
                        include_bundled=False) as bank:
        _langchain_runs(bank)


def test_langchain_answers_with_a_bad_user_id_through_a_client(tmp_path):
    with client_of_owner(tmp_path / "root") as bank:
        _langchain_runs(bank)


async def test_llamaindex_answers_with_a_bad_user_id(tmp_path):
    pytest.importorskip("llama_index.core")
    from llama_index.core.agent.workflow import FunctionAgent
    from llama_index.core.base.llms.types import ChatMessage
    from llama_index.core.memory import Memory
    from llama_index.core.workflow import Context
    from scripted_llama import scripted

    from skillbank.adapters.llamaindex import SkillbankMemoryBlock

    with Skillbank.open(tmp_path / "root", embedding_function=HashEmbedding(),
                        include_bundled=False) as bank:
        for uid in BAD_IDS:
            llm, _seen = scripted([ChatMessage(role="assistant", content="Rotated.")])
            block = SkillbankMemoryBlock(bank, namespace="{user_id}", background=False)
            memory = Memory.from_defaults(session_id=f"s-{len(uid)}", memory_blocks=[block])
            agent = FunctionAgent(tools=[], llm=llm, system_prompt="You are a helpful agent.")
            ctx = Context(agent)
            await ctx.store.set("user_id", uid)
            answer = await agent.run(user_msg="Rotate the signing keys", ctx=ctx, memory=memory)
            assert "Rotated." in str(answer)
            await block.arecord_run(memory, outcome="success")
        assert bank.experiences.list(namespace="*") == []
