"""A retriever given to an agent as a tool never serves the calling conversation its own open
record as a past experience (hunt-threads #4, session 38).

`create_retriever_tool(ExperienceRetriever(bank), ...)` in a `create_agent` run with the
middleware and a `thread_id` returned the thread's unfinished record ("Outcome: unknown,
Produced: Plan: lock, copy, swap. Go ahead?") on the follow-up, where `recall_experiences` in
the same run leaves it out: `create_retriever_tool` passes the retriever only its callbacks, and
the retriever never asked for the thread. The LlamaIndex retriever, as a `RetrieverTool` of a
`FunctionAgent` on a `Memory` with a session, had the same gap. Real `create_agent` and
`FunctionAgent` runs with scripted models, real Chroma; in process and as a client of another
process that owns the root.
"""

from __future__ import annotations

import pytest

from owner_client import bank_for

REMOTE = pytest.mark.parametrize("remote", [False, True], ids=["in-process", "client-of-owner"])
TASK = "Migrate the orders table to the new schema"
PLAN = "Plan: lock, copy, swap. Go ahead?"


@REMOTE
def test_langchain_retriever_tool_leaves_out_the_calling_thread(tmp_path, remote):
    pytest.importorskip("langchain.agents")
    from langchain.agents import create_agent
    from langchain_core.messages import AIMessage, ToolMessage
    from langchain_core.tools import create_retriever_tool
    from langgraph.checkpoint.memory import InMemorySaver

    from scripted import call, script
    from skillbank.adapters.langchain import ExperienceRetriever, SkillbankMiddleware

    with bank_for(tmp_path, remote) as bank:
        bank.experiences.record(task=TASK, outcome="success",
                                steps=[{"action": "copy", "observation": "Copied in batches."}])
        # ^ an earlier run of the task: still shown
        past = create_retriever_tool(ExperienceRetriever(bank), "past_runs",
                                     "Past runs of tasks like this one.")
        model = script(AIMessage(content=PLAN), call("past_runs", {"query": TASK}, "c1"),
                       AIMessage(content="Done."))
        agent = create_agent(model, tools=[past], checkpointer=InMemorySaver(),
                             middleware=[SkillbankMiddleware(bank, background=False)])
        config = {"configurable": {"thread_id": "chat-9"}}
        agent.invoke({"messages": [{"role": "user", "content": TASK}]}, config)
        out = agent.invoke({"messages": [{"role": "user", "content": "yes, go ahead"}]}, config)
        own = next(e for e in bank.experiences.list() if e.thread == "chat-9")
        assert own.outcome == "unknown"  # the open episode the follow-up is part of
        (shown,) = [m.content for m in out["messages"] if isinstance(m, ToolMessage)]
        assert "Copied in batches." in shown, shown
        assert PLAN not in shown and own.id not in shown, shown


@REMOTE
async def test_llamaindex_retriever_tool_leaves_out_the_calling_session(tmp_path, remote):
    pytest.importorskip("llama_index.core")
    from llama_index.core.agent.workflow import FunctionAgent
    from llama_index.core.base.llms.types import ChatMessage
    from llama_index.core.memory import Memory
    from llama_index.core.tools import RetrieverTool

    from scripted_llama import scripted, tool_call
    from skillbank.adapters.llamaindex import SkillbankMemoryBlock, SkillbankRetriever

    with bank_for(tmp_path, remote) as bank:
        bank.experiences.record(task=TASK, outcome="success",
                                steps=[{"action": "copy", "observation": "Copied in batches."}])
        block = SkillbankMemoryBlock(bank, background=False)
        memory = Memory.from_defaults(session_id="chat-9", memory_blocks=[block])
        past = RetrieverTool.from_defaults(SkillbankRetriever(bank, kind="experiences"),
                                           name="past_runs",
                                           description="Past runs of tasks like this one.")
        llm, _ = scripted([ChatMessage(role="assistant", content=PLAN),
                           tool_call("past_runs", {"input": TASK}, "c1"),
                           ChatMessage(role="assistant", content="Done.")])
        agent = FunctionAgent(tools=[past], llm=llm, system_prompt="You are a DBA.")
        await agent.run(user_msg=TASK, memory=memory)
        await block.arecord_run(memory)
        handler = agent.run(user_msg="yes, go ahead", memory=memory)
        shown = [event.tool_output.content async for event in handler.stream_events()
                 if type(event).__name__ == "ToolCallResult"]
        await handler
        own = next(e for e in bank.experiences.list() if e.thread == "chat-9")
        assert own.outcome == "unknown"
        assert len(shown) == 1 and "Copied in batches." in shown[0], shown
        assert PLAN not in shown[0] and own.id not in shown[0], shown


def test_langchain_retriever_tool_fills_its_namespace_from_the_run(tmp_path):
    """The same lost config: `ExperienceRetriever(bank, namespace="{user_id}")` through
    `create_retriever_tool` raised "needs 'user_id'" with the user id in the run's
    configurable, and the agent's run ended on it. It reads that user's namespace alone."""
    pytest.importorskip("langchain.agents")
    from langchain.agents import create_agent
    from langchain_core.messages import AIMessage, ToolMessage
    from langchain_core.tools import create_retriever_tool

    from scripted import call, script
    from skillbank.adapters.langchain import ExperienceRetriever

    with bank_for(tmp_path, False) as bank:
        for user in ("alice", "bob"):
            bank.experiences.record(task="Rotate the API keys", outcome="success",
                                    namespace=user,
                                    steps=[{"action": "rotate", "observation": f"{user}'s run"}])
        past = create_retriever_tool(ExperienceRetriever(bank, namespace="{user_id}"),
                                     "past_runs", "Past runs of tasks like this one.")
        agent = create_agent(script(call("past_runs", {"query": "Rotate the API keys"}, "c1"),
                                    AIMessage(content="Done.")), tools=[past])
        out = agent.invoke({"messages": [{"role": "user", "content": "Rotate the API keys"}]},
                           {"configurable": {"user_id": "alice"}})
        (shown,) = [m.content for m in out["messages"] if isinstance(m, ToolMessage)]
        assert "alice's run" in shown and "bob's run" not in shown, shown
