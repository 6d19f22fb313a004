"""A client bank's write with `distill=True` is distilled by the owner, and the one warning
docs/operating.md promises says so (hunt-llama #4, session 35).

A second process opened the root with `distiller=LlamaIndexDistiller(llm)` and ran a
`FunctionAgent` with `SkillbankMemoryBlock(bank, distill=True)`. The lesson of the failed run
came from the owner's distiller (here the rules: "When working on: …"), and nothing said so:
`BankClient` warned only for `experiences.distill` / `skills.propose`, not for
`experiences.record_messages(..., distill=True)` (the block's and the LangChain middleware's
write) or `experiences.record(..., distill=True)`. In its own process the same script got the
model's lesson. A real `FunctionAgent` run, in process and through a client of an owner.
"""

from __future__ import annotations

import contextlib
import json
import logging

import pytest

pytest.importorskip("llama_index.core")

from llama_index.core.agent.workflow import FunctionAgent  # noqa: E402
from llama_index.core.base.llms.types import ChatMessage  # noqa: E402
from llama_index.core.llms import CompletionResponse, CustomLLM, LLMMetadata  # noqa: E402
from llama_index.core.memory import Memory  # noqa: E402
from scripted_llama import scripted  # noqa: E402

from owner_client import owner_process  # noqa: E402
from skillbank import Skillbank  # noqa: E402
from skillbank.adapters.llamaindex import LlamaIndexDistiller, SkillbankMemoryBlock  # noqa: E402
from skillbank.embeddings import HashEmbedding  # noqa: E402
from skillbank.sharing.arguments import owner_distils  # noqa: E402

LESSON = "MODEL-LESSON: name the courier before answering."
WARNING = ("experiences.record_messages(distill=True) runs in the process that owns")


class LessonLLM(CustomLLM):
    """A model that answers every distiller prompt with one lesson."""

    @property
    def metadata(self) -> LLMMetadata:
        return LLMMetadata()

    def complete(self, prompt: str, formatted: bool = False, **kw) -> CompletionResponse:
        return CompletionResponse(text=json.dumps(
            {"lessons": [{"kind": "failure_trigger", "text": LESSON}]}))

    def stream_complete(self, prompt: str, formatted: bool = False, **kw):
        raise NotImplementedError


async def failed_run(bank, session: str) -> str:
    block = SkillbankMemoryBlock(bank, distill=True, background=False)
    llm, _ = scripted([ChatMessage(role="assistant", content="It is on its way.")])
    agent = FunctionAgent(tools=[], llm=llm, system_prompt="You are support.")
    memory = Memory.from_defaults(session_id=session, memory_blocks=[block])
    await agent.run(user_msg=f"Where is order {session}?", memory=memory)
    return await block.arecord_run(memory, outcome="failure",
                                   feedback="You forgot the courier's name again.")


@pytest.mark.parametrize("remote", [False, True], ids=["in-process", "client-of-owner"])
async def test_the_owner_distils_and_a_client_is_told_once(tmp_path, remote, caplog):
    root = tmp_path / "root"
    root.mkdir()
    with contextlib.ExitStack() as stack:
        if remote:
            stack.enter_context(owner_process(root))  # an owner with no distiller: the rules
        bank = stack.enter_context(Skillbank.open(
            root, embedding_function=HashEmbedding(), include_bundled=False,
            distiller=LlamaIndexDistiller(LessonLLM(), timeout=30)))
        assert bank.is_remote is remote
        with caplog.at_level(logging.WARNING, logger="skillbank"):
            assert await failed_run(bank, "1001")
            assert await failed_run(bank, "1002")
            bank.experiences.record(task="Ship order 1003", outcome="failure",
                                    feedback="Wrong address.", distill=True)
        bank.flush()
        lessons = [lesson.task for lesson in bank.experiences.list(kind="lesson")]

    warned = [r.getMessage() for r in caplog.records if "runs in the process that owns" in
              r.getMessage()]
    if remote:
        assert len(warned) == 1 and WARNING in warned[0], warned  # once, naming the call
        assert "this process's distiller is not used" in warned[0]
        assert lessons and LESSON not in lessons  # the owner's distiller: the rules
    else:
        assert warned == [] and lessons and set(lessons) == {LESSON}


def test_which_writes_ask_the_owner_to_distil():
    assert owner_distils("experiences", "record", (), {"task": "t", "distill": True})
    assert owner_distils("experiences", "record", ("t", "failure") + (None,) * 8 + (True,), {})
    assert not owner_distils("experiences", "record", ("t",), {})
    assert not owner_distils("experiences", "record", (), {"distill": False})
    assert owner_distils("experiences", "record_messages", ([],), {"distill": True})
    assert not owner_distils("experiences", "record_messages", ([],), {"thread": "s1"})
    assert owner_distils("experiences", "record_many", ([{"task": "a"}, {"distill": True}],), {})
    assert not owner_distils("experiences", "record_many", (), {"records": [{"task": "a"}]})
    assert owner_distils("experiences", "distill", ("exp-1",), {})
    assert owner_distils("skills", "propose", (), {})
    assert not owner_distils("guidelines", "learn", ("critique",), {})
