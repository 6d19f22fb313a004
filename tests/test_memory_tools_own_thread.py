"""An agent's own memory tools never give its conversation back as a past experience
(hunt-threads #2, session 32).

The memory block leaves the thread's open episode out (`context_for(thread=...)`), but the
`memory_context` and `recall_experiences` tools beside it searched without the run's thread:
called mid-conversation for the thread's goal, they returned the thread's own unfinished record
first, as an earlier run to learn from. The tools now get the run's thread: the LangChain
``thread_id`` of the run's config (``SkillbankMiddleware(tools="all")``, `skillbank_tools`),
the session of the `Memory` given to a LlamaIndex ``agent.run`` (`SkillbankToolSpec`).

Real `create_agent` and `FunctionAgent` runs with scripted models, in process and through a
client of another process that owns the root.
"""

from __future__ import annotations

import re

import pytest

pytest.importorskip("langchain.agents")
pytest.importorskip("llama_index.core")

from langchain.agents import create_agent  # noqa: E402
from langchain_core.messages import AIMessage, ToolMessage  # noqa: E402
from langgraph.checkpoint.memory import InMemorySaver  # noqa: E402
from llama_index.core.agent.workflow import FunctionAgent  # noqa: E402
from llama_index.core.base.llms.types import ChatMessage  # noqa: E402
from llama_index.core.memory import Memory  # noqa: E402
from scripted import call, script  # noqa: E402
from scripted_llama import scripted, tool_call  # noqa: E402

from owner_client import bank_for  # noqa: E402
from skillbank.adapters.langchain import SkillbankMiddleware  # noqa: E402
from skillbank.adapters.llamaindex import SkillbankMemoryBlock, SkillbankToolSpec  # noqa: E402

REMOTE = pytest.mark.parametrize("remote", [False, True], ids=["in-process", "client-of-owner"])
GOAL = "Rotate the API keys of the billing service"
OTHER = "Rotate the API keys of the search service"


def ids(text: str) -> set[str]:
    return set(re.findall(r"exp-[0-9a-f]{12}", text))


@REMOTE
def test_langchain_tools_leave_the_threads_own_record_out(tmp_path, remote):
    with bank_for(tmp_path, remote) as bank:
        other = bank.experiences.record(task=OTHER, outcome="success",
                                        feedback="Reload the service first.")
        model = script(AIMessage(content="Rotating."),
                       call("memory_context", {"task": GOAL}, "c1"),
                       call("recall_experiences", {"task": GOAL}, "c2"),
                       AIMessage(content="Done with k1."))
        agent = create_agent(model, tools=[], checkpointer=InMemorySaver(), middleware=[
            SkillbankMiddleware(bank, tools="all", background=False)])
        config = {"configurable": {"thread_id": "SELF"}}
        agent.invoke({"messages": [{"role": "user", "content": GOAL}]}, config)
        state = agent.invoke({"messages": [{"role": "user", "content": "also rotate key k1"}]},
                             config)
        (own,) = [r.id for r in bank.experiences.list() if r.thread == "SELF"]
        replies = {m.name: str(m.content) for m in state["messages"]
                   if isinstance(m, ToolMessage)}
        assert set(replies) == {"memory_context", "recall_experiences"}
        for name, text in replies.items():
            assert own not in ids(text), f"{name} gave the thread its own open record"
            assert other in ids(text), (name, text)


@REMOTE
async def test_llamaindex_tool_spec_leaves_the_sessions_own_record_out(tmp_path, remote):
    with bank_for(tmp_path, remote) as bank:
        other = bank.experiences.record(task=OTHER, outcome="success",
                                        feedback="Reload the service first.")
        block = SkillbankMemoryBlock(bank, background=False)
        llm, seen = scripted([ChatMessage(role="assistant", content="Rotating."),
                              tool_call("memory_context", {"task": GOAL}, "c1"),
                              tool_call("recall_experiences", {"task": GOAL}, "c2"),
                              ChatMessage(role="assistant", content="Done with k1.")])
        agent = FunctionAgent(tools=SkillbankToolSpec(bank, include="all").to_tool_list(),
                              llm=llm, system_prompt="You rotate keys.")
        memory = Memory.from_defaults(session_id="SELF", memory_blocks=[block])
        await agent.run(user_msg=GOAL, memory=memory)
        await block.arecord_run(memory)
        await agent.run(user_msg="also rotate key k1", memory=memory)
        (own,) = [r.id for r in bank.experiences.list() if r.thread == "SELF"]
        replies = [m for m in seen[-1] if m.role.value == "tool"]
        assert len(replies) == 2, [m.role for m in seen[-1]]
        for reply in replies:
            text = str(reply.content)
            assert own not in ids(text), "a tool gave the session its own open record"
            assert other in ids(text), text
