"""skillbank for LangChain 1.x: middleware, tools, retrievers, a callback handler, a distiller.

A thin face over `skillbank.Skillbank`: every piece here calls the facade (`bank.context_for`,
`bank.skills`, `bank.experiences`, `bank.guidelines`, `bank.rate`) and holds no memory logic.

* `SkillbankMiddleware` — add to `create_agent(..., middleware=[...])`: before every model call
  the memory for the thread's goal and latest request is appended to the system prompt (once
  per run); every run, failures included, is recorded as an experience in the background, and
  feedback (state key ``feedback`` or ``config["configurable"]["skillbank_feedback"]``) is
  learned as guidelines. ``namespace="{user_id}"`` scopes memory per run; ``tools=True`` adds
  a compact tool set (see `skillbank.adapters._lc_middleware`).
* `skillbank_tools(bank)` / `SkillbankToolkit(bank=bank)` — the memory tools as
  `StructuredTool`s (sync and async): a compact set by default, ``include="all"`` for all.
* `SkillbankRetriever` / `SkillRetriever` / `GuidelineRetriever` / `ExperienceRetriever` —
  `BaseRetriever`s returning `Document`s (id, clean page_content, metadata with kind, score,
  why); ``k``, ``search_kwargs={"k": …, "filter": {…}}`` and ``invoke(q, k=…)`` as usual.
* `SkillbankCallbackHandler` — records a run of any Runnable (not built with `create_agent`)
  as an experience: the root input as the task, tool calls as steps, the final output.
* `ChatModelDistiller(chat_model)` — a `skillbank.distill.LLMDistiller` whose model is any
  LangChain chat model, for `Skillbank.open(..., distiller=...)`.

Needs the `langchain` extra (`pip install -e '.[langchain]'` in a skillbank clone; it is on no
package index). Importing it does not import llama_index; `import skillbank` does not import it.
"""

from __future__ import annotations

import asyncio
import copy
import json
import logging
import threading
from typing import TYPE_CHECKING, Any, Sequence
from uuid import UUID

from skillbank.adapters._extras import require_extra

require_extra("langchain", ("langchain_core", "langchain", "langgraph"))  # names the extra (hunt-wheel #2)
from langchain_core.callbacks import (  # noqa: E402 - after the extra's check
    AsyncCallbackManagerForRetrieverRun,
    BaseCallbackHandler,
    CallbackManagerForRetrieverRun,
)
from langchain_core.documents import Document
from langchain_core.messages import AIMessage, BaseMessage
from langchain_core.retrievers import BaseRetriever
from langchain_core.runnables import ensure_config
from pydantic import ConfigDict, Field, field_validator

from skillbank.adapters._lc_common import (
    GIVEN_CONFIGURABLE,
    SkillbankToolkit,
    latest_human_text,
    namespace_now,
    refuse_unknown_options,
    skillbank_tools,
    thread_now,
)
from skillbank.adapters._lc_common import text_of as _text
from skillbank.adapters._lc_middleware import SkillbankMiddleware, SkillbankState
from skillbank.adapters._runs import template_fields
from skillbank.adapters._tools import (
    COMPACT_TOOLS,
    MIDDLEWARE_TOOLS,
    TOOL_NAMES,
)
from skillbank.distill import Distiller, LLMDistiller
from skillbank.errors import InvalidInputError
from skillbank.memories.experiences.validation import OUTCOMES
from skillbank.retrieved_documents import normalise_kind, retrieve
from skillbank.scope import narrowed, using

if TYPE_CHECKING:
    from skillbank.bank import Skillbank

__all__ = [
    "SkillbankMiddleware",
    "SkillbankState",
    "skillbank_tools",
    "SkillbankToolkit",
    "TOOL_NAMES",
    "COMPACT_TOOLS",
    "MIDDLEWARE_TOOLS",
    "SkillbankRetriever",
    "SkillRetriever",
    "GuidelineRetriever",
    "ExperienceRetriever",
    "SkillbankCallbackHandler",
    "ChatModelDistiller",
    "latest_human_text",
]

log = logging.getLogger("skillbank.adapters.langchain")


# --------------------------------------------------------------------------------------------
# Retrievers
# --------------------------------------------------------------------------------------------

_SEARCH_OPTIONS = ("k", "filter", "include_body", "namespace")
#: What an option of LangChain's vector-store retrievers means here, when it is given.
_VECTOR_STORE_OPTIONS = {
    "search_type": "a skillbank retriever ranks by skillbank's own hybrid search (keywords, "
                   "embeddings and what helped before), so there is no search type to choose; "
                   "set k, filter, include_body or namespace, or search_kwargs with them",
}


class SkillbankRetriever(BaseRetriever):
    """Skills, guidelines or experiences for a query, as LangChain `Document`s.

    ``SkillbankRetriever(bank, kind="skills" | "guidelines" | "experiences", k=5)``. Each
    document has ``id`` (``skill:<name>``, ``gl-…``, ``exp-…`` / ``lsn-…``), ``page_content``
    a model can read (the content once; a skill's instructions too with ``include_body=True``)
    and metadata with ``kind``, ``score``, ``rank_score``, ``why`` and the fields worth
    filtering on. ``score`` is in [0, 1], higher is closer, for every kind: a skill's fit
    probability, a guideline's or experience's `Hit.relevance` (its own text scores ~1); the
    documents come in the memory's ranking order, whose value is ``rank_score``. Experiences
    say each fact once, as the memory block does, and a retrieval counts no use (docs/api.md,
    "Adapters"; hunt-rag #3-#5, session 24).

    As with vector-store retrievers, ``search_kwargs={"k": 2, "filter": {"outcome":
    "failure"}}`` sets search options and ``retriever.invoke(query, k=1, filter=…)`` overrides
    them for one call. The configuration is plain data: ``model_dump_json()`` and
    ``copy.deepcopy`` work (a copy shares the bank).
    """

    # extra="forbid": a misspelt option is an error, not ignored (see `refuse_unknown_options`)
    model_config = ConfigDict(arbitrary_types_allowed=True, extra="forbid")

    bank: Any = Field(exclude=True, repr=False)
    kind: str = "skills"
    k: int = Field(default=5, ge=1, le=100)
    namespace: str | None = None
    include_body: bool = False
    search_kwargs: dict[str, Any] = Field(default_factory=dict)

    def __init__(self, bank: "Skillbank | None" = None, **kwargs: Any) -> None:
        if bank is not None:
            kwargs["bank"] = bank
        refuse_unknown_options(type(self), kwargs, _VECTOR_STORE_OPTIONS)
        super().__init__(**kwargs)

    @field_validator("kind")
    @classmethod
    def _kind(cls, value: str) -> str:
        return normalise_kind(value)

    @field_validator("namespace")
    @classmethod
    def _namespace(cls, value: str | None) -> str | None:
        template_fields(value)  # a malformed template fails here; a good one is filled per call
        return value

    @field_validator("search_kwargs")
    @classmethod
    def _options(cls, value: dict[str, Any]) -> dict[str, Any]:
        unknown = sorted(set(value) - set(_SEARCH_OPTIONS))
        if unknown:
            raise InvalidInputError(f"unknown search option(s) {unknown}; use {list(_SEARCH_OPTIONS)}")
        return value

    def __repr_args__(self) -> Any:
        yield "bank", self.bank
        yield from super().__repr_args__()

    def __deepcopy__(self, memo: dict[int, Any] | None = None) -> "SkillbankRetriever":
        clone = self.model_copy()
        object.__setattr__(clone, "search_kwargs", copy.deepcopy(self.search_kwargs, memo))
        object.__setattr__(clone, "metadata", copy.deepcopy(self.metadata, memo))
        object.__setattr__(clone, "tags", copy.deepcopy(self.tags, memo))
        return clone

    def _documents(self, query: str, **options: Any) -> list[Document]:
        opts = {**self.search_kwargs, **options}
        unknown = sorted(set(opts) - set(_SEARCH_OPTIONS))
        if unknown:
            raise InvalidInputError(f"unknown search option(s) {unknown}; use {list(_SEARCH_OPTIONS)}")
        found = retrieve(self.bank, self.kind, query, opts.get("k", self.k),
                         namespace=namespace_now(opts.get("namespace", self.namespace)),
                         filters=opts.get("filter"),
                         include_body=opts.get("include_body", self.include_body),
                         exclude_thread=thread_now())
        return [Document(id=doc_id, page_content=text, metadata=meta)
                for doc_id, text, meta, _ in found]

    def invoke(self, input: str, config: Any = None, **kwargs: Any) -> list[Document]:
        token = GIVEN_CONFIGURABLE.set(_configurable(config))
        try:  # the namespace template is filled from this call's configurable
            return super().invoke(input, config, **kwargs)
        finally:
            GIVEN_CONFIGURABLE.reset(token)

    async def ainvoke(self, input: str, config: Any = None, **kwargs: Any) -> list[Document]:
        token = GIVEN_CONFIGURABLE.set(_configurable(config))
        try:
            return await super().ainvoke(input, config, **kwargs)
        finally:
            GIVEN_CONFIGURABLE.reset(token)

    def _get_relevant_documents(self, query: str, *, run_manager: CallbackManagerForRetrieverRun,
                                **options: Any) -> list[Document]:
        return self._documents(query, **options)

    async def _aget_relevant_documents(
            self, query: str, *, run_manager: AsyncCallbackManagerForRetrieverRun,
            **options: Any) -> list[Document]:
        return await asyncio.to_thread(self._documents, query, **options)


def _configurable(config: Any) -> dict[str, Any] | None:
    """A retriever call's ``configurable``: its own, else the run it is called in (None when
    given no config: `run_config` asks the graph then). `create_retriever_tool` passes only its
    callbacks, so the run's ``thread_id`` was lost and the thread was served its own open
    record as a past experience (hunt-threads #4, session 38): `ensure_config` adds the run's."""
    if not config:
        return None
    return dict(ensure_config(config).get("configurable") or {})


class SkillRetriever(SkillbankRetriever):
    """Skills (name and description; the instructions with ``include_body=True``)."""

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
    it with ``bank.experiences.record``. ``outcome`` is that of a run that ends; a run that
    raises is recorded with outcome "failure" whatever ``outcome`` was given (a handler made
    with ``outcome="success"`` stored crashed runs as successes: hunt-rag #1, session 24).
    Ids of the recorded experiences are in ``experience_ids``. Recording errors are logged and
    kept in ``last_error``; they never break the run.
    """

    def __init__(self, bank: "Skillbank", task: str | None = None, outcome: str = "unknown", *,
                 namespace: str | None = None, feedback: str | None = None,
                 tags: Sequence[str] = ()) -> None:
        super().__init__()
        if template_fields(namespace):  # a handler is one run's: its namespace is a name
            raise InvalidInputError(
                f"namespace {namespace!r} is a template; a callback handler records one run, so "
                "give it the namespace itself (e.g. namespace=user_id), or use "
                "SkillbankMiddleware, which fills templates per run")
        if str(outcome).strip().lower() not in OUTCOMES:  # else every run's record is refused
            raise InvalidInputError(f"unknown outcome {outcome!r}; use one of "
                                    f"{', '.join(OUTCOMES)} (a run that raises is a failure)")
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
        outcome = "failure" if error is not None else self.outcome
        try:
            # As the namespace's principal, face "langchain", as the middleware records a run:
            # the audit log named the OS user and face "python" (hunt-agents-team #4, session 31).
            with using(narrowed(self.namespace, face="langchain")):
                eid = self.bank.experiences.record(
                    task=task, outcome=outcome, steps=steps, feedback=self.feedback,
                    tags=self.tags, namespace=self.namespace)
        except Exception as exc:  # noqa: BLE001 - memory must not break the run
            self.last_error = exc
            from skillbank.adapters._runs import recording_failed

            recording_failed(self.bank, "recording a run", exc)  # counted, warned once
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

    def __init__(self, chat_model: Any, *, fallback: Distiller | None = None,
                 timeout: float | None = -1) -> None:
        self.chat_model = chat_model

        def complete(prompt: str) -> str:
            return _text(chat_model.invoke(prompt))

        async def acomplete(prompt: str) -> str:
            return _text(await chat_model.ainvoke(prompt))

        super().__init__(complete, fallback=fallback, acomplete=acomplete, timeout=timeout)
