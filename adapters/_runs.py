"""What both agent adapters need to know about a run, framework-free.

* **The task.** A thread has a goal: the first request of its episode, or what the caller names
  explicitly (``skillbank_task``). A later "yes, go ahead" or a summary of the conversation is a
  follow-up attached to that goal, never a new task: memory is searched for the goal plus the
  latest request, and the run is recorded under the goal with the follow-up as a step. An
  episode ends when a run is given an outcome (success, failure, partial), so the next request
  starts a new goal.
* **The namespace.** ``namespace="{user_id}"`` is a template filled per run from the run's
  ``configurable`` and its runtime context, the way LangMem fills ``{langgraph_user_id}``.
* **Recording.** A run (or a failure: the exception's type and message become the feedback) is
  recorded and its feedback learned through the bank's background writer, off the agent's turn.
  The framework's message objects are turned into plain chat dicts here (`plain_messages`)
  before they reach the bank: a bank may be a client of another process, and only plain data
  and skillbank's own records cross to it. A recording that fails is counted, warned about once
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

if TYPE_CHECKING:
    from skillbank.bank import Skillbank

__all__ = ["fill_namespace", "template_fields", "plan_run", "failure_feedback", "closes_episode",
           "submit", "context_value", "MAX_QUERY_CHARS", "plain_messages"]

log = logging.getLogger("skillbank.adapters")

#: The memory query is the goal plus the latest request, cut to this many characters.
MAX_QUERY_CHARS = 4000
#: Outcomes that end an episode: the next request is a new task.
_FINAL = ("success", "failure", "partial")


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
    request = (request or "").strip()
    explicit = (explicit or "").strip() or None
    previous = previous or {}
    if explicit:
        goal = explicit
    elif previous.get("open") and previous.get("goal"):
        goal = str(previous["goal"])
    else:
        goal = request
    followup = bool(request) and request != goal
    query = f"{goal}\n{request}" if followup else goal
    return {"goal": goal, "request": request, "followup": followup,
            "query": query[:MAX_QUERY_CHARS]}


def closes_episode(outcome: str | None) -> bool:
    """Whether a run with this outcome ends its thread's episode (the next request is new)."""
    return str(outcome or "").strip().lower() in _FINAL


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

def plain_messages(messages: Any) -> list[dict[str, Any]]:
    """A framework's chat messages as plain dicts in OpenAI chat form, for `record_messages`.

    LangChain messages (``type``, ``content``, ``tool_calls``, ``tool_call_id``) and LlamaIndex
    ``ChatMessage`` (``role``, ``content``, tool-call blocks, ``additional_kwargs``) become
    ``{"role", "content", "tool_calls": [{"id", "name", "args"}], "tool_call_id", "name"}``; a
    dict or a ``(role, text)`` pair is kept as plain data. Why here and not in the bank: the
    bank may be a client of another process, and only plain data and skillbank's own records
    travel to it — a framework object would be refused there and the run lost. Anything that
    is not a chat message raises `InvalidInputError`, the same in-process and through a client.
    """
    if isinstance(messages, (str, bytes, Mapping)) or not isinstance(messages, Iterable):
        raise InvalidInputError("messages must be a list of chat messages")
    return [plain_message(m) for m in messages]


def plain_message(message: Any) -> dict[str, Any]:
    """One chat message as a plain dict (see `plain_messages`)."""
    if isinstance(message, Mapping):
        return {str(k): _plain(v) for k, v in message.items()}
    if isinstance(message, tuple) and len(message) == 2 and isinstance(message[0], str):
        return {"role": message[0], "content": _plain(message[1])}
    role = getattr(message, "role", None) or getattr(message, "type", None)
    role = getattr(role, "value", role)  # LlamaIndex MessageRole is a str Enum
    if not isinstance(role, str) or not role:
        raise InvalidInputError(
            f"a {type(message).__name__} is not a chat message: pass messages with a role (or "
            "LangChain type) and content, or dicts like {'role': 'user', 'content': '...'}")
    plain: dict[str, Any] = {"role": role, "content": _content(message)}
    calls = _plain_tool_calls(message)
    if calls:
        plain["tool_calls"] = calls
    extra = getattr(message, "additional_kwargs", None)
    extra = extra if isinstance(extra, Mapping) else {}
    call_id = getattr(message, "tool_call_id", None) or extra.get("tool_call_id") \
        or extra.get("call_id")
    if call_id:
        plain["tool_call_id"] = str(call_id)
    name = getattr(message, "name", None) or extra.get("name") or extra.get("tool_name")
    if isinstance(name, str) and name:
        plain["name"] = name
    status = getattr(message, "status", None)
    if isinstance(status, str) and status:
        plain["status"] = status
    return plain


def _content(message: Any) -> Any:
    """A message's content: its text, or (LangChain) its list of plain content blocks."""
    content = getattr(message, "content", None)
    if isinstance(content, list):  # LangChain blocks are dicts already
        return [_plain(block) for block in content]
    if content is None or isinstance(content, str):
        return content
    text = getattr(content, "text", None)
    return text if isinstance(text, str) else str(content)


def _plain_tool_calls(message: Any) -> list[dict[str, Any]]:
    """The tool calls a message makes: LangChain ``tool_calls``, OpenAI-style calls in
    ``additional_kwargs``, or LlamaIndex tool-call blocks, each as ``{"id", "name", "args"}``."""
    calls: list[dict[str, Any]] = []
    for call in getattr(message, "tool_calls", None) or []:
        call = _plain(call)
        if isinstance(call, Mapping) and call.get("name"):
            calls.append({"id": call.get("id"), "name": call["name"],
                          "args": call.get("args", call.get("arguments"))})
    extra = getattr(message, "additional_kwargs", None)
    if not calls and isinstance(extra, Mapping):
        for call in extra.get("tool_calls") or []:
            call = _plain(call)
            if not isinstance(call, Mapping):
                continue
            function = call.get("function") if isinstance(call.get("function"), Mapping) else call
            if function.get("name"):
                calls.append({"id": call.get("id") or call.get("tool_call_id"),
                              "name": function["name"],
                              "args": function.get("arguments", function.get("args"))})
    if not calls:
        for block in getattr(message, "blocks", None) or []:
            kind = getattr(block, "block_type", None) or getattr(block, "type", None)
            name = getattr(block, "tool_name", None) or getattr(block, "name", None)
            if kind in ("tool_call", "tool_use", "function_call") and name:
                calls.append({"id": getattr(block, "tool_call_id", None)
                              or getattr(block, "id", None),
                              "name": str(name),
                              "args": _plain(getattr(block, "tool_kwargs", None)
                                             or getattr(block, "input", None)
                                             or getattr(block, "args", None) or {})})
    return calls


def _plain(value: Any, depth: int = 0) -> Any:
    """`value` as plain JSON data: framework objects become their dumped fields or their text."""
    if value is None or isinstance(value, (bool, int, str)):
        return value
    if isinstance(value, float):
        return value if math.isfinite(value) else str(value)
    if depth > 20:
        return str(value)
    if isinstance(value, Mapping):
        return {str(k): _plain(v, depth + 1) for k, v in value.items()}
    if isinstance(value, (list, tuple, set, frozenset)):
        return [_plain(v, depth + 1) for v in value]
    dump = getattr(value, "model_dump", None)
    if callable(dump):
        try:
            return _plain(dump(mode="json"), depth + 1)
        except Exception:  # noqa: BLE001 - a model that cannot dump itself: its text
            return str(value)
    return str(value)


# --------------------------------------------------------------------------------------------
# Failed recordings are never silent
# --------------------------------------------------------------------------------------------

def recording_failed(bank: Any, what: str, exc: BaseException) -> None:
    """Count and warn (once per bank) about a recording or learning the bank refused; the
    bank's `stats()` counts it and its next `flush()` reports it (`skillbank.recording`)."""
    from skillbank.recording import failures_of

    failures_of(bank).add(what, exc)
