"""After a run that raised, the thread's next request is a new experience (session 16).

A run that raises is recorded as a failure, which ends the episode; but the exception leaves the
graph's state as it was before the run (its episode "open"), so "Summarise yesterday's
incidents" after a failed "Deploy the app to production" was recorded as a second experience
of the deploy, as a success. A real `create_agent` run with a checkpointer, in process and
through a client of another process that owns the root.
"""

from __future__ import annotations

from typing import Any

import pytest

pytest.importorskip("langchain")

from langchain.agents import create_agent  # noqa: E402
from langchain_core.language_models.fake_chat_models import GenericFakeChatModel  # noqa: E402
from langchain_core.messages import AIMessage  # noqa: E402
from langchain_core.tools import tool  # noqa: E402
from langgraph.checkpoint.memory import InMemorySaver  # noqa: E402

from owner_client import bank_for  # noqa: E402
from skillbank.adapters.langchain import SkillbankMiddleware  # noqa: E402


class Model(GenericFakeChatModel):
    def bind_tools(self, tools: Any, **kw: Any) -> "Model":
        return self


@tool
def deploy(env: str) -> str:
    """Deploy the app."""
    raise RuntimeError("quota exceeded")


@pytest.mark.parametrize("remote", [False, True], ids=["in-process", "client-of-owner"])
def test_the_request_after_a_failed_run_is_its_own_experience(tmp_path, remote):
    with bank_for(tmp_path, remote) as bank:
        middleware = SkillbankMiddleware(bank, background=False)
        model = Model(messages=iter([
            AIMessage(content="", tool_calls=[{"name": "deploy", "args": {"env": "prod"},
                                               "id": "c1"}]),
            AIMessage(content="Here is the summary of yesterday's incidents.")]))
        agent = create_agent(model, tools=[deploy], middleware=[middleware],
                             checkpointer=InMemorySaver())
        config = {"configurable": {"thread_id": "t1"}}
        with pytest.raises(RuntimeError, match="quota exceeded"):
            agent.invoke({"messages": [{"role": "user",
                                        "content": "Deploy the app to production"}]}, config)
        agent.invoke({"messages": [{"role": "user", "content": "Summarise yesterday's incidents"}],
                      "outcome": "success"}, config)
        recorded = {e.task: e.outcome for e in bank.experiences.list()}
        assert recorded == {"Deploy the app to production": "failure",
                            "Summarise yesterday's incidents": "success"}


@pytest.mark.parametrize("remote", [False, True], ids=["in-process", "client-of-owner"])
def test_after_a_restart_the_request_after_a_failed_run_is_its_own_experience(tmp_path, remote):
    """The failure was remembered in the middleware's memory only: a restarted process (a new
    middleware on the same checkpointer), or another worker, filed the next request under the
    failed goal, as a success (agents hunt, session 18)."""
    with bank_for(tmp_path, remote) as bank:
        saver = InMemorySaver()
        config = {"configurable": {"thread_id": "t1"}}
        first = create_agent(Model(messages=iter([AIMessage(content="", tool_calls=[
            {"name": "deploy", "args": {"env": "prod"}, "id": "c1"}])])), tools=[deploy],
            middleware=[SkillbankMiddleware(bank, background=False)], checkpointer=saver)
        with pytest.raises(RuntimeError, match="quota exceeded"):
            first.invoke({"messages": [{"role": "user",
                                        "content": "Deploy the app to production"}]}, config)
        restarted = create_agent(
            Model(messages=iter([AIMessage(content="Release notes for 2.3: …")])),
            tools=[deploy], middleware=[SkillbankMiddleware(bank, background=False)],
            checkpointer=saver)
        restarted.invoke({"messages": [{"role": "user",
                                        "content": "Write the release notes for version 2.3"}],
                          "outcome": "success"}, config)
        recorded = {e.task: e.outcome for e in bank.experiences.list()}
        assert recorded == {"Deploy the app to production": "failure",
                            "Write the release notes for version 2.3": "success"}, recorded


@pytest.mark.parametrize("remote", [False, True], ids=["in-process", "client-of-owner"])
def test_a_tool_call_whose_arguments_did_not_parse_is_a_step(tmp_path, remote):
    """LangChain ends the run with no tool message; the malformed call was left out and the run
    recorded as an empty experience (agents hunt, session 18)."""
    with bank_for(tmp_path, remote) as bank:
        garbled = AIMessage(content="", invalid_tool_calls=[
            {"name": "deploy", "args": '{"env": "prod"', "id": "c1",
             "error": "Expecting ',' delimiter"}])
        agent = create_agent(Model(messages=iter([garbled])), tools=[deploy],
                             middleware=[SkillbankMiddleware(bank, background=False)])
        agent.invoke({"messages": [{"role": "user", "content": "Deploy the app to staging"}]})
        (record,) = bank.experiences.list()
        (step,) = [s for s in record.steps if s.action == "deploy"]
        assert step.action_input["invalid_arguments"] == '{"env": "prod"'
        assert "delimiter" in step.action_input["error"]
