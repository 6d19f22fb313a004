"""A first message longer than a task may be is recorded, and its critique learnt (hunt-li #2).

A user pasted a 24,000-character log as an agent's first message and then said "Always look at
the first error, not the last.": `arecord_run` returned None, nothing was recorded and the
feedback was not learnt (`task is 24044 characters; at most 20000`), with only a log line to
show for it. The goal a run is recorded under is now the message's head with an ellipsis
(`skillbank.records.clip_task`); the message itself is the run's first step. Real
`FunctionAgent` and `create_agent` runs, and `record_messages` with no task, in process and
through a client of another process that owns the root.
"""

from __future__ import annotations

from typing import Any

import pytest

pytest.importorskip("langchain")
pytest.importorskip("llama_index.core")

from langchain.agents import create_agent  # noqa: E402
from langchain_core.language_models.fake_chat_models import GenericFakeChatModel  # noqa: E402
from langchain_core.messages import AIMessage  # noqa: E402
from llama_index.core.agent.workflow import FunctionAgent  # noqa: E402
from llama_index.core.base.llms.types import ChatMessage  # noqa: E402
from llama_index.core.memory import Memory  # noqa: E402
from scripted_llama import scripted  # noqa: E402

from owner_client import bank_for  # noqa: E402
from skillbank.adapters.langchain import SkillbankMiddleware  # noqa: E402
from skillbank.adapters.llamaindex import SkillbankMemoryBlock  # noqa: E402
from skillbank.records import MAX_TEXT, clip_task  # noqa: E402

LOG = "Why does the service crash? Here is the log:\n" + "ERROR parser: null at line 12\n" * 800
FEEDBACK = "Always look at the first error in a log, not the last."


class Model(GenericFakeChatModel):
    def bind_tools(self, tools: Any, **kw: Any) -> "Model":
        return self


def test_clip_task_keeps_a_short_text_and_cuts_a_long_one_with_an_ellipsis():
    assert clip_task("Fix the login bug") == "Fix the login bug"
    assert len(LOG) > MAX_TEXT
    assert len(clip_task(LOG)) <= MAX_TEXT and clip_task(LOG).endswith("\u2026")
    assert LOG.startswith(clip_task(LOG)[:-1])


def check_recorded(bank: Any, eid: str | None) -> None:
    assert eid is not None
    record = bank.experiences.get(eid)
    assert record.task == clip_task(LOG) and record.outcome == "failure"
    assert any(LOG[:200] in (s.observation or "") for s in record.steps)  # the message, kept
    assert [g.text for g in bank.guidelines.list()] == [FEEDBACK]


@pytest.mark.parametrize("remote", [False, True], ids=["in-process", "client-of-owner"])
async def test_a_llamaindex_run_with_a_pasted_log_is_recorded_and_its_feedback_learnt(
        tmp_path, remote):
    with bank_for(tmp_path, remote) as bank:
        block = SkillbankMemoryBlock(bank, background=False)
        llm, _ = scripted([ChatMessage(role="assistant", content="A null in the parser.")])
        agent = FunctionAgent(tools=[], llm=llm, system_prompt="You debug services.")
        memory = Memory.from_defaults(session_id="s1", token_limit=1_000_000,
                                      memory_blocks=[block])
        await agent.run(user_msg=LOG, memory=memory)
        eid = await block.arecord_run(memory, outcome="failure", feedback=FEEDBACK)
        assert block.last_error is None
        check_recorded(bank, eid)


async def test_a_follow_up_of_a_pasted_log_is_recorded_with_it_under_its_head(tmp_path):
    with bank_for(tmp_path, False) as bank:
        block = SkillbankMemoryBlock(bank, background=False)
        llm, _ = scripted([ChatMessage(role="assistant", content="A null in the parser."),
                           ChatMessage(role="assistant", content="The same null, at line 12.")])
        agent = FunctionAgent(tools=[], llm=llm, system_prompt="You debug services.")
        memory = Memory.from_defaults(session_id="s1", token_limit=1_000_000,
                                      memory_blocks=[block])
        await agent.run(user_msg=LOG, memory=memory)
        await agent.run(user_msg="And where is the second crash?", memory=memory)
        eid = await block.arecord_run(memory, outcome="failure", feedback=FEEDBACK)
        check_recorded(bank, eid)
        steps = " ".join(f"{s.thought} {s.observation}" for s in bank.experiences.get(eid).steps)
        assert "A null in the parser." in steps and "second crash" in steps
        assert len(bank.experiences.list()) == 1


@pytest.mark.parametrize("remote", [False, True], ids=["in-process", "client-of-owner"])
def test_a_langchain_run_with_a_pasted_log_is_recorded_and_its_feedback_learnt(tmp_path, remote):
    with bank_for(tmp_path, remote) as bank:
        middleware = SkillbankMiddleware(bank, background=False)
        agent = create_agent(Model(messages=iter([AIMessage(content="A null in the parser.")])),
                             tools=[], middleware=[middleware])
        agent.invoke({"messages": [{"role": "user", "content": LOG}],
                      "outcome": "failure", "feedback": FEEDBACK})
        check_recorded(bank, middleware.last_experience_id)


@pytest.mark.parametrize("remote", [False, True], ids=["in-process", "client-of-owner"])
def test_record_messages_without_a_task_takes_the_head_of_a_long_first_message(tmp_path,
                                                                              remote):
    with bank_for(tmp_path, remote) as bank:
        eid = bank.experiences.record_messages(
            [{"role": "user", "content": LOG}, {"role": "assistant", "content": "A null."}],
            outcome="success")
        assert bank.experiences.get(eid).task == clip_task(LOG)
