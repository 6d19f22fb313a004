"""`SkillbankMiddleware`: memory for a LangChain 1.x `create_agent` agent.

Imported from `skillbank.adapters.langchain`. A thin face: what the task is, where memory goes
and when a run is over is decided here; every read and write goes through the facade
(`bank.context_for`, `bank.experiences.record_messages`, `bank.guidelines.learn`), and writes go
through the bank's background writer so the agent's turn does not wait for them.

How a run goes (see `skillbank.adapters._runs` for the rules):

* ``before_agent``: the run's request is the latest human message; its goal is the thread's
  open goal (a follow-up), an explicit ``skillbank_task``, or the request; the namespace
  template is filled from ``configurable`` and the runtime context. A thread whose state has
  no goal (its checkpointer died with its process, or another worker has its own) takes it
  from the thread's open episode in the bank, as the LlamaIndex block does (`open_goal`).
* ``wrap_model_call``: the memory for goal + request is computed once per run and appended to
  the system message of every model call, also after a summary replaced the messages.
* ``wrap_model_call`` / ``wrap_tool_call`` (and async twins): an exception from the model or a
  tool records the run as a failure (type and message as feedback, the steps up to it) before
  it propagates; ``after_agent`` never runs for such a run. Interrupts are not failures. A run
  cancelled or interrupted (Ctrl-C) mid-call is recorded as stopped (no outcome: in a thread
  its episode goes on, `_runs.stop_record`; without one, partial), and one
  whose last step before ``recursion_limit`` returns as the failure LangGraph raises next
  (`skillbank.adapters._lc_stops`).
* ``before_agent`` also records a run of this process that stopped between two steps (a stream
  left early) when its thread's next request starts: no hook runs at such a stop. Without a
  thread nothing goes on with such a run, and it is not recorded (docs/api.md says so;
  hunt-async #5, session 34).
* ``after_agent``: the run is recorded under its goal and feedback is learned; an outcome
  (success / failure / partial) ends the episode.
"""

from __future__ import annotations

import asyncio
import collections
import contextlib
import dataclasses
import logging
import threading
import uuid
from typing import TYPE_CHECKING, Annotated, Any, Callable, Sequence

from langchain.agents.middleware import AgentMiddleware, AgentState, ModelRequest, ModelResponse
from langchain.agents.middleware.types import (
    ExtendedModelResponse,
    OmitFromInput,
    PrivateStateAttr,
)
from langchain_core.messages import AIMessage, HumanMessage, SystemMessage, ToolMessage
from langgraph.types import Command
from typing_extensions import NotRequired

from skillbank.adapters._lc_common import (current_context, is_human, is_summary, run_config,
                                          skillbank_tools, text_of)
from skillbank.adapters._runs import (
    clip_task,
    closes_episode,
    context_value,
    failure_feedback,
    fill_namespace,
    open_goal,
    plain_messages,
    plan_run,
    recording_failed,
    stop_feedback,
    stop_record,
    submit,
    template_fields,
)
from skillbank.adapters._lc_stops import (LastStepCalls, RunAbandoned, is_stop, messages_of,
                                          open_tool_calls, recursion_limit_error, steps_left)
from skillbank.adapters._tools import MIDDLEWARE_TOOLS
from skillbank.adapters._warm import warm_up
from skillbank.memories.skills.dependencies import agent_tools
from skillbank.scope import Scope, narrowed, using
from skillbank.errors import InvalidInputError, SkillbankError

if TYPE_CHECKING:
    from skillbank.bank import Skillbank

log = logging.getLogger("skillbank.adapters.langchain")

#: Exceptions that pause or steer a graph (interrupts, parent commands): never a failure.
try:
    from langgraph.errors import GraphBubbleUp as _Bubble
except ImportError:  # pragma: no cover - every supported langgraph has it
    _Bubble = ()  # type: ignore[assignment]


def _merge(left: dict[str, Any] | None, right: dict[str, Any] | None) -> dict[str, Any]:
    """Per-instance private state: each middleware instance replaces only its own entry."""
    return {**(left or {}), **(right or {})}


def _last(left: Any, right: Any) -> Any:
    """Last write wins, also when two instances write in one step."""
    return right


def _shown(left: list[str] | None, right: list[str] | None) -> list[str]:
    """The ids every instance showed in this run, in order, each once: instances (a team's
    memory and a personal one) write theirs in the same step, and one write must not replace
    the other's. None (each instance's ``before_agent``) starts a run with none."""
    if right is None:
        return []
    return list(dict.fromkeys([*(left or []), *right]))


class SkillbankState(AgentState):
    """Agent state with the keys `SkillbankMiddleware` reads and writes.

    Input: ``outcome`` (success / failure / partial / unknown) and ``feedback`` (a critique to
    learn from) describe the run being recorded; ``skillbank_task`` names the thread's goal
    explicitly. Output: ``skillbank_memory_ids`` (the ids the model was shown in this run, by
    every instance, for `bank.rate`) and, with ``background=False``,
    ``skillbank_experience_id``.
    """

    outcome: NotRequired[str | None]
    feedback: NotRequired[str | None]
    skillbank_task: NotRequired[str | None]
    skillbank: NotRequired[Annotated[dict[str, Any], PrivateStateAttr, _merge]]
    skillbank_memory_ids: NotRequired[Annotated[list[str], OmitFromInput, _shown]]
    skillbank_experience_id: NotRequired[Annotated[str | None, OmitFromInput, _last]]


def _with_memory(request: ModelRequest, text: str) -> tuple[ModelRequest, str]:
    """The request with `text` appended to its system message (or as the system message), and
    the block as the model sees it.

    Another SkillbankMiddleware may have put its block there already (a team memory and a
    personal one): items it shows are not repeated (`skillbank.context.without_shown`)."""
    if not text:
        return request, ""
    current = request.system_message
    if current is None:
        return request.override(system_message=SystemMessage(content=text)), text
    from skillbank.context import without_shown

    text = without_shown(text, current.content if isinstance(current.content, str) else "\n".join(
        str(p.get("text", "")) if isinstance(p, dict) else str(p) for p in current.content))
    if not text:
        return request, ""
    if isinstance(current.content, str):
        content: Any = f"{current.content.rstrip()}\n\n{text}" if current.content.strip() else text
    else:
        content = [*current.content, {"type": "text", "text": text}]
    return request.override(system_message=current.model_copy(update={"content": content})), text


def _ids_shown(entry: dict[str, Any], shown: str) -> list[str]:
    """The block's ids the model was shown: those `without_shown` left in. An item another
    instance showed already was cut from the block but its id stayed in
    ``skillbank_memory_ids``, which promises the ids the model saw (hunt-agents #6, session 29)."""
    if not shown:
        return []
    text = entry.get("text") or ""
    return [i for i in entry.get("ids") or [] if f"[{i}]" not in text or f"[{i}]" in shown]


def _request_of(messages: Sequence[Any]) -> Any:
    """The run's request: the latest human message that is not a summary (or None)."""
    return next((m for m in reversed(list(messages)) if is_human(m) and not is_summary(m)), None)


def _run_messages(messages: Sequence[Any], request_id: str | None) -> list[Any]:
    """This run's messages: from its request on (or, if a summary replaced it, from the
    summary on), system messages left out."""
    items = [m for m in messages if getattr(m, "type", None) != "system"]
    start = next((i for i, m in enumerate(items) if request_id and getattr(m, "id", None)
                  == request_id), None)
    if start is None:
        start = next((i for i, m in enumerate(items) if is_summary(m)), None)
    if start is None:
        start = max((i for i, m in enumerate(items) if is_human(m)), default=0)
    return items[start:]


class SkillbankMiddleware(AgentMiddleware):
    """Memory for a `create_agent` agent: context in, every run (failures too) recorded.

    ``create_agent(model, tools, middleware=[SkillbankMiddleware(bank)])``. Options:

    * ``budget_tokens`` for the injected block; ``record`` to record runs as experiences;
      ``learn`` to learn the run's ``feedback`` as guidelines (by default as ``record``: an
      instance with ``record=False``, a team's shared memory beside a user's, writes nothing,
      so one user's critique does not become a rule of the whole team).
    * ``namespace`` scopes experiences and guidelines; a template such as ``"{user_id}"`` is
      filled per run from ``config["configurable"]`` and the runtime context. Several
      instances (a team and a user namespace) may serve one agent; each needs its own ``name``
      (by default derived from the namespace).
    * ``tools``: True for a compact set (find_skills, load_skill, learn_from_critique,
      rate_memory), ``"all"`` for every tool, or a list of names.
    * ``background`` (default True): recording, learning and distilling run on the bank's
      background writer, durable after ``bank.flush()`` / ``bank.close()``; False writes in
      the turn and puts ``skillbank_experience_id`` in the state.
    * ``raise_errors``: let memory errors stop the run (by default they are logged and the
      agent goes on without memory; the last one is in ``last_error``).
    * ``trusted=False``: runs driven by input nobody vouches for (a public chat): the runs it
      records, the feedback it learns and its tools' writes wait as pending for a reviewer.

    Put it first in ``middleware=[...]`` so retries of other middleware happen inside it: a
    failure it sees is a failure of the run.
    """

    state_schema = SkillbankState

    def __init__(self, bank: "Skillbank", budget_tokens: int = 1500, record: bool = True,
                 namespace: str | None = None, tools: bool | str | Sequence[str] = False, *,
                 trusted: bool = True, raise_errors: bool = False, background: bool = True,
                 distill: bool = False, name: str | None = None,
                 topic: str | None = None, learn: bool | None = None) -> None:
        super().__init__()
        self.bank = bank
        self.topic = topic  # the kind of task: only its guidelines (context_for's topic)
        self.budget_tokens = budget_tokens
        self.record = record
        self.learn_feedback = record if learn is None else learn
        self.namespace = namespace
        self.raise_errors = raise_errors
        # Untrusted (a run driven by input nobody vouches for): its tools, and the runs and
        # feedback it records, wait for a reviewer. Only the tools were untrusted: the run's
        # feedback became an active rule, unreviewed (agents hunt, session 18).
        self.trusted = trusted
        self.background = background
        self.distill = distill
        self.last_error: BaseException | None = None
        self.last_experience_id: str | None = None
        # The tool names find_skills gates on (#26) are the run's own, kept in its state: an
        # attribute here was the last model call's of any run, and one instance serving two
        # agents at once gated a run's find_skills on the other agent's tools (hunt-agents #3).
        self._last_step_calls = LastStepCalls()
        #: Runs recorded as failures by an exception: it leaves the graph's state as it was
        #: before the run (its episode still "open"), so the thread's next request read as a
        #: follow-up of the failed goal and was recorded under it, even as a success.
        self._failed_runs: collections.deque[str] = collections.deque(maxlen=4096)
        self._claiming = threading.Lock()  # a run is claimed in `_failed_runs` before its write
        #: Of those, the runs stopped with no outcome in a thread: their episode goes on, so the
        #: thread's next request is a follow-up of their goal (`_runs.stop_record`).
        self._stopped_runs: collections.deque[str] = collections.deque(maxlen=4096)
        #: Runs this process started that have neither finished nor been recorded: a stream
        #: left early stops a run between two steps, where no hook runs (hunt-agents #2); its
        #: thread's next request records it. Only runs started here: one that raised was
        #: recorded by the process it raised in, and recording it again after a restart or on
        #: another worker would file it twice.
        self._unfinished: collections.OrderedDict[str, None] = collections.OrderedDict()
        template_fields(namespace)  # a malformed template fails here, not mid-run
        warm_up(bank)  # the embedding model loads on a thread now, not in the first turn
        self._name = name or (f"SkillbankMiddleware[{namespace}]" if namespace
                              else "SkillbankMiddleware")
        self.tools = []
        if tools:
            include = list(MIDDLEWARE_TOOLS) if tools is True else tools
            self.tools = skillbank_tools(bank, include=include, trusted=trusted,
                                         namespace=self._tool_namespace)

    @property
    def name(self) -> str:
        return self._name

    def __repr__(self) -> str:
        return (f"SkillbankMiddleware(bank={self.bank!r}, name={self._name!r}, "
                f"namespace={self.namespace!r}, tools={[t.name for t in self.tools]})")

    # -- errors -----------------------------------------------------------------------------
    def _failed(self, what: str, exc: BaseException) -> None:
        self.last_error = exc
        if self.raise_errors:
            raise exc
        log.warning("skillbank %s failed; the agent goes on without it: %s", what, exc,
                    exc_info=not isinstance(exc, SkillbankError))

    # -- the run ------------------------------------------------------------------------------
    def _mine(self, state: Any) -> dict[str, Any]:
        shared = (state or {}).get("skillbank") or {}
        return dict(shared.get(self._name) or {})

    def _tool_namespace(self) -> str | None:
        return fill_namespace(self.namespace, run_config(), current_context())

    def _plan(self, state: Any, context: Any) -> dict[str, Any]:
        """Work out this run's goal, query and namespace (see the module docstring)."""
        config = run_config()
        messages = list((state or {}).get("messages") or [])
        request = _request_of(messages)
        explicit = ((state or {}).get("skillbank_task") or config.get("skillbank_task")
                    or context_value(context, "skillbank_task"))
        mine = self._mine(state)
        if mine.get("run") and mine["run"].get("key") not in self._stopped_runs:
            # A run the state still holds never reached after_agent: it raised (recorded as a
            # failure, which ends the episode) or its process died. Judged from the state the
            # checkpointer keeps, not only this process's memory of failures: after a restart,
            # or on another worker of the same checkpointer, the thread's next request was filed
            # under the failed goal, as a success (agents hunt, session 18). A run this process
            # recorded as stopped with no outcome left its episode open (`_on_failure`).
            mine["open"] = False
        thread = config.get("thread_id")  # one conversation = one experience (its turns update it)
        thread = str(thread) if thread else None
        namespace, skip = None, False
        try:
            namespace = fill_namespace(self.namespace, config, context)
        except SkillbankError as exc:
            skip = True  # no memory rather than another user's memory
            self._failed("namespace", exc)
        if not mine.get("goal") and not explicit and not skip:
            mine = self._open_goal(thread, namespace) or mine
        run = plan_run(mine, text_of(request) if request is not None else "",
                       str(explicit) if explicit else None)
        run.update(key=uuid.uuid4().hex, request_id=getattr(request, "id", None), context=None,
                   skip=skip, namespace=namespace, thread=thread,
                   outcome=(state or {}).get("outcome"), feedback=(state or {}).get("feedback"))
        return run

    def _open_goal(self, thread: str | None, namespace: str | None) -> dict[str, Any] | None:
        """The thread's open episode in the bank, for a state with no goal: the thread picked
        up by a new process (a checkpointer that died with the old one) or by a second worker
        with its own checkpointer split into new records, the first follow-up its own task and
        the outcome on "done, thanks" (hunt-threads #1, session 32). None when the lookup
        fails: the request is the goal, as before."""
        try:
            return open_goal(self.bank, thread, namespace, trusted=self.trusted,
                             face="langchain")
        except Exception as exc:  # noqa: BLE001 - memory must not break the agent
            self.last_error = exc
            log.debug("skillbank: recalling the thread's goal failed", exc_info=True)
            return None

    def _start(self, state: Any, runtime: Any) -> dict[str, Any]:
        stale = self._mine(state).get("run")
        if stale and stale.get("key") in self._unfinished:
            self._record_abandoned(state, stale)
        run = self._plan(state, getattr(runtime, "context", None))
        entry = {"goal": run["goal"], "open": True, "run": run}
        self._unfinished[run["key"]] = None
        while len(self._unfinished) > 4096:
            self._unfinished.popitem(last=False)
        return {"skillbank": {self._name: entry}, "skillbank_memory_ids": None}

    def _record_abandoned(self, state: Any, run: dict[str, Any]) -> None:
        """Record a run of this process that stopped between two steps (its stream was left
        early), with the steps the thread's state holds, up to the request now starting."""
        messages = list((state or {}).get("messages") or [])
        request = _request_of(messages)
        if request is not None and getattr(request, "id", None) != run.get("request_id"):
            messages = messages[:next(i for i, m in enumerate(messages) if m is request)]
        # The outcome and feedback in the state are the new request's, not the abandoned run's.
        self._on_failure({**state, "messages": messages, "outcome": None, "feedback": None}, run,
                         RunAbandoned(), step="agent loop")

    def before_agent(self, state: Any, runtime: Any) -> dict[str, Any] | None:
        return self._start(state, runtime)

    async def abefore_agent(self, state: Any, runtime: Any) -> dict[str, Any] | None:
        # In a worker thread: recording an abandoned run may wait for the writer's queue.
        return await asyncio.to_thread(self._start, state, runtime)

    def _current_run(self, state: Any, runtime: Any) -> dict[str, Any]:
        run = self._mine(state).get("run")
        if not run:  # before_agent did not run for this state (e.g. an older checkpoint)
            run = self._plan(state, getattr(runtime, "context", None))
        return dict(run)

    # -- context before each model call ---------------------------------------------------------
    def _compute(self, run: dict[str, Any]) -> dict[str, Any] | None:
        try:
            # The run's namespace ("{user_id}") is its principal's alone (skillbank.scope).
            with using(narrowed(run.get("namespace"), trusted=self.trusted, face="langchain")):
                # The thread's own record is never shown back to it as a past experience.
                extra = {"thread": run["thread"]} if run.get("thread") else {}
                ctx = self.bank.context_for(run["query"], budget_tokens=self.budget_tokens,
                                            namespace=run.get("namespace"), topic=self.topic,
                                            **extra)
        except Exception as exc:  # noqa: BLE001 - memory must not break the agent
            self._failed("context", exc)
            return None
        # The note ("the Chroma server does not answer; ... keyword only") rides along, as the
        # memory_context tool and the LlamaIndex block give it (hunt-lxteam #6, session 37).
        text = "\n\n".join(part for part in (ctx.text, ctx.note) if part)
        return {"text": text, "ids": list(ctx.ids)}

    def _needs_context(self, run: dict[str, Any]) -> bool:
        return run.get("context") is None and bool(run.get("query")) and not run.get("skip")

    def _respond(self, state: Any, response: ModelResponse, run: dict[str, Any],
                 fresh: dict[str, Any] | None, tools: list[str] | None, shown: str) -> Any:
        if steps_left() == 0:  # no step left for the next node: LangGraph raises next
            self._on_failure(state, run, recursion_limit_error(), made=messages_of(response),
                             step="agent loop")
        if fresh is None and tools == run.get("agent_tools"):
            return response
        mine = self._mine(state)
        mine["run"] = {**run, "context": fresh or run.get("context"), "agent_tools": tools}
        update: dict[str, Any] = {"skillbank": {self._name: mine}}
        if fresh is not None:
            update["skillbank_memory_ids"] = _ids_shown(fresh, shown)
        return ExtendedModelResponse(model_response=response, command=Command(update=update))

    def _check_tool_names(self, request: ModelRequest) -> None:
        """Refuse another tool under one of this instance's tool names: with two instances
        given ``tools=`` (the team's and a personal one), create_agent kept one tool per name,
        so the model and the agent used the other instance's ``find_skills``, in its
        namespace, silently. The instance whose tools were dropped sees it here."""
        if not self.tools:
            return
        mine = {t.name: t for t in self.tools}
        taken = sorted({getattr(t, "name", None) for t in getattr(request, "tools", None) or ()
                        if getattr(t, "name", None) in mine and t is not mine[t.name]})
        if taken:
            raise InvalidInputError(
                f"the agent has another tool named {', '.join(taken)}: more than one "
                f"SkillbankMiddleware offers it (tools=...), or the agent's own tools do. Give "
                f"tools= to one instance only: its tools work in that instance's namespace")

    def wrap_model_call(self, request: ModelRequest,
                        handler: Callable[[ModelRequest], ModelResponse]) -> Any:
        run = self._current_run(request.state, request.runtime)
        tools = _tool_names(request)  # find_skills, called later, gates on them too
        self._check_tool_names(request)
        try:  # a stop while memory is computed or the step kept is the run's too (hunt-async #1)
            with agent_tools(tools):  # skills needing tools it lacks stay out
                fresh = self._compute(run) if self._needs_context(run) else None
            entry = fresh or run.get("context")
            shaped, shown = _with_memory(request, entry["text"]) if entry else (request, "")
            response = handler(shaped)
            return self._respond(request.state, response, run, fresh, tools, shown)
        except BaseException as exc:  # a cancelled or interrupted run too (hunt-agents #2)
            self._on_failure(request.state, run, exc)
            raise

    async def awrap_model_call(self, request: ModelRequest, handler: Callable[..., Any]) -> Any:
        run = self._current_run(request.state, request.runtime)
        tools = _tool_names(request)
        self._check_tool_names(request)
        # The awaits for memory and for keeping the step are in the try: a cancel landing at
        # one of them (a `wait_for` timeout while the block is computed) left the run
        # unrecorded, or recorded at the thread's next request as "left unfinished"
        # (hunt-async #1, session 34).
        try:
            with agent_tools(tools):  # to_thread carries the context variable
                fresh = (await asyncio.to_thread(self._compute, run) if self._needs_context(run)
                         else None)
            entry = fresh or run.get("context")
            shaped, shown = _with_memory(request, entry["text"]) if entry else (request, "")
            response = await handler(shaped)
            return await asyncio.to_thread(self._respond, request.state, response, run, fresh,
                                           tools, shown)
        except BaseException as exc:
            # In a worker thread: with background=False the failure is written inline, and that
            # write (a lock, PostgreSQL) stalled every coroutine of the loop (hunt-agents-team
            # #3, session 31); a run's last step is recorded in `_respond` the same way.
            await asyncio.to_thread(self._on_failure, request.state, run, exc)
            raise

    # -- tools: the namespaces the block came from, and failures ------------------------------
    def _tool_scope(self, request: Any) -> Scope | None:
        """The scope this instance's own tools run in when other instances of the agent showed
        memory from other namespaces in this run (the documented team + personal pair): its
        own namespace, reading theirs. The block invited the model to rate the team's rules
        by id, and the personal instance's `rate_memory` answered "no guideline" — its users
        could rate their own rules only. Reading is what the developer already granted by
        composing the instances; writes stay in this instance's namespace, and a vote on a
        namespace it may not change counts as an outsider's (once, never retiring a rule).
        The namespaces come from the state's `skillbank` key: private state, which LangChain
        drops from the input, so only the instances write it
        (tests/test_middleware_team_user.py)."""
        name = (getattr(request, "tool_call", None) or {}).get("name")
        if not self.tools or name not in {t.name for t in self.tools}:
            return None
        shared = (getattr(request, "state", None) or {}).get("skillbank") or {}
        run = self._mine(request.state).get("run") or {}
        own = run.get("namespace")
        others = tuple(dict.fromkeys(
            entry["run"]["namespace"] for key, entry in shared.items()
            if key != self._name and isinstance(entry, dict)
            and isinstance(entry.get("run"), dict) and entry["run"].get("context")
            and isinstance(entry["run"].get("namespace"), str)
            and entry["run"]["namespace"] != own))
        # face "agent": what the tools run as alone (`_tools.run_tool`), so the audit log names
        # one face for a tool call whichever instances the agent has.
        base = narrowed(own, trusted=self.trusted, face="agent") if own else None
        return dataclasses.replace(base, reads=others) if base is not None and others else None

    def _run_tools(self, request: Any) -> list[str] | None:
        """The tool names this run's model saw (its state), for find_skills' gate."""
        return (self._mine(request.state).get("run") or {}).get("agent_tools")

    def wrap_tool_call(self, request: Any, handler: Callable[[Any], Any]) -> Any:
        try:
            # find_skills (ours or skillbank_tools') gates on the tools the run's model saw
            with agent_tools(self._run_tools(request)), _maybe_using(self._tool_scope(request)):
                result = handler(request)
        except BaseException as exc:  # a cancelled or interrupted run too (hunt-agents #2)
            self._on_failure(request.state, self._current_run(request.state, request.runtime),
                             exc, request.tool_call)
            raise
        self._after_tool(request, result)
        return result

    async def awrap_tool_call(self, request: Any, handler: Callable[..., Any]) -> Any:
        try:
            with agent_tools(self._run_tools(request)), _maybe_using(self._tool_scope(request)):
                result = await handler(request)
        except BaseException as exc:  # recorded in a worker thread, as in awrap_model_call
            await asyncio.to_thread(
                self._on_failure, request.state,
                self._current_run(request.state, request.runtime), exc, request.tool_call)
            raise
        await asyncio.to_thread(self._after_tool, request, result)
        return result

    def _after_tool(self, request: Any, result: Any) -> None:
        """A tool call of the run's last step returned: once every call of the step has, the
        run is recorded as the `GraphRecursionError` LangGraph raises next (hunt-agents #1)."""
        if steps_left() != 0 or not self.record:
            return
        run = self._current_run(request.state, request.runtime)
        messages = list((request.state or {}).get("messages") or [])
        made = self._last_step_calls.add(run.get("key") or "", open_tool_calls(messages),
                                         messages_of(result))
        if made is not None:
            self._on_failure(request.state, run, recursion_limit_error(), made=made,
                             step="agent loop")

    def _on_failure(self, state: Any, run: dict[str, Any], exc: BaseException,
                    tool_call: dict[str, Any] | None = None, made: Sequence[Any] = (),
                    step: str = "model call") -> None:
        """Record the run as a failure, once, unless the exception only pauses the graph; as
        stopped when it was cancelled, interrupted or abandoned (no outcome given: in a thread
        its episode goes on, `_runs.stop_record`). `made`: the messages the
        run's last step returned (it stops at the recursion limit after them)."""
        if isinstance(exc, _Bubble) or not self.record or run.get("skip") or not run.get("goal"):
            return
        # The run is claimed before it is written, under a lock: a cancel while the last
        # step's recursion-limit failure was being written (in a worker thread the cancel does
        # not stop) wrote its own record meanwhile, two for one run (review 2 #3, session 34).
        # One record per run, whichever comes first.
        with self._claiming:
            if run.get("key") in self._failed_runs:
                return  # a tool of the last step raised after the step was recorded
            seen = getattr(exc, "_skillbank_recorded", None)
            if seen is None:
                seen = set()
                try:
                    exc._skillbank_recorded = seen  # type: ignore[attr-defined]
                except AttributeError:
                    pass
            if self._name in seen:
                return
            seen.add(self._name)
            if run.get("key"):
                self._failed_runs.append(run["key"])
        messages = _run_messages(list((state or {}).get("messages") or []), run.get("request_id"))
        messages.extend(made)
        given = run.get("feedback") or (state or {}).get("feedback")
        if is_stop(exc):  # no outcome given: in a thread the episode goes on (hunt-threads #3)
            said = stop_feedback(exc)
            # The input's outcome said how the run would end, and it did not end: a cancelled
            # run declared a success was stored as one, closing the episode, and its retry
            # filed a second record (hunt-async #2, session 34). The retry's outcome lands.
            outcome, feedback = stop_record(exc, outcome=None, feedback=given,
                                            thread=run.get("thread"))
        else:
            said = failure_feedback(exc)
            outcome, feedback = "failure", f"{given}\n{said}" if given else said
        if tool_call:
            messages.append(ToolMessage(content=f"error: {said}",
                                        tool_call_id=str(tool_call.get("id") or "call"),
                                        name=tool_call.get("name"), status="error"))
        else:
            # The failed model call is a step of its own: as an assistant text it read as the
            # run's "final answer" in the recorded steps and in later memory blocks.
            messages.append(ToolMessage(content=f"error: {said}",
                                        tool_call_id="skillbank-model-call",
                                        name=step,
                                        status="error"))
        self._write(run, messages, outcome, feedback, learn=None)
        if run.get("key"):
            self._unfinished.pop(run["key"], None)
            if not closes_episode(outcome):
                self._stopped_runs.append(run["key"])

    # -- recording after the run ----------------------------------------------------------------
    def _write(self, run: dict[str, Any], messages: list[Any], outcome: str,
               feedback: str | None, learn: str | None) -> str | None:
        """Record the run (and learn `learn` as guidelines): in the background by default."""
        goal = run["goal"]
        if run.get("followup") or not messages or not is_human(messages[0]) \
                or clip_task(text_of(messages[0]).strip()) != goal:
            messages = [HumanMessage(content=goal), *messages]  # the request becomes a step
        answer = next((text_of(m) for m in reversed(messages)
                       if isinstance(m, AIMessage) and text_of(m).strip()), None)
        namespace = run.get("namespace")
        # A thread's turns update one experience (steps appended, the outcome when given).
        thread = {"thread": run["thread"], "followup": bool(run.get("followup"))} \
            if run.get("thread") else {}
        result: dict[str, Any] = {}

        def job() -> str | None:
            eid = None
            if self.record:
                try:
                    eid = self.bank.experiences.record_messages(
                        plain_messages(messages), task=goal, outcome=outcome, feedback=feedback,
                        namespace=namespace, distill=self.distill, trusted=self.trusted,
                        **thread)
                    self.last_experience_id = eid
                except Exception as exc:  # noqa: BLE001 - logged, kept, never silent
                    result["error"] = exc
                    self._failed_quietly("recording", exc)
            if learn:
                try:
                    self.bank.guidelines.learn(learn, task=goal, response=answer,
                                               namespace=namespace, trusted=self.trusted)
                except Exception as exc:  # noqa: BLE001
                    result.setdefault("error", exc)
                    self._failed_quietly("learning from feedback", exc)
            result["id"] = eid
            return eid

        try:  # a user id that is no namespace ("alice ", 200 characters): no memory, logged
            scope = narrowed(namespace, trusted=self.trusted, face="langchain")
        except Exception as exc:  # noqa: BLE001 - memory must not break the agent's answer
            self._failed_quietly("recording", exc)
            if self.raise_errors:
                raise
            return None
        # The job runs later, maybe on the writer thread: it carries the run's scope with it.
        with using(scope):
            future = submit(self.bank, job, background=self.background, what="recording a run")
        if not self.background:
            future.result()
            if self.raise_errors and result.get("error") is not None:
                raise result["error"]
        return result.get("id")

    def _failed_quietly(self, what: str, exc: BaseException) -> None:
        """A failed background write: logged and kept, never raised into another thread."""
        self.last_error = exc
        recording_failed(self.bank, what, exc)  # counted, warned once, reported by flush()
        log.debug("skillbank %s failed", what, exc_info=not isinstance(exc, SkillbankError))

    def _finish(self, state: Any, runtime: Any) -> dict[str, Any]:
        run = self._current_run(state, runtime)
        self._unfinished.pop(run.get("key") or "", None)
        config = run_config()
        outcome = (state.get("outcome") or run.get("outcome") or config.get("skillbank_outcome")
                   or "unknown")
        feedback = (state.get("feedback") or run.get("feedback")
                    or config.get("skillbank_feedback") or None)
        outcome, feedback = str(outcome), (str(feedback) if feedback else None)
        # Outcome, feedback and task describe this run only: with a checkpointer the state
        # outlives the run, and the next turn must not be recorded (or learned from) with them.
        update: dict[str, Any] = {key: None for key in ("outcome", "feedback", "skillbank_task")
                                  if state.get(key) is not None}
        update["skillbank"] = {self._name: {"goal": run.get("goal"),
                                            "open": not closes_episode(outcome), "run": None}}
        if run.get("skip") or not run.get("goal"):
            return update
        learn = feedback if self.learn_feedback else None
        if not self.record and not learn:
            return update
        messages = _run_messages(list(state.get("messages") or []), run.get("request_id"))
        eid = self._write(run, messages, outcome, feedback, learn=learn)
        if not self.background and self.record:
            update["skillbank_experience_id"] = eid
        return update

    def after_agent(self, state: Any, runtime: Any) -> dict[str, Any] | None:
        return self._finish(state, runtime)

    async def aafter_agent(self, state: Any, runtime: Any) -> dict[str, Any] | None:
        # In a worker thread even with the background writer: handing over a job waits when
        # its queue is full, and that wait must not stall the event loop.
        return await asyncio.to_thread(self._finish, state, runtime)


def _maybe_using(scope: Scope | None) -> Any:
    return using(scope) if scope is not None else contextlib.nullcontext()


def _tool_names(request: Any) -> list[str] | None:
    """The agent's tool names for this model call (LangChain tools or provider tool dicts), so
    skill search leaves out skills whose declared tools the agent lacks (#26). None when the
    request carries no tool list."""
    tools = getattr(request, "tools", None)
    if tools is None:
        return None
    names = []
    for tool in tools:
        name = tool.get("name") if isinstance(tool, dict) else getattr(tool, "name", None)
        if isinstance(name, str) and name.strip():  # a nameless tool meets no skill's need;
            names.append(name)  # agent_tools refuses a blank name (hunt-evalgate #5, s. 37)
    return names
