"""The LlamaIndex face: a real `FunctionAgent` run with `MockFunctionCallingLLM` and `Memory`.

No mocks of skillbank: a real bank on a temp dir (hash embedding for speed), real LlamaIndex
agent, memory, tools and retriever; only the LLM is scripted.
"""

from __future__ import annotations

import json
import subprocess
import sys
from typing import Any

import pytest

pytest.importorskip("llama_index.core")

from llama_index.core.agent.workflow import FunctionAgent  # noqa: E402
from llama_index.core.base.llms.types import (  # noqa: E402
    ChatMessage,
    CompletionResponse,
    LLMMetadata,
)
from llama_index.core.llms.custom import CustomLLM  # noqa: E402
from llama_index.core.memory import Memory  # noqa: E402
from llama_index.core.schema import QueryBundle  # noqa: E402
from llama_index.core.tools import FunctionTool  # noqa: E402
from scripted_llama import scripted, tool_call  # noqa: E402

from skillbank import Skillbank  # noqa: E402
from skillbank.adapters._tools import COMPACT_TOOLS, TOOL_NAMES  # noqa: E402
from skillbank.adapters.llamaindex import (  # noqa: E402
    LlamaIndexDistiller,
    SkillbankMemoryBlock,
    SkillbankRetriever,
    SkillbankToolSpec,
)
from skillbank.distill import LLMDistiller  # noqa: E402
from skillbank.embeddings import HashEmbedding  # noqa: E402
from skillbank.errors import InvalidInputError, NotFoundError  # noqa: E402

TASK = "Write the quarterly sales report from the CSV export"
SIMILAR = "Write the monthly sales report from the CSV export"


@pytest.fixture
def bank(tmp_path):
    bank = Skillbank.open(tmp_path / "bank", embedding_function=HashEmbedding(),
                          include_bundled=False)
    bank.skills.create(
        "sales-report",
        "Builds a sales report from a CSV export: totals per region and quarter. Use when asked "
        "for a sales report, revenue summary or quarterly numbers.",
        "# Sales report\n\n1. Load the CSV.\n2. Sum amount per region.\n",
        resources={"references/columns.md": "region: sales region\namount: revenue in EUR\n"})
    bank.guidelines.add("Round money in sales reports to two decimals.", topic="data",
                        when_to_use="When writing a sales report")
    yield bank
    bank.close()


def load_csv(path: str) -> str:
    """Load a CSV file and summarise its columns."""
    return f"{path}: region,amount (120 rows)"


@pytest.mark.slow
def test_imports_stay_apart():
    code = (
        "import sys\n"
        "import skillbank\n"
        "assert not [m for m in sys.modules if m.startswith(('llama_index', 'langchain'))]\n"
        "import skillbank.adapters.llamaindex\n"
        "assert 'llama_index.core' in sys.modules\n"
        "bad = [m for m in sys.modules if m.split('.')[0] in ('langchain', 'langgraph')]\n"
        "assert not bad, bad\n"
        "print('ok')\n")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120)
    assert out.returncode == 0, out.stderr
    assert out.stdout.strip() == "ok"


async def test_function_agent_with_memory_block_and_tools(bank, monkeypatch):
    calls: list = []
    real = bank.context_for
    monkeypatch.setattr(bank, "context_for",
                        lambda task, *a, **k: calls.append(task) or real(task, *a, **k))
    llm, seen = scripted([
        tool_call("find_skills", {"task": "sales report from CSV"}, "t1"),
        tool_call("load_skill", {"name": "no-such-skill"}, "t2"),
        tool_call("load_csv", {"path": "q3.csv"}, "t3"),
        ChatMessage(role="assistant", content="Q3 report: north 1200.00 EUR."),
    ])
    block = SkillbankMemoryBlock(bank, budget_tokens=800, raise_errors=True)
    memory = Memory.from_defaults(session_id="run-1", token_limit=8000, memory_blocks=[block])
    tools = [FunctionTool.from_defaults(load_csv),
             *SkillbankToolSpec(bank, include="all").to_tool_list()]
    agent = FunctionAgent(tools=tools, llm=llm, system_prompt="You are a data analyst.")

    handler = agent.run(user_msg=TASK, memory=memory)
    results = {}
    async for event in handler.stream_events():
        if type(event).__name__ == "ToolCallResult":
            results[event.tool_id] = event.tool_output
    answer = await handler

    assert str(answer) == "Q3 report: north 1200.00 EUR."
    # The memory reached the LLM on every call, inside <memory>, computed once for the turn.
    assert len(seen) == 4
    for prompt in seen:
        system = "\n".join(m.content or "" for m in prompt if m.role.value == "system")
        assert "You are a data analyst." in system
        assert "<memory>" in system and "<skillbank-memory>" in system
        assert system.count("<skillbank-memory>") == 1  # wrapped once, by Memory
        assert "Round money in sales reports to two decimals." in system
    assert calls == [TASK]
    # The tool spec's tools ran: a result, a model-readable error, and the agent's own tool.
    assert json.loads(results["t1"].content)["skills"][0]["name"] == "sales-report"
    assert results["t2"].is_error and "no-such-skill" in results["t2"].content
    assert "120 rows" in results["t3"].content

    # Record the run with its outcome and feedback, then it is remembered.
    feedback = "Always put the totals row at the top of the report."
    eid = await block.arecord_run(memory, outcome="success", feedback=feedback)
    assert eid and eid.startswith("exp-") and block.last_error is None
    experience = bank.experiences.get(eid)
    assert experience.task == TASK and experience.outcome == "success"
    assert [s.action for s in experience.steps][:3] == ["find_skills", "load_skill", "load_csv"]
    assert bank.experiences.recall(SIMILAR, k=3)[0].id == eid
    assert any("totals row" in h.record.text for h in bank.guidelines.search("sales report totals"))


async def test_flushed_messages_are_recorded(bank):
    block = SkillbankMemoryBlock(bank)
    memory = Memory.from_defaults(session_id="flush", token_limit=120, token_flush_size=60,
                                  memory_blocks=[block])
    filler = " ".join(["The north region sold more than the south region this quarter."] * 3)
    await memory.aput_messages([
        ChatMessage(role="user", content="Summarise the Q1 sales CSV per region"),
        ChatMessage(role="assistant", content=filler),
        ChatMessage(role="user", content="Now do the same for Q2"),
        ChatMessage(role="assistant", content=filler),
    ])
    assert bank.flush(timeout=60)  # flushed messages are recorded in the background
    assert bank.experiences.count() == 1 and block.last_error is None
    hit = bank.experiences.recall("Summarise the Q3 sales CSV per region", k=1)[0]
    assert hit.record.task == "Summarise the Q1 sales CSV per region"

    quiet = SkillbankMemoryBlock(bank, record=False, name="other")
    await quiet.aput([ChatMessage(role="user", content="Anything at all")])
    assert bank.experiences.count() == 1


async def test_flushed_messages_are_recorded_with_their_thread(bank):
    """Flushed turns were recorded without their session: a later arecord_run of the same
    session started a second record beside the flushed one's `unknown` (#25: one thread is
    one experience)."""
    block = SkillbankMemoryBlock(bank)
    memory = Memory.from_defaults(session_id="flush-thread", token_limit=120,
                                  token_flush_size=60, memory_blocks=[block])
    filler = " ".join(["The north region sold more than the south region this quarter."] * 3)
    await memory.aput_messages([
        ChatMessage(role="user", content="Summarise the Q1 sales CSV per region"),
        ChatMessage(role="assistant", content=filler),
        ChatMessage(role="user", content="Now do the same for Q2"),
        ChatMessage(role="assistant", content=filler),
    ])
    assert bank.flush(timeout=60)
    (flushed,) = bank.experiences.list()
    assert flushed.thread == "flush-thread" and flushed.outcome == "unknown"
    await memory.aput(ChatMessage(role="user", content="And for Q3, please"))
    await memory.aput(ChatMessage(role="assistant", content="Q3: north 12, south 9."))
    eid = await block.arecord_run(memory, outcome="success")
    assert bank.flush(timeout=60)
    assert eid == flushed.id and bank.experiences.count() == 1, bank.experiences.list()
    record = bank.experiences.get(eid)
    assert record.outcome == "success" and record.task == "Summarise the Q1 sales CSV per region"


async def test_memory_block_reads_and_fails_softly(bank, monkeypatch):
    calls: list = []
    real = bank.context_for
    monkeypatch.setattr(bank, "context_for",
                        lambda task, *a, **k: calls.append(task) or real(task, *a, **k))
    block = SkillbankMemoryBlock(bank)
    turn = [ChatMessage(role="user", content=TASK)]
    text = await block.aget(turn, session_id="s")
    assert text.startswith("Memory from earlier work") and "sales-report" in text
    assert "<skillbank-memory>" not in text  # Memory wraps it in <skillbank-memory> itself
    assert await block.aget(turn + turn, session_id="s") == text  # the agent's echo of the input
    turn += [ChatMessage(role="assistant", content="Done."), ChatMessage(role="user", content=TASK)]
    assert await block.aget(turn, session_id="s") == text  # the same words, a new turn
    # Outside a workflow step no read is cached (review 1, session 37: a cached read hid rules
    # added since from a custom loop's next run); inside one, a turn is read once
    # (test_llamaindex_block_reads_now).
    assert calls == [TASK, TASK, TASK]
    assert await block.aget([], session_id="s") == ""

    def broken(*args, **kwargs):
        raise InvalidInputError("index unavailable")

    monkeypatch.setattr(bank, "context_for", broken)
    other = SkillbankMemoryBlock(bank)
    assert await other.aget([ChatMessage(role="user", content=TASK)]) == ""
    assert isinstance(other.last_error, InvalidInputError)
    strict = SkillbankMemoryBlock(bank, raise_errors=True)
    with pytest.raises(InvalidInputError):
        await strict.aget([ChatMessage(role="user", content=TASK)])


async def test_tool_spec(bank):
    assert [t.metadata.name for t in SkillbankToolSpec(bank).to_tool_list()] == list(COMPACT_TOOLS)
    spec = SkillbankToolSpec(bank, include="all")
    tools = {t.metadata.name: t for t in spec.to_tool_list()}
    assert list(tools) == list(TOOL_NAMES)
    for t in tools.values():
        assert t.metadata.fn_schema is not None and t.metadata.description
        assert "properties" in t.metadata.get_parameters_dict()

    assert "Sum amount per region" in json.loads(spec.load_skill("sales-report"))["body"]
    saved = json.loads(await spec.asave_skill(name="csv-cleanup", body="# Steps\n\n1. Trim.\n",
                                              description="Cleans a CSV export before analysis."))
    assert saved["action"] == "created" and "csv-cleanup" in bank.skills
    assert "revenue in EUR" in tools["read_skill_resource"].call(
        name="sales-report", path="references/columns.md").content
    out = await tools["record_experience"].acall(
        task="Fix the failing CSV import", outcome="failure",
        steps=[{"action": "run import", "observation": "UnicodeDecodeError"}])
    eid = json.loads(out.content)["id"]
    recalled = json.loads(await spec.arecall_experiences(task="CSV import decode error",
                                                         outcome="failure"))
    assert eid in [e["id"] for e in recalled["experiences"]]
    assert "<skillbank-memory>" in (await tools["memory_context"].acall(task=TASK)).content
    gid = json.loads(spec.add_guideline("Cite the CSV file name in reports."))["guideline_id"]
    assert gid in spec.search_guidelines("sales report CSV file name")
    assert json.loads(spec.rate_memory(gid, helpful=False))["kind"] == "guideline"
    assert json.loads(spec.learn_from_critique("You should label chart axes."))["entries"]

    with pytest.raises(NotFoundError):
        spec.load_skill("no-such-skill")
    with pytest.raises(InvalidInputError, match="invalid arguments"):
        spec.find_skills("sales", k=500)

    some = SkillbankToolSpec(bank, include=["find_skills"], namespace="team-a", trusted=False)
    assert [t.metadata.name for t in some.to_tool_list()] == ["find_skills"]


async def test_retriever(bank):
    eid = bank.experiences.record(task="Build the yearly sales report", outcome="success",
                                  lessons=["Check the currency column first."])
    nodes = SkillbankRetriever(bank, kind="skills", k=2).retrieve("quarterly sales report")
    assert nodes[0].node.node_id == "skill:sales-report" and nodes[0].score is not None
    assert nodes[0].node.metadata["kind"] == "skill"
    assert "score" not in nodes[0].node.get_content(metadata_mode="llm")

    guidelines = await SkillbankRetriever(bank, kind="guidelines").aretrieve(
        QueryBundle("sales report money"))
    assert guidelines[0].node.get_content() == "Round money in sales reports to two decimals."
    experiences = SkillbankRetriever(bank, kind="experiences", k=5).retrieve("sales report for the year")
    assert eid in [n.node.node_id for n in experiences]
    # A lesson node reads as a lesson, said once (it was "Task: <lesson>" and "Lessons: <lesson>").
    # Lessons alone: beside its experience, whose "Lessons:" says it, it is not shown again.
    lesson = next(n for n in SkillbankRetriever(bank, kind="experiences", k=5, filters={
        "kind": "lesson"}).retrieve("check the currency column of the yearly sales report")
        if n.node.node_id.startswith("lsn-"))
    text = lesson.node.get_content()
    assert text.startswith("Lesson: Check the currency column first.") and "Task:" not in text
    assert text.count("currency column") == 1 and lesson.node.metadata["source"] == eid
    with pytest.raises(InvalidInputError):
        SkillbankRetriever(bank, kind="notes")


class ScriptedLLM(CustomLLM):
    """A LlamaIndex LLM that answers completions from a script."""

    replies: list = []

    @property
    def metadata(self) -> LLMMetadata:
        return LLMMetadata(model_name="scripted")

    def complete(self, prompt: str, formatted: bool = False, **kwargs: Any) -> CompletionResponse:
        return CompletionResponse(text=self.replies.pop(0))

    def stream_complete(self, prompt: str, formatted: bool = False, **kwargs: Any):
        raise NotImplementedError


async def test_llamaindex_distiller(bank):
    rules = json.dumps([{"text": "Add type hints to public functions.", "topic": "python",
                         "when_to_use": "When writing Python code", "actionable": True}])
    lessons = json.dumps([{"kind": "failure_trigger", "text": "Check the file encoding first.",
                           "when_to_use": "When a CSV import fails"}])
    llm = ScriptedLLM(replies=[rules, lessons])
    distiller = LlamaIndexDistiller(llm)
    assert isinstance(distiller, LLMDistiller) and distiller.llm is llm
    found = distiller.rules_from_critique("Your functions have no type hints.")
    assert [r.text for r in found] == ["Add type hints to public functions."]
    experience = bank.experiences.get(bank.experiences.record(task="Import a CSV",
                                                              outcome="failure"))
    got = await distiller.alessons_from_experience(experience)
    assert [l.text for l in got] == ["Check the file encoding first."]
    assert distiller.last_error is None
