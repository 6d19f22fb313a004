"""skillbank for LlamaIndex 0.14: tool spec, retriever, memory block, distiller.

A thin face over `skillbank.Skillbank`: every piece calls the facade and holds no memory logic.

* `SkillbankToolSpec(bank)` — the memory tools as a `BaseToolSpec`
  (``FunctionAgent(tools=SkillbankToolSpec(bank).to_tool_list(), ...)``), sync and async: a
  compact set by default, ``include="all"`` for all twelve.
* `SkillbankRetriever(bank, kind="skills" | "guidelines" | "experiences",
  similarity_top_k=5, filters=...)` — a `BaseRetriever` returning `NodeWithScore`s (node id =
  memory id; the LLM reads the content once, the metadata stays out of its view).
* Every piece takes ``namespace="{user_id}"`` like the LangChain middleware: filled from the
  workflow's Context store (``await ctx.store.set("user_id", ...)``) or the memory's session;
  no value: the same warning and no memory; a field that is not a plain name: an error at once.
* `SkillbankMemoryBlock(bank)` — a `BaseMemoryBlock` for
  ``Memory.from_defaults(memory_blocks=[...])``: the memory for the session's goal and latest
  request reaches the LLM inside ``<memory><skillbank-memory>…``; messages flushed out of the
  short-term queue are recorded as an experience, and ``await block.arecord_run(memory,
  outcome=..., feedback=..., error=...)`` records a whole run, failures too (and learns from
  feedback). With `ReActAgent`, give the agent a ``system_prompt`` (see the class docstring).
* `LlamaIndexDistiller(llm)` — a `skillbank.distill.LLMDistiller` whose model is any LlamaIndex
  LLM (``llm.complete`` / ``llm.acomplete``), for ``Skillbank.open(..., distiller=...)``. Named
  apart from `skillbank.distill.LLMDistiller`, which takes a plain ``prompt -> text`` callable.

Needs the `llamaindex` extra (`pip install -e '.[llamaindex]'` in a skillbank clone; it is on no
package index). Importing it does not import langchain; `import skillbank` does not import it.
"""

from __future__ import annotations

import asyncio
import contextlib
import inspect
import logging
import weakref
from collections import OrderedDict
from typing import TYPE_CHECKING, Any, List, Optional, Sequence

from skillbank.adapters._extras import require_extra

require_extra("llamaindex", ("llama_index.core",))  # an error naming the extra (hunt-wheel #2)
from llama_index.core.base.llms.types import ChatMessage, TextBlock  # noqa: E402 - after the check
from llama_index.core.memory import BaseMemoryBlock
from llama_index.core.tools import ToolMetadata
from llama_index.core.tools.tool_spec.base import BaseToolSpec
from pydantic import ConfigDict, Field, PrivateAttr

from skillbank.adapters._runs import (
    clip_task,
    closes_episode,
    failure_feedback,
    is_stop,
    open_goal,
    plain_messages,
    plan_run,
    recording_failed,
    stop_feedback,
    stop_record,
    submit,
    template_fields,
)
from skillbank.adapters._li_compose import SHOWN
from skillbank.adapters._li_namespace import (
    _RESOLVED, _SESSION, RunNamespaces, _namespace_failed, _shown_namespaces, resolve_namespace,
    step_memory, step_session)
from skillbank.adapters._li_queue import QueuedAtRecord, held_by_record, note_queue
from skillbank.adapters._li_retriever import SkillbankRetriever
from skillbank.adapters._warm import warm_up
from skillbank.adapters._agent_tools import gated as _gated, names_of as _names_of
from skillbank.adapters._tools import (
    COMPACT_TOOLS,
    TOOL_NAMES,
    run_tool,
    select_tools,
    tool_defs,
)
from skillbank.context import OPEN, unwrap
from skillbank.distill import Distiller, LLMDistiller
from skillbank.errors import InvalidInputError, SkillbankError
from skillbank.scope import narrowed, using

if TYPE_CHECKING:
    from skillbank.bank import Skillbank

__all__ = [
    "SkillbankToolSpec",
    "TOOL_NAMES",
    "COMPACT_TOOLS",
    "SkillbankRetriever",
    "SkillbankMemoryBlock",
    "LlamaIndexDistiller",
]

log = logging.getLogger("skillbank.adapters.llamaindex")
FACE = "llamaindex"

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
    async def method(self: "SkillbankToolSpec", *args: Any, **kwargs: Any) -> str:
        # The run's session: its open record is no past experience (hunt-threads #2, s. 32).
        session = _SESSION.set(await step_session())
        try:
            if template_fields(self.namespace):
                token = _RESOLVED.set(await resolve_namespace(self.namespace))
                try:
                    return await asyncio.to_thread(getattr(self, name), *args, **kwargs)
                finally:
                    _RESOLVED.reset(token)
            return await asyncio.to_thread(getattr(self, name), *args, **kwargs)
        finally:
            _SESSION.reset(session)

    method.__name__ = method.__qualname__ = f"a{name}"
    method.__doc__ = f"Async `{name}` (runs the facade call in a worker thread)."
    return method


def _sync_tool(definition: Any) -> Any:
    """The spec's method for one tool, made from its definition: the parameters are the
    fields of the schema the model is shown, so the two cannot drift apart (a hand-written
    `add_guideline` lacked `replaces`, and a model that used it got a TypeError)."""
    name = definition.name

    either = inspect.Parameter.POSITIONAL_OR_KEYWORD
    signature = inspect.Signature(
        [inspect.Parameter("self", either)]
        + [inspect.Parameter(field, either, annotation=info.annotation,
                             default=inspect.Parameter.empty if info.is_required() else None)
           for field, info in definition.args_schema.model_fields.items()])

    def method(self: "SkillbankToolSpec", *args: Any, **kwargs: Any) -> str:
        arguments = signature.bind(self, *args, **kwargs).arguments  # TypeError as Python's
        arguments.pop("self")
        return self._call(name, **arguments)  # None: the schema's default

    method.__name__ = method.__qualname__ = name
    method.__doc__ = definition.description
    method.__signature__ = signature  # type: ignore[attr-defined]
    return method


class SkillbankToolSpec(BaseToolSpec):
    """The skillbank memory tools for a LlamaIndex agent.

    ``SkillbankToolSpec(bank).to_tool_list()``: the compact set (`COMPACT_TOOLS`) by default,
    ``include="all"`` for every tool, or a list of names (see `TOOL_NAMES`);
    `namespace` scopes experiences and guidelines, and with `trusted=False` guidelines the model
    adds or learns arrive as `pending` until a person approves them. A template such as
    ``"{user_id}"`` is filled at each call from the workflow's Context store (``await
    ctx.store.set("user_id", "alice")``), as the LangChain middleware fills it from the run's
    config; a call with no value is refused (the model sees why), never served from a shared
    namespace. `reads=[team_block]` (the agent's other memory blocks, or their plain namespaces):
    the tools read those namespaces too: the searching tools search them beside `namespace`,
    and an id a team block shows can be rated (a vote on a
    rule the user may not change counts once, as the user's outside vote); writes stay in
    `namespace`. Called by an agent run (the async functions), ``memory_context`` and
    ``recall_experiences`` leave out the open record of the run's session (the `Memory` given
    to ``agent.run``), as the memory block does; a sync call outside a run cannot know the
    session. Each tool has a sync and an async function and a pydantic schema; a skillbank
    error is raised with a message written for the model, which agents turn into an error tool
    result.
    """

    spec_functions = [(name, f"a{name}") for name in TOOL_NAMES]

    def __init__(self, bank: "Skillbank", include: Sequence[str] | None = None,
                 namespace: str | None = None, *, trusted: bool = True,
                 available_tools: Sequence[Any] | None = None,
                 reads: Sequence[Any] = ()) -> None:
        template_fields(namespace)  # a malformed template fails here, not mid-run
        self.bank = bank
        self.namespace = namespace
        self.trusted = trusted
        # The agent's other memory blocks (or their namespaces): a team block beside the user's
        # showed ids "that can be rated", and this spec's rate_memory answered "no guideline".
        self.reads = _shown_namespaces(reads)
        # The agent's tools (names or LlamaIndex tools): find_skills leaves out skills whose
        # declared tools are not among them (#26). LlamaIndex does not tell a tool the agent's
        # other tools, so the caller passes the list it gives the agent. None: no gate.
        self.available_tools = _names_of(available_tools)
        self.spec_functions = [(d.name, f"a{d.name}") for d in select_tools(include)]

    def get_metadata_from_fn_name(self, fn_name: str,
                                  spec_functions: Any = None) -> Optional[ToolMetadata]:
        name = fn_name[1:] if fn_name.startswith("a") and fn_name[1:] in TOOL_NAMES else fn_name
        definition = tool_defs([name])[0]
        return ToolMetadata(name=definition.name, description=definition.description,
                            fn_schema=definition.args_schema)

    def _call(self, _tool: str, **kwargs: Any) -> str:
        arguments = {k: v for k, v in kwargs.items() if v is not None}
        namespace = self.namespace
        if template_fields(namespace):
            namespace = _RESOLVED.get()
            if namespace is None:  # a sync call outside an agent's step: no run to fill it from
                raise InvalidInputError(
                    f"namespace template {self.namespace!r} has no value outside an agent run: "
                    "call the async tool inside the workflow, with the field set in its Context")
        with _gated(self.available_tools):
            return run_tool(self.bank, _tool, arguments, namespace=namespace,
                            trusted=self.trusted, reads=self.reads, thread=_SESSION.get())



for _definition in tool_defs(TOOL_NAMES):  # one sync and one async method per tool
    setattr(SkillbankToolSpec, _definition.name, _sync_tool(_definition))
    setattr(SkillbankToolSpec, f"a{_definition.name}", _async_twin(_definition.name))
del _definition


# --------------------------------------------------------------------------------------------
# Memory block
# --------------------------------------------------------------------------------------------

class SkillbankMemoryBlock(BaseMemoryBlock[str]):
    """skillbank as a LlamaIndex long-term memory block.

    ``Memory.from_defaults(session_id=..., memory_blocks=[SkillbankMemoryBlock(bank)])``.
    On every read the block returns the memory for the session's goal (its first request, until
    `arecord_run` ends the episode with an outcome) plus the latest request, computed once per
    user turn of a run (a new run reads memory as it is now; a failed read is not kept; a
    search by keyword only says so); `Memory` puts it in ``<memory><skillbank-memory>…`` (the block's
    own delimiters are dropped: wrapped once). It is never truncated (priority 0) since it fits
    ``budget_tokens``. With ``record=True``, messages flushed out of the short-term queue are
    recorded as an experience in the background. A short run is rarely flushed: call
    ``await block.arecord_run(memory, outcome=..., feedback=...)`` at its end, or
    ``arecord_run(memory, error=exc)`` when the run raised.

    `ReActAgent` drops the first system message of its input (it writes its own ReAct prompt):
    without a ``system_prompt`` that message is this memory. Give the agent any
    ``system_prompt``, or build the memory with ``insert_method=InsertMethod.USER``.
    Memory errors are logged (last one in ``last_error``) unless ``raise_errors=True``.

    ``namespace="{user_id}"`` (any ``{field}``) is filled per run from the memory's session
    (``{session_id}``, and whatever is passed to ``memory.aget(...)``), then from the workflow's
    Context store (``await ctx.store.set("user_id", "alice")`` before ``agent.run(..., ctx=ctx)``).
    ``arecord_run`` after the run fills it from its ``ctx=``, else it files the run where that
    `Memory`'s run read. The session's goal and open record are kept per session *and*
    namespace: two users' Memories may share a session name. With no value the block warns as
    the LangChain middleware does and gives no memory (nothing read, nothing recorded), never
    another run's.
    """

    # A misspelt option is an error, not ignored: `namspace="{user_id}"` left every user on
    # the shared namespace, and `distill=True` (the middleware's option) did nothing.
    model_config = ConfigDict(arbitrary_types_allowed=True, extra="forbid")

    name: str = Field(default="skillbank-memory", description="The name of the memory block.")
    description: Optional[str] = Field(
        default="Skills, guidelines and past experiences relevant to the current task.")
    priority: int = Field(default=0, description="0: never truncated (the context is budgeted).")
    bank: Any = Field(exclude=True, description="The skillbank.Skillbank to read and write.")
    budget_tokens: int = Field(default=1500, ge=0)
    record: bool = Field(default=True, description="Record flushed messages as experiences.")
    namespace: Optional[str] = None
    raise_errors: bool = False
    trusted: bool = Field(default=True, description="False: the runs recorded and the feedback "
                          "learned wait as pending for a reviewer (input nobody vouches for).")
    background: bool = Field(default=True, description="Write off the agent's turn.")
    distill: bool = Field(default=False, description="Distill lessons from each run recorded "
                          "with an outcome (through the bank's distiller: an LLM one such as "
                          "LlamaIndexDistiller, else the rules), as the LangChain middleware's "
                          "distill=True does.")
    available_tools: Optional[List[str]] = Field(
        default=None, description="The agent's tool names (or tools): skills declaring tools "
        "not among them stay out of the memory (#26). None: no gate.")
    topic: Optional[str] = Field(
        default=None, description="The kind of task this agent does ('python', "
        "'customer-support'): its memory shows only that topic's guidelines. None: the "
        "family the task's best rules vote for.")

    # (session, namespace, turn) -> (the run's Memory, weakly, or None; (text, note)): see _aget
    _cache: "OrderedDict[tuple, tuple]" = PrivateAttr(default_factory=OrderedDict)
    # Per conversation, (session, namespace): a session name alone is no conversation, two
    # users' Memories may share it (hunt-llama #1, session 35).
    _goals: "OrderedDict[tuple, dict]" = PrivateAttr(default_factory=OrderedDict)
    _ran_with: RunNamespaces = PrivateAttr(default_factory=RunNamespaces)
    _last_error: Optional[BaseException] = PrivateAttr(default=None)
    _queued: QueuedAtRecord = PrivateAttr(default_factory=QueuedAtRecord)  # see `_li_queue`

    def __init__(self, bank: "Skillbank | None" = None, **data: Any) -> None:
        if bank is not None:
            data["bank"] = bank
        if data.get("available_tools") is not None:
            data["available_tools"] = _names_of(data["available_tools"])
        template_fields(data.get("namespace"))  # a malformed template fails here, not mid-run
        super().__init__(**data)
        warm_up(self.bank)  # the embedding model loads on a thread now, not in the first turn

    async def _namespace_for(self, session: Any, values: Optional[dict[str, Any]] = None, *,
                             ctx: Any = None, memory: Any = None, reading: bool = False
                             ) -> tuple[bool, Optional[str]]:
        """(ok, namespace) of a run: a template is filled from the session (`values`) and the
        Context store of the running workflow step, or of `ctx` when given. Filled in a step,
        it is noted for the step's `Memory`: `arecord_run(memory)` runs after the workflow,
        where no Context is current, and takes it from there. Never from the session's name:
        two users' Memories may share one, and another user's namespace filed alice's run
        under bob and gave a run with no user id alice's memory (hunt-llama #1 and #2,
        session 35). Not ok: warned, and no memory is used."""
        if not template_fields(self.namespace):
            return True, self.namespace
        try:
            namespace = await resolve_namespace(
                self.namespace, {"session_id": session, **(values or {})}, ctx=ctx)
        except InvalidInputError as exc:
            # Given `values`, the caller named the run: never an earlier run's (review 6).
            noted = self._ran_with.get(memory) if memory is not None and not values else None
            if noted is not None:
                return True, noted
            if memory is None:  # a read with no value: the run's later writes have none
                step = await step_memory(ctx)
                if step is None and reading:
                    self._ran_with.loose_read(session)
                self._ran_with.forget(step)  # (review 4, session 35)
            elif ctx is None and not values:  # arecord_run: no read of this Memory here
                exc = InvalidInputError(
                    f"{exc}; to record a run after it, pass the values its reads had: "
                    "arecord_run(memory, ctx=ctx) with the run's Context, or outside a "
                    "workflow arecord_run(memory, values={\"user_id\": ...})")
            self._last_error = exc
            if self.raise_errors:
                raise
            _namespace_failed(exc)
            return False, None
        if memory is None:  # a read or a flush inside the run: the run's own Memory
            memory = await step_memory(ctx)
            if memory is None and reading:  # a custom loop's read: no Memory to note
                self._ran_with.loose_read(session)  # (review 6, session 35)
        if memory is not None and getattr(memory, "session_id", None) == session:
            self._ran_with.note(memory, namespace)
        return True, namespace

    def __repr_args__(self) -> Any:
        yield "bank", self.bank
        yield from ((k, v) for k, v in super().__repr_args__() if k != "bank")

    @property
    def last_error(self) -> Optional[BaseException]:
        return self._last_error

    def _failed(self, what: str, exc: BaseException, warn: bool = True) -> None:
        self._last_error = exc
        if self.raise_errors:
            raise exc
        if warn:  # a failed recording is counted and warned once (skillbank.recording)
            log.warning("skillbank %s failed; going on without it: %s", what, exc,
                        exc_info=not isinstance(exc, SkillbankError))

    def _context_text(self, query: str, namespace: Optional[str] = None,
                      thread: Optional[str] = None) -> Optional[tuple[str, str]]:
        """(memory text, what the read may have missed), or None when the read failed: a
        failure is never cached as "no memory" (hunt-lxteam #2, session 37)."""
        # The session's own record is never shown back to it as a past experience.
        extra = {"thread": thread} if thread else {}
        try:
            with using(narrowed(namespace, face=FACE)), _gated(self.available_tools):
                ctx = self.bank.context_for(query, budget_tokens=self.budget_tokens,
                                            namespace=namespace, topic=self.topic, **extra)
        except Exception as exc:  # noqa: BLE001 - memory must not break the agent
            self._failed("context", exc)
            return None
        # The note ("the Chroma server does not answer; … keyword only") rides along, as the
        # memory_context tool says it: the agent can tell its memory may be partial
        # (hunt-lxteam #6, session 37).
        return ctx.text, ctx.note

    def _plan(self, session: Any, namespace: Optional[str], request: str,
              task: Optional[str] = None) -> dict[str, Any]:
        """This turn's goal and query; the goal stays for the conversation until an outcome."""
        plan = plan_run(self._goals.get((session, namespace)), request, task)
        self._set_goal(session, namespace, plan["goal"], True)
        return plan

    def _set_goal(self, session: Any, namespace: Optional[str], goal: str, open_: bool) -> None:
        self._goals[(session, namespace)] = {"goal": goal, "open": open_}
        self._goals.move_to_end((session, namespace))
        while len(self._goals) > 1024:
            self._goals.popitem(last=False)

    async def _recall_goal(self, session: Any, namespace: Optional[str]) -> None:
        """A session this process knows nothing of (restarted with a saved Memory) takes its
        goal from the bank's open record of the conversation: its "yes, go ahead" was recorded
        as a task of its own, the goal's record left open for good (agents hunt, session 18)."""
        thread = _thread(session)
        if thread is None or (session, namespace) in self._goals:
            return
        try:
            # In the worker thread, `bank.experiences` included: the property syncs another
            # process's writes first, which may wait for the team's write lock; evaluated as
            # `to_thread`'s argument it ran on the event loop and froze it (~5 s a new session
            # while PostgreSQL was down; hunt-agents-team #2, session 31).
            goal = await asyncio.to_thread(open_goal, self.bank, thread, namespace,
                                           trusted=self.trusted, face=FACE)
        except Exception as exc:  # noqa: BLE001 - memory must not break the agent
            self._failed("recalling the session's goal", exc, warn=False)
            return
        if goal is not None:
            self._set_goal(session, namespace, goal["goal"], goal["open"])

    async def _aget(self, messages: Optional[List[ChatMessage]] = None,
                    **block_kwargs: Any) -> str:
        request, position = _latest_user_turn(messages)
        if not request:
            return ""
        session = block_kwargs.get("session_id")
        ok, namespace = await self._namespace_for(session, block_kwargs, reading=True)
        if not ok:
            return ""  # no memory rather than another user's (warned)
        # One lookup per user turn of one run: `FunctionAgent` reads memory before every LLM
        # call of its tool loop. The turn is its conversation so far, and the run its `Memory`:
        # keyed on the session and request alone, a new Memory (a new run) with the same
        # question was served the first run's memory for good, rules learned since never
        # shown (hunt-lxteam #1, session 37).
        key = (session, namespace, position, request,
               hash(tuple(_key(m) for m in (messages or [])[:position])))
        memory = await step_memory()
        found = self._cache.get(key)
        if found is not None and _same_run(found[0], memory):
            with contextlib.suppress(KeyError):  # cleared by a recording meanwhile
                self._cache.move_to_end(key)
            read: Optional[tuple[str, str]] = found[1]
        else:
            await self._recall_goal(session, namespace)
            plan = self._plan(session, namespace, request, block_kwargs.get("skillbank_task"))
            read = await asyncio.to_thread(self._context_text, plan["query"], namespace,
                                           _thread(session))
            if read is not None and memory is not None:  # a failed read is retried, never
                self._cache[key] = (_run_ref(memory), read)  # kept as ""
                with contextlib.suppress(KeyError):  # a recording's clear on its thread
                    while len(self._cache) > 64:
                        self._cache.popitem(last=False)
        text, note = read or ("", "")
        # Another skillbank block of this Memory asked before this one shows its items once.
        text = SHOWN.compose(self, session, messages, text)
        # Memory wraps the block in <{name}>: with our own name that is the one wrapper needed.
        text = unwrap(text) if self.name == OPEN.strip("<>") else text
        return "\n\n".join(part for part in (text, note) if part)

    async def _aput(self, messages: List[ChatMessage]) -> None:
        if not self.record or not messages:
            return
        session = next((m.additional_kwargs.get("session_id") for m in messages
                        if m.additional_kwargs.get("session_id") is not None), None)
        ok, namespace = await self._namespace_for(session)
        if not ok:
            return
        # Not turns a run of this conversation (the session in this namespace) recorded; with
        # no note here (a block per request, a restart), told by the record (review 1 #1, s. 38).
        if not self._queued.has(_conversation(session, namespace)):
            messages = await held_by_record(self.bank, await step_memory(), _thread(session),
                                            namespace, messages, trusted=self.trusted, face=FACE)
        messages = self._queued.unrecorded(_conversation(session, namespace), messages, _key)
        task = next((_text(m).strip() for m in messages if _role(m) == "user"), "")
        if task:
            # Flushed turns are the session's oldest: they belong to its record (thread), under
            # its goal, which they open when the session has none yet; a later arecord_run of
            # the session then updates that one record instead of starting a second one.
            await self._recall_goal(session, namespace)
            state = self._goals.get((session, namespace)) if session is not None else None
            plan = plan_run(state, task)
            if session is not None and state is None:
                self._set_goal(session, namespace, plan["goal"], True)
            # Handing a job over waits when the writer's queue is full: never on the event loop.
            await asyncio.to_thread(
                submit, self.bank, self._record, list(messages), plan["goal"], "unknown", None,
                None, namespace, _thread(session), bool(plan["followup"]),
                background=self.background, what="recording flushed messages")

    def _record(self, messages: List[ChatMessage], task: str, outcome: str,
                feedback: Optional[str], learn: Optional[str],
                namespace: Optional[str] = None, thread: Optional[str] = None,
                followup: bool = False) -> Optional[str]:
        answer = next((_text(m) for m in reversed(messages)
                       if _role(m) == "assistant" and _text(m).strip()), None)
        eid = None
        try:  # a user id that is no namespace ("alice ", 200 characters): no memory, logged
            scope = narrowed(namespace, trusted=self.trusted, face=FACE)
        except Exception as exc:  # noqa: BLE001 - memory must not break the agent
            recording_failed(self.bank, "recording a run", exc)
            self._failed("recording", exc, warn=False)
            return None
        try:
            with using(scope):
                # A session's turns update one experience (steps appended, outcome when given).
                extra: dict[str, Any] = {"thread": thread, "followup": followup} if thread else {}
                eid = self.bank.experiences.record_messages(
                    plain_messages(messages), task=task, outcome=outcome, feedback=feedback,
                    namespace=namespace, distill=self.distill and outcome != "unknown",
                    trusted=self.trusted, **extra)
        except Exception as exc:  # noqa: BLE001 - memory must not break the agent
            recording_failed(self.bank, "recording a run", exc)
            self._failed("recording", exc, warn=False)
        if learn:
            try:
                with using(scope):
                    self.bank.guidelines.learn(learn, task=task, response=answer,
                                               namespace=namespace, trusted=self.trusted)
            except Exception as exc:  # noqa: BLE001
                recording_failed(self.bank, "learning from feedback", exc)
                self._failed("learning from feedback", exc, warn=False)
        # What this block just recorded or learned is memory the next read must show, also
        # to a read no Memory names (a custom loop's `memory.aget`; hunt-lxteam #1, s. 37).
        self._cache.clear()
        return eid

    async def arecord_run(self, messages: Any, *, outcome: str = "unknown",
                          feedback: Optional[str] = None, error: Optional[BaseException] = None,
                          task: Optional[str] = None, wait: bool = True,
                          ctx: Any = None, values: Optional[dict[str, Any]] = None
                          ) -> Optional[str]:
        """Record a run as an experience, and learn guidelines from `feedback` if given.

        `messages` is a list of `ChatMessage`s or a `Memory`; the run is taken from the latest
        user message on. Its task is `task`, else the session's goal (its first request until
        an outcome ends the episode), so "yes, go ahead" is recorded as a step of the task it
        answers. `error` (the exception a failed run raised) records it as a failure with the
        exception's type and message as feedback; with the run's `ctx` (``agent.run(...,
        ctx=ctx)``, or ``handler.ctx``) also the tool calls it made before it raised, which
        `FunctionAgent` holds in its scratchpad until a run ends. A namespace template is
        filled from `values` (what a custom loop's ``memory.aget(user_id=...)`` was given) and
        `ctx`'s store, else it is the one the `Memory`'s run read with in a workflow step (a
        list of messages without either, or a run whose read had no value: none, warned,
        nothing recorded). A stop as `error`
        (``asyncio.CancelledError``, ``KeyboardInterrupt``, the ``WorkflowCancelledByUser`` of
        ``handler.cancel_run()``) is no failure and no outcome: the
        run is recorded with a last step naming it and, in a session, its episode goes on
        (without a session: ``partial``). An outcome of success, failure or partial ends the
        session's episode. It is recorded whatever ``record`` says
        (that flag is about flushes). With ``wait=False`` the write happens in the background
        and None is returned; otherwise the experience id, or None when recording failed (see
        ``last_error``).
        """
        session = getattr(messages, "session_id", None)
        ok, namespace = await self._namespace_for(session, values, ctx=ctx, memory=messages)
        if not ok:
            return None  # no value for the template: nothing recorded (warned)
        memory = messages
        if hasattr(messages, "aget_all"):
            messages = await messages.aget_all()
        messages = [m for m in messages if _role(m) != "system"]
        users = [i for i, m in enumerate(messages) if _role(m) == "user"]
        start = users[-1] if users else 0
        run = messages[start:]
        if not run:
            return None
        request = _text(run[0]).strip() if users else ""
        await self._recall_goal(session, namespace)
        state = self._goals.get((session, namespace)) if session is not None else None
        plan = plan_run(state, request, task)
        if plan["followup"] and task is None:
            # The episode's turns still in the queue, not only the latest: with one
            # arecord_run at the end, the turns neither flushed nor last were lost (agents
            # hunt, session 18). From its goal's message when the queue still holds it, else
            # the whole queue (the goal was flushed, and no outcome closed an episode since:
            # a later goal would be queued); turns the record holds already are not appended
            # again (experiences.threads). An explicit `task` names no message: latest only.
            start = max((i for i in users if _is_goal(messages[i], plan["goal"])),
                        default=0)
            run = messages[start:]
        feedback_text: Optional[str] = feedback
        if error is not None:
            if is_stop(error):
                # A stop (cancelled, Ctrl-C) is no outcome: in a session its episode goes on,
                # as in the LangChain middleware (`_runs.stop_record`; hunt-threads #3, s. 32).
                said = stop_feedback(error)
                outcome, feedback_text = stop_record(error, outcome=outcome, feedback=feedback,
                                                     thread=_thread(session))
            else:
                said = failure_feedback(error)
                outcome, feedback_text = "failure", failure_feedback(error, feedback)
            # The failure is a step of its own, as the LangChain middleware records it: as an
            # assistant message it was the run's "final answer" in the record and in later
            # memory blocks ("Produced: (the run failed: ...)", hunt-agents #5, session 29).
            run = [*run, *await _unfinished(ctx),
                   ChatMessage(role="tool", content=f"error: {said}",
                               additional_kwargs={"tool_call_id": "skillbank-run-error",
                                                  "name": "agent run"})]
        # What Memory flushes later is not new, whether or not an outcome closes the episode:
        # noted only at a close, an open episode's flushes were told by text and stored turns
        # two and three times (hunt-threads #2, session 38).
        await note_queue(self._queued, memory, _conversation(session, namespace), messages,
                         start, _key)
        if (plan["followup"] or not users) and not (
                run and _role(run[0]) == "user" and _is_goal(run[0], plan["goal"])):
            run = [ChatMessage(role="user", content=plan["goal"]), *run]
        if session is not None:
            self._set_goal(session, namespace, plan["goal"], not closes_episode(outcome))
        args = (run, plan["goal"] or "(no task text)", outcome, feedback_text, feedback,
                namespace, _thread(session), bool(plan["followup"]))
        if not self.background:  # in a worker thread: never block the event loop
            return await asyncio.to_thread(self._record, *args)
        future = await asyncio.to_thread(submit, self.bank, self._record, *args,
                                         what="recording a run")  # a full queue waits there
        return await asyncio.wrap_future(future) if wait else None


async def _unfinished(ctx: Any) -> list[ChatMessage]:
    """The messages a failed run made and never put in `Memory`: `FunctionAgent` keeps its tool
    calls and results in the Context's scratchpad until the run ends, so a run that raised after
    issuing a refund was recorded as its user message and the error alone."""
    try:
        pad = await ctx.store.get("scratchpad", default=[]) if ctx is not None else []
    except Exception:  # noqa: BLE001 - another workflow's store: no steps from there
        return []
    return [m for m in pad or [] if isinstance(m, ChatMessage)]


def _key(message: ChatMessage) -> tuple[str, str]:
    return _role(message), _text(message)


def _is_goal(message: Any, goal: str) -> bool:
    """Whether `message` is the one the goal was formed from (a long one's goal is its head)."""
    return clip_task(_text(message).strip()) == goal


def _conversation(session: Any, namespace: Optional[str]) -> Optional[tuple]:
    """A session of one namespace (None without a session): what the block keeps state per."""
    return None if session is None else (session, namespace)


def _run_ref(memory: Any) -> Any:
    """The run a cached read belongs to: its `Memory`, held weakly (None outside a step)."""
    if memory is None:
        return None
    try:
        return weakref.ref(memory)
    except TypeError:  # cannot be referenced weakly: a read never served from the cache
        return lambda: _NO_RUN


_NO_RUN = object()


def _same_run(ref: Any, memory: Any) -> bool:
    """Whether a read cached with `ref` belongs to this read's run (`memory`): a Memory gone
    since may have left its id to the new one, the weak reference not. Outside a workflow step
    (`memory` None: a custom loop's `aget`) no read is the same run's: served from the cache, a
    new run with the same question was shown the first run's memory (review 1, session 37)."""
    return memory is not None and ref is not None and ref() is memory


def _thread(session: Any) -> Optional[str]:
    """The conversation a session is, as skillbank keys it (None without a session)."""
    return str(session) if session is not None and str(session).strip() else None


# --------------------------------------------------------------------------------------------
# Distiller
# --------------------------------------------------------------------------------------------

class LlamaIndexDistiller(LLMDistiller):
    """A `skillbank.distill.LLMDistiller` that asks a LlamaIndex LLM.

    ``Skillbank.open(root, distiller=LlamaIndexDistiller(OpenAI(model=...)))``. Prompts go through
    ``llm.complete(prompt).text`` / ``(await llm.acomplete(prompt)).text``; any failure falls back
    to `fallback` (the rule distiller by default).
    """

    def __init__(self, llm: Any, *, fallback: Distiller | None = None,
                 timeout: float | None = -1) -> None:
        self.llm = llm

        def complete(prompt: str) -> str:
            return llm.complete(prompt).text

        async def acomplete(prompt: str) -> str:
            return (await llm.acomplete(prompt)).text

        super().__init__(complete, fallback=fallback, acomplete=acomplete, timeout=timeout)
