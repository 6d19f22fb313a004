"""skillbank for LangChain 1.x: middleware, tools, retrievers, a callback handler, a distiller.

A thin face over `skillbank.Skillbank`: every piece here calls the facade (`bank.context_for`,
`bank.skills`, `bank.experiences`, `bank.guidelines`, `bank.rate`) and holds no memory logic.

* `SkillbankMiddleware` — add to `create_agent(..., middleware=[...])`: before every model call
  the memory for the current task (the latest human message) is appended to the system prompt,
  computed once per task within a run; after the run the trajectory is recorded as an
  experience, and feedback (state key ``feedback`` or ``config["configurable"]
  ["skillbank_feedback"]``) is learned as guidelines. ``tools=True`` also gives the agent the
  skillbank tools.
* `skillbank_tools(bank)` — the memory tools as `StructuredTool`s (sync and async).
* `SkillbankRetriever` / `SkillRetriever` / `GuidelineRetriever` / `ExperienceRetriever` —
  `BaseRetriever`s returning `Document`s (id, page_content, metadata with kind, score, why).
* `SkillbankCallbackHandler` — records a run of any Runnable (not built with `create_agent`)
  as an experience: the root input as the task, tool calls as steps, the final output.
* `ChatModelDistiller(chat_model)` — a `skillbank.distill.LLMDistiller` whose model is any
  LangChain chat model, for `Skillbank.open(..., distiller=...)`.

Needs the `langchain` extra (`pip install skillbank[langchain]`). Importing this module does not
import llama_index, and `import skillbank` does not import this module.
"""

from __future__ import annotations

import asyncio
import json
import logging
import threading
from typing import TYPE_CHECKING, Annotated, Any, Callable, Sequence
from uuid import UUID

from langchain.agents.middleware import AgentMiddleware, AgentState, ModelRequest, ModelResponse
from langchain.agents.middleware.types import (
    ExtendedModelResponse,
    OmitFromInput,
    PrivateStateAttr,
)
from langchain_core.callbacks import (
    AsyncCallbackManagerForRetrieverRun,
    BaseCallbackHandler,
    CallbackManagerForRetrieverRun,
)
from langchain_core.documents import Document
from langchain_core.messages import AIMessage, BaseMessage, SystemMessage
from langchain_core.retrievers import BaseRetriever
from langchain_core.tools import StructuredTool, ToolException
from langgraph.types import Command
from pydantic import ConfigDict, field_validator
from typing_extensions import NotRequired

from skillbank.adapters._tools import (
    TOOL_NAMES,
    ToolDef,
    hit_document,
    normalise_kind,
    run_tool,
    search_hits,
    tool_defs,
    validation_message,
)
from skillbank.distill import Distiller, LLMDistiller
from skillbank.errors import SkillbankError

if TYPE_CHECKING:
    from skillbank.bank import Skillbank

__all__ = [
    "SkillbankMiddleware",
    "SkillbankState",
    "skillbank_tools",
    "TOOL_NAMES",
    "SkillbankRetriever",
    "SkillRetriever",
    "GuidelineRetriever",
    "ExperienceRetriever",
    "SkillbankCallbackHandler",
    "ChatModelDistiller",
]

log = logging.getLogger("skillbank.adapters.langchain")


# --------------------------------------------------------------------------------------------
# Messages
# --------------------------------------------------------------------------------------------

def _text(message: Any) -> str:
    """The text of a message whatever its content shape (string or content blocks)."""
    if isinstance(message, BaseMessage):
        return str(message.text)
    if isinstance(message, dict):
        content = message.get("content", "")
        if isinstance(content, list):
            return "\n".join(b.get("text", "") if isinstance(b, dict) else str(b) for b in content)
        return str(content or "")
    return str(message)


def _is_human(message: Any) -> bool:
    if isinstance(message, BaseMessage):
        return message.type == "human"
    return isinstance(message, dict) and message.get("role") in ("user", "human")


def latest_human_text(messages: Sequence[Any]) -> str:
    """The current task: the text of the latest human message ('' when there is none)."""
    for message in reversed(list(messages or [])):
        if _is_human(message):
            return _text(message).strip()
    return ""


# --------------------------------------------------------------------------------------------
# Tools
# --------------------------------------------------------------------------------------------

def _structured_tool(bank: "Skillbank", definition: ToolDef, namespace: str | None,
                     trusted: bool) -> StructuredTool:
    name = definition.name

    def func(**kwargs: Any) -> str:
        try:
            return run_tool(bank, name, kwargs, namespace=namespace, trusted=trusted)
        except SkillbankError as exc:
            raise ToolException(str(exc)) from exc

    async def coroutine(**kwargs: Any) -> str:
        return await asyncio.to_thread(func, **kwargs)

    func.__name__ = coroutine.__name__ = name
    return StructuredTool.from_function(
        func=func, coroutine=coroutine, name=name, description=definition.description,
        args_schema=definition.args_schema, handle_tool_error=True,
        handle_validation_error=lambda exc: validation_message(name, exc),
    )


def skillbank_tools(bank: "Skillbank", include: Sequence[str] | None = None,
                    namespace: str | None = None, *, trusted: bool = True) -> list[StructuredTool]:
    """The skillbank memory tools for a LangChain agent.

    `include` picks tools by name (see `TOOL_NAMES`); `namespace` scopes experiences and
    guidelines. With `trusted=False`, guidelines a model adds or learns arrive as `pending`
    until a person approves them. A skillbank error becomes the tool's error reply to the model,
    never an exception that ends the run.
    """
    return [_structured_tool(bank, d, namespace, trusted) for d in tool_defs(include)]


# --------------------------------------------------------------------------------------------
# Middleware
# --------------------------------------------------------------------------------------------

class SkillbankState(AgentState):
    """Agent state with the keys `SkillbankMiddleware` reads and writes.

    Input: ``outcome`` (success / failure / partial / unknown) and ``feedback`` (a critique to
    learn from) describe the run being recorded. Output: ``skillbank_memory_ids`` (the ids the
    model was shown, for `bank.rate`) and ``skillbank_experience_id`` (the recorded run).
    """

    outcome: NotRequired[str | None]
    feedback: NotRequired[str | None]
    skillbank_context: NotRequired[Annotated[dict[str, Any] | None, PrivateStateAttr]]
    skillbank_memory_ids: NotRequired[Annotated[list[str], OmitFromInput]]
    skillbank_experience_id: NotRequired[Annotated[str | None, OmitFromInput]]


def _run_config() -> dict[str, Any]:
    try:
        from langgraph.config import get_config

        return dict(get_config().get("configurable") or {})
    except Exception:  # noqa: BLE001 - outside a graph run there is no config
        return {}


def _with_memory(request: ModelRequest, text: str) -> ModelRequest:
    """The request with `text` appended to its system message (or as the system message)."""
    if not text:
        return request
    current = request.system_message
    if current is None:
        return request.override(system_message=SystemMessage(content=text))
    if isinstance(current.content, str):
        content: Any = f"{current.content.rstrip()}\n\n{text}" if current.content.strip() else text
    else:
        content = [*current.content, {"type": "text", "text": text}]
    return request.override(system_message=current.model_copy(update={"content": content}))


class SkillbankMiddleware(AgentMiddleware):
    """Memory for a `create_agent` agent: context in, experience and feedback out.

    ``create_agent(model, tools, middleware=[SkillbankMiddleware(bank)])``. Options:
    ``budget_tokens`` for the injected block, ``record`` to record each run as an experience,
    ``namespace`` for experiences and guidelines, ``tools`` (True or a list of tool names) to add
    the skillbank tools, ``raise_errors`` to let memory errors stop the run (by default they are
    logged and the agent goes on without memory; the last one is in ``last_error``).
    """

    state_schema = SkillbankState

    def __init__(self, bank: "Skillbank", budget_tokens: int = 1500, record: bool = True,
                 namespace: str | None = None, tools: bool | Sequence[str] = False, *,
                 trusted: bool = True, raise_errors: bool = False) -> None:
        super().__init__()
        self.bank = bank
        self.budget_tokens = budget_tokens
        self.record = record
        self.namespace = namespace
        self.raise_errors = raise_errors
        self.last_error: BaseException | None = None
        if tools:
            include = None if tools is True else list(tools)  # type: ignore[arg-type]
            self.tools = skillbank_tools(bank, include=include, namespace=namespace,
                                         trusted=trusted)
        else:
            self.tools = []

    # -- errors -----------------------------------------------------------------------------
    def _failed(self, what: str, exc: BaseException) -> None:
        self.last_error = exc
        if self.raise_errors:
            raise exc
        log.warning("skillbank %s failed; the agent goes on without it: %s", what, exc,
                    exc_info=not isinstance(exc, SkillbankError))

    # -- context before each model call ---------------------------------------------------------
    def _cached(self, request: ModelRequest) -> tuple[str, dict[str, Any] | None]:
        task = latest_human_text(request.messages)
        cached = (request.state or {}).get("skillbank_context") if request.state else None
        if isinstance(cached, dict) and cached.get("task") == task:
            return task, cached
        return task, None

    def _compute(self, task: str) -> dict[str, Any] | None:
        try:
            ctx = self.bank.context_for(task, budget_tokens=self.budget_tokens,
                                        namespace=self.namespace)
        except Exception as exc:  # noqa: BLE001 - memory must not break the agent
            self._failed("context", exc)
            return None
        return {"task": task, "text": ctx.text, "ids": list(ctx.ids)}

    @staticmethod
    def _respond(response: ModelResponse, entry: dict[str, Any] | None, fresh: bool) -> Any:
        if not fresh or entry is None:
            return response
        update = {"skillbank_context": entry, "skillbank_memory_ids": entry["ids"]}
        return ExtendedModelResponse(model_response=response, command=Command(update=update))

    def wrap_model_call(self, request: ModelRequest,
                        handler: Callable[[ModelRequest], ModelResponse]) -> Any:
        task, entry = self._cached(request)
        fresh = entry is None and bool(task)
        if fresh:
            entry = self._compute(task)
        response = handler(_with_memory(request, entry["text"]) if entry else request)
        return self._respond(response, entry, fresh)

    async def awrap_model_call(self, request: ModelRequest, handler: Callable[..., Any]) -> Any:
        task, entry = self._cached(request)
        fresh = entry is None and bool(task)
        if fresh:
            entry = await asyncio.to_thread(self._compute, task)
        response = await handler(_with_memory(request, entry["text"]) if entry else request)
        return self._respond(response, entry, fresh)

    # -- recording after the run ----------------------------------------------------------------
    def _run_facts(self, state: dict[str, Any]) -> tuple[str | None, str | None]:
        config = _run_config()
        outcome = state.get("outcome") or config.get("skillbank_outcome") or "unknown"
        feedback = state.get("feedback") or config.get("skillbank_feedback") or None
        return str(outcome), (str(feedback) if feedback else None)

    def _record(self, state: dict[str, Any], outcome: str, feedback: str | None) -> dict[str, Any]:
        update: dict[str, Any] = {"skillbank_context": None}
        # Outcome and feedback describe this run only: with a checkpointer the state outlives
        # the run, and the next turn must not be recorded (or learned from) with them again.
        update.update({key: None for key in ("outcome", "feedback") if state.get(key) is not None})
        messages = list(state.get("messages") or [])
        start = max((i for i, m in enumerate(messages) if _is_human(m)), default=None)
        if start is None:
            return update
        run = messages[start:]  # this run: from the task to the answer
        task = _text(messages[start]).strip() or None
        if self.record:
            update["skillbank_experience_id"] = None
            try:
                update["skillbank_experience_id"] = self.bank.experiences.record_messages(
                    run, task=task, outcome=outcome, feedback=feedback, namespace=self.namespace)
            except Exception as exc:  # noqa: BLE001 - memory must not break the agent
                self._failed("recording", exc)
        if feedback:
            answer = next((_text(m) for m in reversed(run)
                           if isinstance(m, AIMessage) and _text(m).strip()), None)
            try:
                self.bank.guidelines.learn(feedback, task=task, response=answer,
                                           namespace=self.namespace)
            except Exception as exc:  # noqa: BLE001
                self._failed("learning from feedback", exc)
        return update

    def after_agent(self, state: Any, runtime: Any) -> dict[str, Any] | None:
        outcome, feedback = self._run_facts(state)
        return self._record(state, outcome, feedback)

    async def aafter_agent(self, state: Any, runtime: Any) -> dict[str, Any] | None:
        outcome, feedback = self._run_facts(state)
        return await asyncio.to_thread(self._record, state, outcome, feedback)


# --------------------------------------------------------------------------------------------
# Retrievers
# --------------------------------------------------------------------------------------------

class SkillbankRetriever(BaseRetriever):
    """Skills, guidelines or experiences for a query, as LangChain `Document`s.

    ``SkillbankRetriever(bank, kind="skills" | "guidelines" | "experiences", k=5)``. Each
    document has ``id`` (``skill:<name>``, ``gl-…``, ``exp-…`` / ``lsn-…``), readable
    ``page_content`` and metadata with ``kind``, ``score`` and ``why`` (dense / keyword / both).
    """

    model_config = ConfigDict(arbitrary_types_allowed=True)

    bank: Any
    kind: str = "skills"
    k: int = 5
    namespace: str | None = None

    def __init__(self, bank: "Skillbank | None" = None, **kwargs: Any) -> None:
        if bank is not None:
            kwargs["bank"] = bank
        super().__init__(**kwargs)

    @field_validator("kind")
    @classmethod
    def _kind(cls, value: str) -> str:
        return normalise_kind(value)

    def _documents(self, query: str) -> list[Document]:
        hits = search_hits(self.bank, self.kind, query, self.k, namespace=self.namespace)
        docs = []
        for hit in hits:
            doc_id, text, metadata = hit_document(self.kind, hit)
            docs.append(Document(id=doc_id, page_content=text, metadata=metadata))
        return docs

    def _get_relevant_documents(self, query: str, *,
                                run_manager: CallbackManagerForRetrieverRun) -> list[Document]:
        return self._documents(query)

    async def _aget_relevant_documents(
            self, query: str, *, run_manager: AsyncCallbackManagerForRetrieverRun) -> list[Document]:
        return await asyncio.to_thread(self._documents, query)


class SkillRetriever(SkillbankRetriever):
    """Skills (name and description) that fit a query."""

    kind: str = "skills"


class GuidelineRetriever(SkillbankRetriever):
    """Active guidelines (rules learned from feedback) that apply to a query."""

    kind: str = "guidelines"


class ExperienceRetriever(SkillbankRetriever):
    """Past experiences and lessons about tasks like the query."""

    kind: str = "experiences"


# --------------------------------------------------------------------------------------------
# Callback handler
# --------------------------------------------------------------------------------------------

def _task_from(inputs: Any) -> str:
    if isinstance(inputs, str):
        return inputs
    if isinstance(inputs, BaseMessage):
        return _text(inputs)
    if isinstance(inputs, (list, tuple)):
        return latest_human_text(inputs) or " ".join(_task_from(i) for i in inputs if i)[:4000]
    if isinstance(inputs, dict):
        for key in ("input", "question", "query", "task", "prompt", "user_input"):
            if isinstance(inputs.get(key), str) and inputs[key].strip():
                return inputs[key]
        if inputs.get("messages"):
            return latest_human_text(inputs["messages"]) or _task_from(inputs["messages"])
        strings = [v for v in inputs.values() if isinstance(v, str) and v.strip()]
        if strings:
            return strings[0]
    return "" if inputs is None else json.dumps(inputs, default=str)[:4000]


def _output_text(outputs: Any) -> str:
    if isinstance(outputs, str):
        return outputs
    if isinstance(outputs, BaseMessage):
        return _text(outputs)
    if isinstance(outputs, dict):
        if outputs.get("messages"):
            ai = [m for m in outputs["messages"] if isinstance(m, AIMessage)]
            if ai:
                return _text(ai[-1])
        for key in ("output", "answer", "result", "text", "content"):
            if key in outputs and outputs[key] is not None:
                return _output_text(outputs[key])
    if isinstance(outputs, (list, tuple)) and outputs and isinstance(outputs[-1], BaseMessage):
        return _text(outputs[-1])
    try:
        return json.dumps(outputs, default=str)
    except (TypeError, ValueError):
        return str(outputs)


class SkillbankCallbackHandler(BaseCallbackHandler):
    """Record any Runnable's run (chain, agent not built with `create_agent`) as an experience.

    ``chain.invoke(x, config={"callbacks": [SkillbankCallbackHandler(bank)]})``. The root run's
    input becomes the task (unless ``task`` is given), each tool call a step (input, output or
    error), and the root output the last step; the root ``on_chain_end`` (no parent run) records
    it with ``bank.experiences.record``. A run that raises is recorded with outcome "failure".
    Ids of the recorded experiences are in ``experience_ids``. Recording errors are logged and
    kept in ``last_error``; they never break the run.
    """

    def __init__(self, bank: "Skillbank", task: str | None = None, outcome: str = "unknown", *,
                 namespace: str | None = None, feedback: str | None = None,
                 tags: Sequence[str] = ()) -> None:
        super().__init__()
        self.bank = bank
        self.task = task
        self.outcome = outcome
        self.namespace = namespace
        self.feedback = feedback
        self.tags = list(tags)
        self.experience_ids: list[str] = []
        self.last_error: BaseException | None = None
        self._lock = threading.Lock()
        self._root: dict[UUID, UUID] = {}  # any run -> its root run
        self._runs: dict[UUID, dict[str, Any]] = {}  # root run -> what was seen
        self._steps: dict[UUID, dict[str, Any]] = {}  # tool run -> its step

    def _root_of(self, run_id: UUID, parent_run_id: UUID | None) -> UUID:
        with self._lock:
            root = run_id if parent_run_id is None else self._root.get(parent_run_id, parent_run_id)
            self._root[run_id] = root
            return root

    def on_chain_start(self, serialized: dict[str, Any] | None, inputs: Any, *, run_id: UUID,
                       parent_run_id: UUID | None = None, **kwargs: Any) -> None:
        root = self._root_of(run_id, parent_run_id)
        if parent_run_id is None:
            with self._lock:
                self._runs[root] = {"task": self.task or _task_from(inputs), "steps": []}

    def on_tool_start(self, serialized: dict[str, Any] | None, input_str: str, *, run_id: UUID,
                      parent_run_id: UUID | None = None, inputs: dict[str, Any] | None = None,
                      **kwargs: Any) -> None:
        root = self._root_of(run_id, parent_run_id)
        name = kwargs.get("name") or (serialized or {}).get("name") or "tool"
        step = {"action": str(name), "action_input": inputs if inputs is not None else input_str}
        with self._lock:
            run = self._runs.setdefault(root, {"task": self.task or input_str, "steps": []})
            run["steps"].append(step)
            self._steps[run_id] = step

    def on_tool_end(self, output: Any, *, run_id: UUID, parent_run_id: UUID | None = None,
                    **kwargs: Any) -> None:
        with self._lock:
            step = self._steps.pop(run_id, None)
        if step is not None:
            step["observation"] = _output_text(getattr(output, "content", output))
        if parent_run_id is None:
            self._finish(run_id, None, None)

    def on_tool_error(self, error: BaseException, *, run_id: UUID,
                      parent_run_id: UUID | None = None, **kwargs: Any) -> None:
        with self._lock:
            step = self._steps.pop(run_id, None)
        if step is not None:
            step["observation"] = f"error: {type(error).__name__}: {error}"
        if parent_run_id is None:
            self._finish(run_id, None, error)

    def on_chain_end(self, outputs: Any, *, run_id: UUID, parent_run_id: UUID | None = None,
                     **kwargs: Any) -> None:
        if parent_run_id is None:
            self._finish(run_id, outputs, None)

    def on_chain_error(self, error: BaseException, *, run_id: UUID,
                       parent_run_id: UUID | None = None, **kwargs: Any) -> None:
        if parent_run_id is None:
            self._finish(run_id, None, error)

    def _finish(self, root: UUID, outputs: Any, error: BaseException | None) -> None:
        with self._lock:
            run = self._runs.pop(root, None)
            for child in [r for r, top in self._root.items() if top == root]:
                self._root.pop(child, None)
                self._steps.pop(child, None)
        if run is None:
            return
        steps = list(run["steps"])
        if error is not None:
            steps.append({"action": "error", "observation": f"{type(error).__name__}: {error}"})
        elif outputs is not None:
            steps.append({"action": "final_answer", "observation": _output_text(outputs)})
        task = (run["task"] or "").strip() or "(no task text)"
        outcome = "failure" if error is not None and self.outcome == "unknown" else self.outcome
        try:
            eid = self.bank.experiences.record(
                task=task, outcome=outcome, steps=steps, feedback=self.feedback,
                tags=self.tags, namespace=self.namespace)
        except Exception as exc:  # noqa: BLE001 - memory must not break the run
            self.last_error = exc
            log.warning("skillbank could not record the run: %s", exc)
            return
        with self._lock:
            self.experience_ids.append(eid)

    @property
    def last_experience_id(self) -> str | None:
        return self.experience_ids[-1] if self.experience_ids else None


# --------------------------------------------------------------------------------------------
# Distiller
# --------------------------------------------------------------------------------------------

class ChatModelDistiller(LLMDistiller):
    """A `skillbank.distill.LLMDistiller` that asks a LangChain chat model.

    ``Skillbank.open(root, distiller=ChatModelDistiller(ChatOpenAI(model=...)))``. Prompts go
    through ``chat_model.invoke(prompt)`` / ``await chat_model.ainvoke(prompt)``; the reply's
    text is parsed, and any failure falls back to `fallback` (the rule distiller by default).
    """

    def __init__(self, chat_model: Any, *, fallback: Distiller | None = None) -> None:
        self.chat_model = chat_model

        def complete(prompt: str) -> str:
            return _text(chat_model.invoke(prompt))

        async def acomplete(prompt: str) -> str:
            return _text(await chat_model.ainvoke(prompt))

        super().__init__(complete, fallback=fallback, acomplete=acomplete)
