"""What both agent adapters need to know about a run, framework-free.

* **The task.** A thread has a goal: the first request of its episode, or what the caller names
  explicitly (``skillbank_task``). A later "yes, go ahead" or a summary of the conversation is a
  follow-up attached to that goal, never a new task: memory is searched for the goal plus the
  latest request, and the run is recorded under the goal with the follow-up as a step. An
  episode ends when a run is given an outcome (success, failure, partial), so the next request
  starts a new goal. Where a face's own state of the thread has no goal (a checkpointer or a
  session that died with its process, a second worker with its own), the thread's open episode
  in the bank is the goal (`open_goal`): the LangChain face started a new record with the
  follow-up as its task, and the outcome landed on "done, thanks" (hunt-threads #1, session 32).
  Only an episode whose last turn is recent (`thread_pickup_seconds`, an hour by default; the
  rule is `ExperienceMemory.open_thread`'s): a thread id reused later for a new conversation
  (``"1"``, as in every LangGraph example) is a new goal, not a follow-up of a task left open
  days ago, which then got the new run's outcome (review 1 #2, session 32).
* **A stop is no outcome.** A run stopped from outside (cancelled, interrupted, a stream left
  early; LlamaIndex's ``handler.cancel_run()``) with no outcome given is recorded with its
  steps and a last step naming the stop; in a thread its episode stays open (outcome
  ``unknown``), so the thread's next request goes on with the same goal and record, and an
  outcome given later lands on it. Only a run with no thread,
  which nothing can continue, is recorded as ``partial`` (`stop_record`). The LangChain
  middleware gives no outcome here even when the run's input carried one: that said how the
  run would end, and it did not; kept, a cancelled run was a closed success and its retry a
  second record (hunt-async #2, session 34). `arecord_run`'s outcome, given knowing the stop,
  is kept. Recorded as
  ``partial`` in a thread, the stop closed the episode: the follow-up became a task of its own
  and the thread recalled its own first half as a past experience (hunt-threads #3, session 32).
* **The namespace.** ``namespace="{user_id}"`` is a template filled per run from the run's
  ``configurable`` and its runtime context, the way LangMem fills ``{langgraph_user_id}``.
* **Recording.** A run (or a failure: the exception's type and message become the feedback) is
  recorded and its feedback learned through the bank's background writer, off the agent's turn.
  The framework's message objects are turned into plain chat dicts (`plain_messages`) before
  they reach the bank: a bank may be a client of another process, and only plain data and
  skillbank's own records cross to it. A recording that fails is counted, warned about once
  and reported by `bank.flush()` (`RecordingFailures`).

Nothing here imports a framework, and nothing holds memory logic: the records are written by
`bank.experiences.record_messages` and `bank.guidelines.learn`.
"""

from __future__ import annotations

import logging
import math
import string
import threading
from concurrent.futures import Future
from typing import TYPE_CHECKING, Any, Callable, Iterable, Mapping

from skillbank.errors import InvalidInputError
from skillbank.chat_messages import plain_messages
from skillbank.memories.experiences.threads import CLOSING_OUTCOMES
from skillbank.records import clip_task, repaired

if TYPE_CHECKING:
    from skillbank.bank import Skillbank

__all__ = ["fill_namespace", "template_fields", "plan_run", "failure_feedback", "closes_episode",
           "open_goal", "is_stop", "stop_feedback", "stop_record", "STOPPED_OUTCOME", "submit",
           "context_value", "MAX_QUERY_CHARS", "plain_messages", "clip_task"]

log = logging.getLogger("skillbank.adapters")

#: The memory query is the goal plus the latest request, cut to this many characters.
MAX_QUERY_CHARS = 4000

# --------------------------------------------------------------------------------------------
# Namespace templates
# --------------------------------------------------------------------------------------------

def template_fields(template: str | None) -> list[str]:
    """The ``{names}`` a namespace template needs ([] for a plain namespace)."""
    if not template:
        return []
    try:
        parts = list(string.Formatter().parse(template))
    except ValueError as exc:
        raise InvalidInputError(f"invalid namespace template {template!r}: {exc}") from None
    fields = []
    for _, field, spec, conversion in parts:
        if field is None:
            continue
        # Only plain names are filled ({user_id}); an index, attribute, position, conversion or
        # format spec would fail mid-run with a KeyError, or read what nobody meant to share.
        if not field.isidentifier() or spec or conversion:
            shown = "{" + field + (f"!{conversion}" if conversion else "") + \
                (f":{spec}" if spec else "") + "}"
            raise InvalidInputError(
                f"namespace template {template!r} names the unknown field {shown}: a field is "
                "a plain name filled per run, such as {user_id} or {team}")
        fields.append(field)
    return fields


def context_value(context: Any, key: str) -> Any:
    """`key` from a runtime context: a mapping, a dataclass or a pydantic model (else None)."""
    if context is None:
        return None
    if isinstance(context, Mapping):
        return context.get(key)
    return getattr(context, key, None)


def fill_namespace(template: str | None, configurable: Mapping[str, Any] | None,
                   context: Any = None) -> str | None:
    """The namespace for one run: `template` with each ``{name}`` taken from the run's
    ``configurable`` first, then from its runtime context.

    A plain namespace (no braces) is returned as it is. A missing value raises
    `InvalidInputError` naming it: silently falling back to a shared namespace would mix one
    user's memory into another's.
    """
    fields = template_fields(template)
    if not fields:
        return template
    values: dict[str, str] = {}
    configurable = configurable or {}
    for field in fields:
        value = configurable.get(field)
        if value is None:
            value = context_value(context, field)
        if value is None or str(value).strip() == "":
            raise InvalidInputError(
                f"namespace template {template!r} needs {field!r}: pass it in "
                f"config['configurable'] or in the agent's runtime context")
        values[field] = str(value)
    return template.format(**values)  # type: ignore[union-attr]


# --------------------------------------------------------------------------------------------
# The task of a run
# --------------------------------------------------------------------------------------------

def plan_run(previous: Mapping[str, Any] | None, request: str,
             explicit: str | None = None) -> dict[str, Any]:
    """The goal and memory query of a run that starts with `request`.

    `previous` is what the last run of the thread left (``goal`` and ``open``: whether its
    episode goes on). The goal is `explicit` when given, else the open episode's goal, else the
    request itself. Returns ``goal``, ``request``, ``query`` and ``followup``.
    """
    request = repaired((request or "").strip())  # a cut emoji: one character short, not lost
    explicit = repaired((explicit or "").strip()) or None
    previous = previous or {}
    if explicit:
        goal = explicit
    elif previous.get("open") and previous.get("goal"):
        goal = str(previous["goal"])
    else:
        goal = request
    goal = clip_task(goal)  # a pasted log as the request: recorded, its head as the task
    followup = bool(request) and clip_task(request) != goal
    query = f"{goal}\n{request}" if followup else goal
    return {"goal": goal, "request": request, "followup": followup,
            "query": query[:MAX_QUERY_CHARS]}


def closes_episode(outcome: str | None) -> bool:
    """Whether a run with this outcome ends its thread's episode (the next request is new)."""
    return str(outcome or "").strip().lower() in CLOSING_OUTCOMES


def open_goal(bank: "Skillbank", thread: str | None, namespace: str | None, *,
              trusted: bool, face: str) -> dict[str, Any] | None:
    """The thread's open episode in the bank as a face's state of the thread (``goal`` and
    ``open``, what `plan_run` reads), or None: for a face whose own state has no goal. None
    too when that episode's last turn is older than the bank's `thread_pickup_seconds`.

    Run where the face may wait (a worker thread in async code): `bank.experiences` syncs
    another process's writes first. A storage error propagates; the caller goes on without."""
    record = open_record(bank, thread, namespace, trusted=trusted, face=face)
    return {"goal": record.task, "open": True} if record is not None else None


def open_record(bank: "Skillbank", thread: str | None, namespace: str | None, *,
                trusted: bool, face: str) -> Any:
    """The thread's open episode in the bank (an `Experience`, or None), read as the face's
    caller: see `open_goal`."""
    if not thread:
        return None
    from skillbank.scope import narrowed, using

    with using(narrowed(namespace, trusted=trusted, face=face)):
        return bank.experiences.open_thread(thread, namespace)


#: The outcome of a run stopped from outside that no thread can go on with (see `stop_record`):
#: it made steps and did not finish, neither a success nor the approach failing.
STOPPED_OUTCOME = "partial"


#: Stops a framework raises as an `Exception`, as (module, class name): named, not imported,
#: so no framework is imported here. LlamaIndex's own way to cancel a run,
#: ``handler.cancel_run()``, ends it with `WorkflowCancelledByUser`: recorded as a failure, it
#: closed the episode and the retry became a second record (hunt-llama #3, session 35).
FRAMEWORK_STOPS = frozenset({
    ("workflows.errors", "WorkflowCancelledByUser"),
    ("llama_index.core.workflow.errors", "WorkflowCancelledByUser"),  # before `workflows`
})


def is_stop(exc: BaseException) -> bool:
    """Whether `exc` stopped the run from outside rather than the run failing: cancellation,
    ``KeyboardInterrupt``, ``GeneratorExit`` (a `BaseException`, not an `Exception`), or a
    framework's own cancellation (`FRAMEWORK_STOPS`: LlamaIndex's ``handler.cancel_run()``)."""
    if not isinstance(exc, Exception):
        return True
    return any((getattr(kind, "__module__", ""), kind.__name__) in FRAMEWORK_STOPS
               for kind in type(exc).__mro__)


def stop_feedback(exc: BaseException) -> str:
    """What stopped a run, in words a reader of the record gets."""
    what = {"CancelledError": "cancelled", "KeyboardInterrupt": "interrupted (Ctrl-C)",
            "WorkflowCancelledByUser": "cancelled (handler.cancel_run())",
            "GeneratorExit": "abandoned (its stream was closed)",
            # No hook saw why: a stream left early, or an error raised outside skillbank's
            # middleware (another middleware's hook; review of fix-agents, session 29, where
            # such a failure read as "its stream was left early").
            "RunAbandoned": "left unfinished (its stream was left early, or it raised outside "
                            "skillbank's middleware; recorded when its thread went on)",
            }.get(type(exc).__name__, "stopped")
    # No message: LangGraph cancels a closed stream's tasks with a sentinel object as the
    # message ("CancelledError: <object object at 0x...>"), which tells a reader nothing.
    return f"The run was {what} before it finished ({type(exc).__name__})."


def stop_record(exc: BaseException, *, outcome: str | None, feedback: str | None,
                thread: str | None) -> tuple[str, str | None]:
    """(outcome, feedback) of a run stopped by `exc` (`is_stop`), the stop being its last step.

    An outcome given for the run is kept, with what stopped it after the feedback. Without one,
    in a thread, the outcome stays ``unknown`` and the feedback is the run's own: a stop the
    user declared no outcome for does not end the episode (a later turn and its outcome update
    the same record, and a stop told in its feedback would outlive the success). Without a
    thread nothing can continue the run: ``partial``, the feedback naming the stop."""
    said = stop_feedback(exc)
    declared = str(outcome or "").strip()
    if declared and declared.lower() != "unknown":
        return declared, f"{feedback}\n{said}" if feedback else said
    if thread:
        return "unknown", feedback or None
    return STOPPED_OUTCOME, f"{feedback}\n{said}" if feedback else said


def failure_feedback(exc: BaseException, feedback: str | None = None) -> str:
    """What a failed run is recorded with: the exception's type and message (and any feedback)."""
    message = str(exc).strip()
    text = f"{type(exc).__name__}: {message}" if message else type(exc).__name__
    text = text[:2000]
    return f"{feedback}\n{text}" if feedback else text


# --------------------------------------------------------------------------------------------
# Writing off the hot path
# --------------------------------------------------------------------------------------------

def submit(bank: "Skillbank", fn: Callable[..., Any], *args: Any, background: bool = True,
           what: str = "", **kwargs: Any) -> Future:
    """Run a write on the bank's background writer (or inline), as a `Future` either way.

    A bank without a writer (a client of another process's bank) writes inline.
    """
    writer = getattr(bank, "background", None) if background else None
    if writer is not None:
        return writer.submit(fn, *args, what=what, **kwargs)
    future: Future = Future()
    try:
        future.set_result(fn(*args, **kwargs))
    except Exception as exc:  # noqa: BLE001 - handed back on the future, as in the background
        future.set_exception(exc)
    return future


# --------------------------------------------------------------------------------------------
# Framework messages -> plain chat dicts
# --------------------------------------------------------------------------------------------

# --------------------------------------------------------------------------------------------
# Failed recordings are never silent
# --------------------------------------------------------------------------------------------

def recording_failed(bank: Any, what: str, exc: BaseException) -> None:
    """Count and warn (once per bank) about a recording or learning the bank refused; the
    bank's `stats()` counts it and its next `flush()` reports it (`skillbank.recording`)."""
    from skillbank.recording import failures_of

    failures_of(bank).add(what, exc)
