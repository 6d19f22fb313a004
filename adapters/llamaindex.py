"""skillbank for LlamaIndex 0.14: tool spec, retriever, memory block, distiller.

A thin face over `skillbank.Skillbank`: every piece calls the facade and holds no memory logic.

* `SkillbankToolSpec(bank)` — the memory tools as a `BaseToolSpec`
  (``FunctionAgent(tools=SkillbankToolSpec(bank).to_tool_list(), ...)``), sync and async.
* `SkillbankRetriever(bank, kind="skills" | "guidelines" | "experiences", k=5)` — a
  `BaseRetriever` returning `NodeWithScore`s (node id = memory id, metadata with kind, why).
* `SkillbankMemoryBlock(bank)` — a `BaseMemoryBlock` for
  ``Memory.from_defaults(memory_blocks=[...])``: the memory for the latest user message reaches
  the LLM inside ``<memory>…</memory>``; messages flushed out of the short-term queue are
  recorded as an experience, and ``await block.arecord_run(memory, outcome=..., feedback=...)``
  records a whole run (and learns from feedback) when you know how it went.
* `LlamaIndexDistiller(llm)` — a `skillbank.distill.LLMDistiller` whose model is any LlamaIndex
  LLM (``llm.complete`` / ``llm.acomplete``), for ``Skillbank.open(..., distiller=...)``. Named
  apart from `skillbank.distill.LLMDistiller`, which takes a plain ``prompt -> text`` callable.

Needs the `llamaindex` extra (`pip install skillbank[llamaindex]`). Importing this module does not
import langchain, and `import skillbank` does not import this module.
"""

from __future__ import annotations

import asyncio
import logging
from collections import OrderedDict
from typing import TYPE_CHECKING, Any, List, Optional, Sequence

from llama_index.core.base.base_retriever import BaseRetriever
from llama_index.core.base.llms.types import ChatMessage, TextBlock
from llama_index.core.memory import BaseMemoryBlock
from llama_index.core.schema import NodeWithScore, QueryBundle, TextNode
from llama_index.core.tools import ToolMetadata
from llama_index.core.tools.tool_spec.base import BaseToolSpec
from pydantic import ConfigDict, Field, PrivateAttr

from skillbank.adapters._tools import (
    TOOL_NAMES,
    hit_document,
    normalise_kind,
    run_tool,
    search_hits,
    tool_defs,
)
from skillbank.distill import Distiller, LLMDistiller
from skillbank.errors import SkillbankError

if TYPE_CHECKING:
    from skillbank.bank import Skillbank

__all__ = [
    "SkillbankToolSpec",
    "TOOL_NAMES",
    "SkillbankRetriever",
    "SkillbankMemoryBlock",
    "LlamaIndexDistiller",
]

log = logging.getLogger("skillbank.adapters.llamaindex")

# --------------------------------------------------------------------------------------------
# Messages
# --------------------------------------------------------------------------------------------

def _role(message: ChatMessage) -> str:
    return getattr(message.role, "value", str(message.role))


def _text(message: ChatMessage) -> str:
    return "\n".join(b.text for b in message.blocks if isinstance(b, TextBlock))


def _latest_user_turn(messages: Sequence[ChatMessage] | None) -> tuple[str, int]:
    """(text of the latest user message, its position in the conversation).

    `FunctionAgent` reads memory with the user message appended once more (``aget(input=…)``)
    while it loops over tool calls; that echo is not a new turn, so it is dropped first.
    """
    items = list(messages or [])
    if (len(items) >= 2 and _role(items[-1]) == "user" and _role(items[-2]) == "user"
            and _text(items[-1]) == _text(items[-2])):
        items.pop()
    for position in range(len(items) - 1, -1, -1):
        if _role(items[position]) == "user":
            return _text(items[position]).strip(), position
    return "", -1


# --------------------------------------------------------------------------------------------
# Tools
# --------------------------------------------------------------------------------------------

def _async_twin(name: str) -> Any:
    async def method(self: "SkillbankToolSpec", **kwargs: Any) -> str:
        return await asyncio.to_thread(getattr(self, name), **kwargs)

    method.__name__ = method.__qualname__ = f"a{name}"
    method.__doc__ = f"Async `{name}` (runs the facade call in a worker thread)."
    return method


class SkillbankToolSpec(BaseToolSpec):
    """The skillbank memory tools for a LlamaIndex agent.

    ``SkillbankToolSpec(bank).to_tool_list()``. `include` picks tools by name (see `TOOL_NAMES`),
    `namespace` scopes experiences and guidelines, and with `trusted=False` guidelines the model
    adds or learns arrive as `pending` until a person approves them. Each tool has a sync and an
    async function and a pydantic schema; a skillbank error is raised with a message written for
    the model, which agents turn into an error tool result.
    """

    spec_functions = [(name, f"a{name}") for name in TOOL_NAMES]

    def __init__(self, bank: "Skillbank", include: Sequence[str] | None = None,
                 namespace: str | None = None, *, trusted: bool = True) -> None:
        self.bank = bank
        self.namespace = namespace
        self.trusted = trusted
        self.spec_functions = [(d.name, f"a{d.name}") for d in tool_defs(include)]

    def get_metadata_from_fn_name(self, fn_name: str,
                                  spec_functions: Any = None) -> Optional[ToolMetadata]:
        name = fn_name[1:] if fn_name.startswith("a") and fn_name[1:] in TOOL_NAMES else fn_name
        definition = tool_defs([name])[0]
        return ToolMetadata(name=definition.name, description=definition.description,
                            fn_schema=definition.args_schema)

    def _call(self, _tool: str, **kwargs: Any) -> str:
        arguments = {k: v for k, v in kwargs.items() if v is not None}
        return run_tool(self.bank, _tool, arguments, namespace=self.namespace, trusted=self.trusted)

    def find_skills(self, task: str, k: int = 5) -> str:
        """Search the skill library for skills that fit a task."""
        return self._call("find_skills", task=task, k=k)

    def load_skill(self, name: str) -> str:
        """Read a skill's full instructions and the list of its files."""
        return self._call("load_skill", name=name)

    def read_skill_resource(self, name: str, path: str) -> str:
        """Read one text file that a skill ships with."""
        return self._call("read_skill_resource", name=name, path=path)

    def save_skill(self, name: str, description: str, body: str) -> str:
        """Save reusable instructions as a skill (create or update)."""
        return self._call("save_skill", name=name, description=description, body=body)

    def memory_context(self, task: str, budget_tokens: int = 1500) -> str:
        """Everything remembered that is relevant to a task, in one block."""
        return self._call("memory_context", task=task, budget_tokens=budget_tokens)

    def record_experience(self, task: str, outcome: str = "unknown",
                          steps: Optional[List[dict]] = None, feedback: Optional[str] = None,
                          lessons: Optional[List[str]] = None, when_to_use: str = "",
                          tags: Optional[List[str]] = None,
                          score: Optional[float] = None) -> str:
        """Save what was done on a task and how it went."""
        return self._call("record_experience", task=task, outcome=outcome, steps=steps,
                          feedback=feedback, lessons=lessons, when_to_use=when_to_use, tags=tags,
                          score=score)

    def recall_experiences(self, task: str, k: int = 5, outcome: Optional[str] = None) -> str:
        """Find past attempts at similar tasks and their lessons."""
        return self._call("recall_experiences", task=task, k=k, outcome=outcome)

    def learn_from_critique(self, critique: str, task: Optional[str] = None,
                            response: Optional[str] = None, score: Optional[float] = None) -> str:
        """Turn a critique into durable guidelines."""
        return self._call("learn_from_critique", critique=critique, task=task,
                          response=response, score=score)

    def add_guideline(self, text: str, topic: Optional[str] = None, when_to_use: str = "") -> str:
        """Store one rule to follow on future tasks."""
        return self._call("add_guideline", text=text, topic=topic, when_to_use=when_to_use)

    def search_guidelines(self, task: str, k: int = 5, topic: Optional[str] = None) -> str:
        """Find the guidelines that apply to a task."""
        return self._call("search_guidelines", task=task, k=k, topic=topic)

    def rate_memory(self, id: str, helpful: bool) -> str:  # noqa: A002 - the model-facing name
        """Say whether a remembered item helped."""
        return self._call("rate_memory", id=id, helpful=helpful)

    afind_skills = _async_twin("find_skills")
    aload_skill = _async_twin("load_skill")
    aread_skill_resource = _async_twin("read_skill_resource")
    asave_skill = _async_twin("save_skill")
    amemory_context = _async_twin("memory_context")
    arecord_experience = _async_twin("record_experience")
    arecall_experiences = _async_twin("recall_experiences")
    alearn_from_critique = _async_twin("learn_from_critique")
    aadd_guideline = _async_twin("add_guideline")
    asearch_guidelines = _async_twin("search_guidelines")
    arate_memory = _async_twin("rate_memory")


# --------------------------------------------------------------------------------------------
# Retriever
# --------------------------------------------------------------------------------------------

class SkillbankRetriever(BaseRetriever):
    """Skills, guidelines or experiences for a query, as `NodeWithScore`s.

    Node ids are the memory ids (``skill:<name>``, ``gl-…``, ``exp-…`` / ``lsn-…``); metadata
    has ``kind``, ``score`` and ``why`` (the last two are kept out of the LLM's view).
    """

    def __init__(self, bank: "Skillbank", kind: str = "skills", k: int = 5,
                 namespace: str | None = None, **kwargs: Any) -> None:
        # Not a pydantic model: attributes go in before the base initialiser runs.
        self.bank = bank
        self.kind = normalise_kind(kind)
        self.k = k
        self.namespace = namespace
        super().__init__(**kwargs)

    def _retrieve(self, query_bundle: QueryBundle) -> List[NodeWithScore]:
        hits = search_hits(self.bank, self.kind, query_bundle.query_str, self.k,
                           namespace=self.namespace)
        nodes = []
        for hit in hits:
            node_id, text, metadata = hit_document(self.kind, hit)
            node = TextNode(id_=node_id, text=text, metadata=metadata,
                            excluded_llm_metadata_keys=["score", "why"],
                            excluded_embed_metadata_keys=["score", "why"])
            nodes.append(NodeWithScore(node=node, score=float(hit.score)))
        return nodes

    async def _aretrieve(self, query_bundle: QueryBundle) -> List[NodeWithScore]:
        return await asyncio.to_thread(self._retrieve, query_bundle)


# --------------------------------------------------------------------------------------------
# Memory block
# --------------------------------------------------------------------------------------------

class SkillbankMemoryBlock(BaseMemoryBlock[str]):
    """skillbank as a LlamaIndex long-term memory block.

    ``Memory.from_defaults(session_id=..., memory_blocks=[SkillbankMemoryBlock(bank)])``.
    On every read the block returns ``bank.context_for(latest user message).text`` (computed once
    per session and user turn); it is never truncated by `Memory` (priority 0) since the
    context already fits ``budget_tokens``. With ``record=True``, messages flushed out of the
    short-term queue are recorded as an experience. A short run is rarely flushed: call
    ``await block.arecord_run(memory_or_messages, outcome=..., feedback=...)`` at its end.
    Memory errors are logged (last one in ``last_error``) unless ``raise_errors=True``.
    """

    model_config = ConfigDict(arbitrary_types_allowed=True)

    name: str = Field(default="skillbank", description="The name of the memory block.")
    description: Optional[str] = Field(
        default="Skills, guidelines and past experiences relevant to the current task.")
    priority: int = Field(default=0, description="0: never truncated (the context is budgeted).")
    bank: Any = Field(exclude=True, description="The skillbank.Skillbank to read and write.")
    budget_tokens: int = Field(default=1500, ge=0)
    record: bool = Field(default=True, description="Record flushed messages as experiences.")
    namespace: Optional[str] = None
    raise_errors: bool = False

    _cache: "OrderedDict[tuple, str]" = PrivateAttr(default_factory=OrderedDict)
    _last_error: Optional[BaseException] = PrivateAttr(default=None)

    def __init__(self, bank: "Skillbank | None" = None, **data: Any) -> None:
        if bank is not None:
            data["bank"] = bank
        super().__init__(**data)

    @property
    def last_error(self) -> Optional[BaseException]:
        return self._last_error

    def _failed(self, what: str, exc: BaseException) -> None:
        self._last_error = exc
        if self.raise_errors:
            raise exc
        log.warning("skillbank %s failed; going on without it: %s", what, exc,
                    exc_info=not isinstance(exc, SkillbankError))

    def _context_text(self, task: str) -> str:
        try:
            return self.bank.context_for(task, budget_tokens=self.budget_tokens,
                                         namespace=self.namespace).text
        except Exception as exc:  # noqa: BLE001 - memory must not break the agent
            self._failed("context", exc)
            return ""

    async def _aget(self, messages: Optional[List[ChatMessage]] = None,
                    **block_kwargs: Any) -> str:
        task, position = _latest_user_turn(messages)
        if not task:
            return ""
        key = (block_kwargs.get("session_id"), position, task)
        if key in self._cache:
            self._cache.move_to_end(key)
            return self._cache[key]
        text = await asyncio.to_thread(self._context_text, task)
        self._cache[key] = text
        while len(self._cache) > 64:
            self._cache.popitem(last=False)
        return text

    async def _aput(self, messages: List[ChatMessage]) -> None:
        if not self.record or not messages:
            return
        await asyncio.to_thread(self._record, list(messages), "unknown", None)

    def _record(self, messages: List[ChatMessage], outcome: str,
                feedback: Optional[str]) -> Optional[str]:
        task = next((_text(m).strip() for m in messages if _role(m) == "user"), "")
        answer = next((_text(m) for m in reversed(messages)
                       if _role(m) == "assistant" and _text(m).strip()), None)
        eid = None
        try:
            eid = self.bank.experiences.record_messages(
                messages, task=task or None, outcome=outcome,
                feedback=feedback, namespace=self.namespace)
        except Exception as exc:  # noqa: BLE001 - memory must not break the agent
            self._failed("recording", exc)
        if feedback:
            try:
                self.bank.guidelines.learn(feedback, task=task or None, response=answer,
                                           namespace=self.namespace)
            except Exception as exc:  # noqa: BLE001
                self._failed("learning from feedback", exc)
        return eid

    async def arecord_run(self, messages: Any, *, outcome: str = "unknown",
                          feedback: Optional[str] = None) -> Optional[str]:
        """Record a run as an experience, and learn guidelines from `feedback` if given.

        `messages` is a list of `ChatMessage`s or a `Memory`; the run is taken from the latest
        user message on. It is recorded whatever ``record`` says (that flag is about flushes).
        Returns the experience id, or None when recording failed (see ``last_error``).
        """
        if hasattr(messages, "aget_all"):
            messages = await messages.aget_all()
        messages = [m for m in messages if _role(m) != "system"]
        users = [i for i, m in enumerate(messages) if _role(m) == "user"]
        run = messages[users[-1]:] if users else messages
        if not run:
            return None
        return await asyncio.to_thread(self._record, run, outcome, feedback)


# --------------------------------------------------------------------------------------------
# Distiller
# --------------------------------------------------------------------------------------------

class LlamaIndexDistiller(LLMDistiller):
    """A `skillbank.distill.LLMDistiller` that asks a LlamaIndex LLM.

    ``Skillbank.open(root, distiller=LlamaIndexDistiller(OpenAI(model=...)))``. Prompts go through
    ``llm.complete(prompt).text`` / ``(await llm.acomplete(prompt)).text``; any failure falls back
    to `fallback` (the rule distiller by default).
    """

    def __init__(self, llm: Any, *, fallback: Distiller | None = None) -> None:
        self.llm = llm

        def complete(prompt: str) -> str:
            return llm.complete(prompt).text

        async def acomplete(prompt: str) -> str:
            return (await llm.acomplete(prompt)).text

        super().__init__(complete, fallback=fallback, acomplete=acomplete)
