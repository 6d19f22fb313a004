"""The LangChain face: a real `create_agent` run with a scripted tool-calling chat model.

No mocks of skillbank: a real bank on a temp dir (hash embedding for speed), real LangChain
middleware, tools, retrievers and callbacks; only the chat model is scripted.
"""

from __future__ import annotations

import json
import subprocess
import sys
from typing import Any

import pytest
from pydantic import Field

pytest.importorskip("langchain.agents")

from langchain.agents import create_agent  # noqa: E402
from langchain_core.documents import Document  # noqa: E402
from langchain_core.language_models.fake_chat_models import GenericFakeChatModel  # noqa: E402
from langchain_core.messages import AIMessage, SystemMessage, ToolMessage  # noqa: E402
from langchain_core.runnables import RunnableLambda  # noqa: E402
from langchain_core.tools import tool  # noqa: E402

from skillbank import Skillbank  # noqa: E402
from skillbank.adapters._tools import COMPACT_TOOLS, MIDDLEWARE_TOOLS, TOOL_NAMES  # noqa: E402
from skillbank.adapters.langchain import (  # noqa: E402
    ChatModelDistiller,
    ExperienceRetriever,
    GuidelineRetriever,
    SkillbankCallbackHandler,
    SkillbankMiddleware,
    SkillbankRetriever,
    SkillRetriever,
    skillbank_tools,
)
from skillbank.distill import LLMDistiller  # noqa: E402
from skillbank.embeddings import HashEmbedding  # noqa: E402
from skillbank.errors import InvalidInputError  # noqa: E402

TASK = "Write the quarterly sales report from the CSV export"
SIMILAR = "Write the monthly sales report from the CSV export"


class ScriptedChatModel(GenericFakeChatModel):
    """A fake chat model that can be bound to tools and remembers every prompt it was sent."""

    seen: list = Field(default_factory=list)
    bound: list = Field(default_factory=list)

    def bind_tools(self, tools: Any, **kwargs: Any) -> "ScriptedChatModel":
        self.bound = [getattr(t, "name", None) or t.get("name") for t in tools]
        return self

    def _generate(self, messages, stop=None, run_manager=None, **kwargs):
        self.seen.append(list(messages))
        return super()._generate(messages, stop=stop, run_manager=run_manager, **kwargs)


def call(name: str, args: dict, cid: str) -> AIMessage:
    return AIMessage(content="", tool_calls=[{"name": name, "args": args, "id": cid}])


@tool
def load_csv(path: str) -> str:
    """Load a CSV file and summarise its columns."""
    return f"{path}: region,amount (120 rows)"


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
    bank.skills.create("haiku-writer", "Writes haiku poems about nature.", "# Haiku\n\n5-7-5.\n")
    bank.guidelines.add("Round money in sales reports to two decimals.", topic="data",
                        when_to_use="When writing a sales report")
    yield bank
    bank.close()


def system_text(messages: list) -> str:
    return "\n".join(str(m.text) for m in messages if isinstance(m, SystemMessage))


def spy_context(bank, monkeypatch) -> list:
    calls: list = []
    real = bank.context_for

    def counting(task, *args, **kwargs):
        calls.append(task)
        return real(task, *args, **kwargs)

    monkeypatch.setattr(bank, "context_for", counting)
    return calls


# -- import hygiene ----------------------------------------------------------------------------

@pytest.mark.slow
def test_imports_stay_apart():
    code = (
        "import sys\n"
        "import skillbank\n"
        "bad = [m for m in sys.modules if m.split('.')[0] in ('langchain', 'langchain_core', "
        "'langgraph', 'llama_index')]\n"
        "assert not bad, bad\n"
        "import skillbank.adapters.langchain\n"
        "assert 'langchain' in sys.modules\n"
        "assert not [m for m in sys.modules if m.startswith('llama_index')]\n"
        "print('ok')\n")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120)
    assert out.returncode == 0, out.stderr
    assert out.stdout.strip() == "ok"


# -- the middleware in a real agent --------------------------------------------------------------

def test_agent_sees_memory_uses_tools_and_is_remembered(bank, monkeypatch):
    calls = spy_context(bank, monkeypatch)
    model = ScriptedChatModel(messages=iter([
        call("find_skills", {"task": "sales report from CSV"}, "c1"),
        call("load_csv", {"path": "q3.csv"}, "c2"),
        AIMessage(content="Q3 report: north 1200.00 EUR, south 950.00 EUR."),
    ]))
    middleware = SkillbankMiddleware(bank, tools=True, raise_errors=True)
    agent = create_agent(model, [load_csv], system_prompt="You are a data analyst.",
                         middleware=[middleware])

    out = agent.invoke({"messages": [{"role": "user", "content": TASK}]})

    # The model saw the memory, appended to its own system prompt, on every call.
    assert len(model.seen) == 3
    for prompt in model.seen:
        system = system_text(prompt)
        assert system.startswith("You are a data analyst.")
        assert "<skillbank-memory>" in system
        assert "Round money in sales reports to two decimals." in system
        assert "sales-report" in system
    assert calls == [TASK]  # computed once for the run, not once per model call
    # The compact skillbank tool set was offered and one of them answered.
    assert sorted(model.bound) == sorted([*MIDDLEWARE_TOOLS, "load_csv"])
    found = [m for m in out["messages"] if isinstance(m, ToolMessage) and m.name == "find_skills"]
    assert json.loads(found[0].content)["skills"][0]["name"] == "sales-report"
    assert out["skillbank_memory_ids"] and any(i.startswith("gl-") for i in out["skillbank_memory_ids"])

    # The run was recorded (in the background: durable after flush) and comes back.
    assert "skillbank_experience_id" not in out
    assert bank.flush(timeout=60)
    eid = middleware.last_experience_id
    assert eid.startswith("exp-") and middleware.last_error is None
    experience = bank.experiences.get(eid)
    assert experience.task == TASK
    assert [s.action for s in experience.steps][:2] == ["find_skills", "load_csv"]
    hits = bank.experiences.recall(SIMILAR, k=3)
    assert hits and hits[0].id == eid
    assert eid in bank.context_for(SIMILAR).text


async def test_async_run_records_outcome_and_learns_feedback(bank, monkeypatch):
    calls = spy_context(bank, monkeypatch)
    model = ScriptedChatModel(messages=iter([
        call("memory_context", {"task": TASK}, "c1"),
        call("load_skill", {"name": "no-such-skill"}, "c2"),
        call("find_skills", {"task": TASK, "k": 500}, "c3"),
        AIMessage(content="Report written."),
    ]))
    middleware = SkillbankMiddleware(bank, tools="all", raise_errors=True, background=False)
    agent = create_agent(model, [load_csv], middleware=[middleware])
    feedback = "Always put the totals row at the top of the report."

    out = await agent.ainvoke(
        {"messages": [{"role": "user", "content": TASK}], "outcome": "success"},
        config={"configurable": {"skillbank_feedback": feedback}})

    assert "<skillbank-memory>" in system_text(model.seen[0])  # no system prompt of its own
    assert calls == [TASK, TASK]  # once for the middleware, once for the memory_context tool
    tool_messages = {m.tool_call_id: m for m in out["messages"] if isinstance(m, ToolMessage)}
    assert "<skillbank-memory>" in tool_messages["c1"].content
    # Errors are replies to the model, and the run goes on.
    assert tool_messages["c2"].status == "error" and "no-such-skill" in tool_messages["c2"].content
    assert tool_messages["c3"].status == "error" and "invalid arguments" in tool_messages["c3"].content
    assert out["messages"][-1].content == "Report written."

    experience = bank.experiences.get(out["skillbank_experience_id"])
    assert experience.outcome == "success" and experience.feedback == feedback
    rules = [h.record.text for h in bank.guidelines.search("totals row in a sales report", k=5)]
    assert any("totals row" in r for r in rules)


def test_state_feedback_and_multi_turn_with_checkpointer(bank, monkeypatch):
    from langgraph.checkpoint.memory import InMemorySaver

    calls = spy_context(bank, monkeypatch)
    model = ScriptedChatModel(messages=iter([
        AIMessage(content="Here is the sales report."),
        AIMessage(content="Here is a haiku."),
    ]))
    agent = create_agent(model, [], middleware=[SkillbankMiddleware(bank, raise_errors=True,
                                                                    background=False)],
                         checkpointer=InMemorySaver())
    config = {"configurable": {"thread_id": "t1"}}
    # An outcome ends the episode: the next request in the thread is a new task.
    first = agent.invoke({"messages": [{"role": "user", "content": TASK}], "outcome": "success",
                          "feedback": "Use a bar chart for the totals per region."}, config)
    second = agent.invoke({"messages": [{"role": "user", "content": "Write a haiku about rain"}]},
                          config)

    assert calls == [TASK, "Write a haiku about rain"]  # the new turn gets fresh memory
    assert "haiku-writer" in system_text(model.seen[1])
    one = bank.experiences.get(first["skillbank_experience_id"])
    two = bank.experiences.get(second["skillbank_experience_id"])
    assert one.task == TASK and two.task == "Write a haiku about rain"
    assert one.feedback and two.feedback is None  # the first turn's feedback is not carried over
    assert all("sales" not in (s.observation or "") for s in two.steps)  # only this run's messages
    assert any("bar chart" in g.record.text for g in bank.guidelines.search("sales report totals", k=5))


def test_middleware_options(bank):
    quiet = SkillbankMiddleware(bank)
    assert quiet.tools == []
    some = SkillbankMiddleware(bank, tools=["find_skills", "rate_memory"])
    assert [t.name for t in some.tools] == ["find_skills", "rate_memory"]
    assert [t.name for t in SkillbankMiddleware(bank, tools=True).tools] == list(MIDDLEWARE_TOOLS)
    assert [t.name for t in SkillbankMiddleware(bank, tools="all").tools] == list(TOOL_NAMES)
    assert "SkillbankMiddleware" in repr(some) and str(bank.root) in repr(some)

    model = ScriptedChatModel(messages=iter([AIMessage(content="ok")]))
    agent = create_agent(model, [], middleware=[SkillbankMiddleware(bank, record=False)])
    out = agent.invoke({"messages": [{"role": "user", "content": TASK}]})
    assert "skillbank_experience_id" not in out
    assert bank.experiences.count() == 0


def test_memory_failure_does_not_break_the_agent(bank, monkeypatch):
    def broken(*args, **kwargs):
        raise InvalidInputError("index unavailable")

    monkeypatch.setattr(bank, "context_for", broken)
    model = ScriptedChatModel(messages=iter([AIMessage(content="done")]))
    middleware = SkillbankMiddleware(bank)
    agent = create_agent(model, [], system_prompt="Be brief.", middleware=[middleware])
    out = agent.invoke({"messages": [{"role": "user", "content": TASK}]})
    assert out["messages"][-1].content == "done"
    assert system_text(model.seen[0]) == "Be brief."
    assert isinstance(middleware.last_error, InvalidInputError)

    strict = SkillbankMiddleware(bank, raise_errors=True)
    agent = create_agent(ScriptedChatModel(messages=iter([AIMessage(content="x")])), [],
                         middleware=[strict])
    with pytest.raises(InvalidInputError):
        agent.invoke({"messages": [{"role": "user", "content": TASK}]})


# -- tools on their own ----------------------------------------------------------------------------

def test_every_tool_works(bank):
    assert [t.name for t in skillbank_tools(bank)] == list(COMPACT_TOOLS)
    tools = {t.name: t for t in skillbank_tools(bank, include="all")}
    assert list(tools) == list(TOOL_NAMES)
    for t in tools.values():
        assert t.args_schema is not None and t.coroutine is not None and t.description
        assert "properties" in t.tool_call_schema.model_json_schema()

    found = json.loads(tools["find_skills"].invoke({"task": "quarterly sales report"}))
    assert found["skills"][0]["name"] == "sales-report"
    loaded = json.loads(tools["load_skill"].invoke({"name": "sales-report"}))
    assert "Sum amount per region" in loaded["body"]
    assert loaded["resources"] == ["references/columns.md"]
    assert "revenue in EUR" in tools["read_skill_resource"].invoke(
        {"name": "sales-report", "path": "references/columns.md"})
    assert "<skillbank-memory>" in tools["memory_context"].invoke({"task": TASK})
    saved = json.loads(tools["save_skill"].invoke({
        "name": "csv-cleanup", "description": "Cleans a CSV export: trims spaces, fixes encodings.",
        "body": "# CSV cleanup\n\n1. Re-encode as UTF-8.\n"}))
    assert saved["action"] == "created" and "csv-cleanup" in bank.skills
    saved = json.loads(tools["save_skill"].invoke({
        "name": "csv-cleanup", "description": "Cleans a CSV export before analysis.",
        "body": "# CSV cleanup\n\n1. Re-encode as UTF-8.\n2. Drop empty rows.\n"}))
    assert saved["action"] == "updated" and "Drop empty rows" in bank.skills.load("csv-cleanup").body

    recorded = json.loads(tools["record_experience"].invoke({
        "task": "Fix the failing CSV import", "outcome": "failure",
        "steps": [{"action": "run import", "observation": "UnicodeDecodeError"}], "score": 0.2,
        "lessons": ["Open CSV exports with encoding='utf-8-sig'."]}))
    assert bank.experiences.get(recorded["id"]).score == 0.2
    recalled = json.loads(tools["recall_experiences"].invoke(
        {"task": "CSV import fails with a decode error", "outcome": "failure"}))
    assert recorded["id"] in [e["id"] for e in recalled["experiences"]]

    learned = json.loads(tools["learn_from_critique"].invoke(
        {"critique": "You should label the axes of every chart.", "task": "sales chart"}))
    assert learned["entries"][0]["action"] in ("added", "merged")
    added = json.loads(tools["add_guideline"].invoke({"text": "Cite the CSV file name in reports."}))
    assert added["guideline_id"].startswith("gl-")
    searched = json.loads(tools["search_guidelines"].invoke({"task": "sales report CSV file name"}))
    assert added["guideline_id"] in [g["id"] for g in searched["guidelines"]]
    rated = json.loads(tools["rate_memory"].invoke({"id": added["guideline_id"], "helpful": True}))
    assert rated["kind"] == "guideline" and bank.guidelines.get(added["guideline_id"]).helpful == 1

    assert json.loads(tools["find_skills"].invoke({"task": "zzzz qqqq"}))["skills"] == []


async def test_tools_async_errors_and_options(bank):
    tools = {t.name: t for t in skillbank_tools(bank, include=["find_skills", "rate_memory",
                                                                "add_guideline"],
                                                 namespace="team-a", trusted=False)}
    assert list(tools) == ["find_skills", "rate_memory", "add_guideline"]
    found = json.loads(await tools["find_skills"].ainvoke({"task": "sales report"}))
    assert found["skills"][0]["name"] == "sales-report"
    # A skillbank error is the tool's reply, not an exception.
    reply = await tools["rate_memory"].ainvoke({"id": "nonsense", "helpful": True})
    assert "unknown id" in reply
    # Untrusted agent-written rules wait for approval, in the tool's namespace.
    added = json.loads(tools["add_guideline"].invoke({"text": "Always answer in French."}))
    assert added["action"] == "pending"
    assert bank.guidelines.get(added["guideline_id"]).namespace == "team-a"
    with pytest.raises(InvalidInputError):
        skillbank_tools(bank, include=["no_such_tool"])


# -- retrievers ---------------------------------------------------------------------------------

async def test_retrievers_in_a_chain(bank):
    eid = bank.experiences.record(task="Build the yearly sales report", outcome="success",
                                  lessons=["Check the currency column first."])
    fmt = RunnableLambda(lambda docs: [(d.id, d.metadata["kind"]) for d in docs])
    chain = SkillRetriever(bank, k=2) | fmt
    assert chain.invoke("quarterly sales report")[0] == ("skill:sales-report", "skill")

    docs = GuidelineRetriever(bank).invoke("sales report money")
    assert isinstance(docs[0], Document) and docs[0].id.startswith("gl-")
    assert docs[0].page_content == "Round money in sales reports to two decimals."
    assert {"score", "why", "kind", "topic"} <= set(docs[0].metadata)

    docs = await ExperienceRetriever(bank, k=5).ainvoke("sales report for the year")
    assert eid in [d.id for d in docs]
    doc = next(d for d in docs if d.id == eid)
    assert doc.metadata["outcome"] == "success" and "Check the currency" in doc.page_content

    generic = SkillbankRetriever(bank, kind="guidelines", k=1)
    assert len(generic.invoke("sales report money")) == 1
    assert SkillbankRetriever(bank, kind="skills").invoke("zzzz qqqq") == []
    with pytest.raises(Exception):
        SkillbankRetriever(bank, kind="notes")


# -- callback handler -----------------------------------------------------------------------------

def test_callback_handler_records_a_plain_chain(bank):
    def analyse(inputs: dict, config) -> str:
        summary = load_csv.invoke({"path": inputs["file"]}, config=config)
        return f"Report for {inputs['question']}: {summary}"

    chain = RunnableLambda(lambda q: {"question": q, "file": "q3.csv"}) | RunnableLambda(analyse)
    handler = SkillbankCallbackHandler(bank, outcome="success", tags=["chain"])
    result = chain.invoke("Quarterly revenue per region from the CSV",
                          config={"callbacks": [handler]})
    assert result.startswith("Report for")

    assert handler.last_error is None and len(handler.experience_ids) == 1
    experience = bank.experiences.get(handler.last_experience_id)
    assert experience.task == "Quarterly revenue per region from the CSV"
    assert experience.outcome == "success" and experience.tags == ["chain"]
    actions = [s.action for s in experience.steps]
    assert actions[0] == "load_csv" and "120 rows" in experience.steps[0].observation
    assert experience.steps[-1].observation == result
    hits = bank.experiences.recall("revenue per region from a CSV file", k=3)
    assert hits[0].id == experience.id


async def test_callback_handler_in_an_async_run(bank):
    async def analyse(question: str, config) -> str:
        return await load_csv.ainvoke({"path": "q4.csv"}, config=config)

    handler = SkillbankCallbackHandler(bank)
    await RunnableLambda(analyse).ainvoke("Q4 revenue per region", config={"callbacks": [handler]})
    experience = bank.experiences.get(handler.last_experience_id)
    assert experience.task == "Q4 revenue per region" and experience.outcome == "unknown"
    assert [s.action for s in experience.steps] == ["load_csv", "final_answer"]


def test_callback_handler_records_failures(bank):
    def explode(_: Any) -> str:
        raise RuntimeError("disk full")

    handler = SkillbankCallbackHandler(bank, task="Export the report to PDF")
    with pytest.raises(RuntimeError):
        RunnableLambda(explode).invoke("go", config={"callbacks": [handler]})
    experience = bank.experiences.get(handler.last_experience_id)
    assert experience.task == "Export the report to PDF" and experience.outcome == "failure"
    assert "disk full" in experience.steps[-1].observation


# -- distiller --------------------------------------------------------------------------------------

async def test_chat_model_distiller(bank):
    reply = json.dumps([{"text": "Add type hints to public functions.", "topic": "python",
                         "when_to_use": "When writing Python code", "actionable": True}])
    lessons = json.dumps([{"kind": "success_pattern", "text": "Load the CSV with pandas.",
                           "when_to_use": "When reading CSV files"}])
    model = GenericFakeChatModel(messages=iter([AIMessage(content=reply), AIMessage(content=lessons),
                                                AIMessage(content="not json at all")]))
    distiller = ChatModelDistiller(model)
    assert isinstance(distiller, LLMDistiller)
    rules = distiller.rules_from_critique("Your functions have no type hints.")
    assert [r.text for r in rules] == ["Add type hints to public functions."]
    assert rules[0].topic == "python" and distiller.last_error is None

    experience = bank.experiences.get(bank.experiences.record(task="Summarise a CSV",
                                                              outcome="success"))
    found = await distiller.alessons_from_experience(experience)
    assert [lesson.text for lesson in found] == ["Load the CSV with pandas."]

    fallback = distiller.rules_from_critique("You should always use parameterised queries.")
    assert distiller.last_error and fallback and "parameterised" in fallback[0].text.lower()

    # Plugged into the bank, the chat model distils what guidelines.learn stores.
    bank.distiller = ChatModelDistiller(GenericFakeChatModel(messages=iter([AIMessage(content=reply)])))
    report = bank.guidelines.learn("Your functions have no type hints.", task="review a module")
    assert [(e.action, e.text) for e in report.entries] == [
        ("added", "Add type hints to public functions.")]
