"""A framework's chat messages as plain data: what `record(messages=...)` stores and what
travels to the process that owns the root.

LangChain messages and LlamaIndex ``ChatMessage`` objects are read here, framework-free (by
their attributes), into OpenAI-style chat dicts. The adapters convert a run's messages before
recording it, and a client bank converts a caller's own messages before sending them: the
owner refuses framework objects (the wire carries plain data and skillbank's records), so
``record(messages=[HumanMessage(...)])`` worked in the process that opened the root first and
raised in every other one.
"""

from __future__ import annotations

import math
from typing import Any, Iterable, Mapping

from skillbank.errors import InvalidInputError
from skillbank.records import repaired


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
    if content is None:
        return content
    if isinstance(content, str):
        return repaired(content)
    text = getattr(content, "text", None)
    return repaired(text if isinstance(text, str) else str(content))


def _plain_tool_calls(message: Any) -> list[dict[str, Any]]:
    """The tool calls a message makes: LangChain ``tool_calls``, OpenAI-style calls in
    ``additional_kwargs``, or LlamaIndex tool-call blocks, each as ``{"id", "name", "args"}``."""
    calls: list[dict[str, Any]] = []
    for call in getattr(message, "tool_calls", None) or []:
        call = _plain(call)
        if isinstance(call, Mapping) and call.get("name"):
            calls.append({"id": call.get("id"), "name": call["name"],
                          "args": call.get("args", call.get("arguments"))})
    # A call whose arguments did not parse (LangChain's `invalid_tool_calls`) ended the run
    # with no tool message; it was left out, and the run read as an empty experience (agents
    # hunt, session 18). It is a step, with what the model sent and why it failed.
    for call in getattr(message, "invalid_tool_calls", None) or []:
        call = _plain(call)
        if isinstance(call, Mapping):
            calls.append({"id": call.get("id"), "name": call.get("name") or "(unnamed tool)",
                          "args": {"invalid_arguments": call.get("args"),
                                   "error": call.get("error") or "the arguments did not parse"}})
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
    if isinstance(value, str):
        return repaired(value)  # a chat's cut emoji: the run is recorded one character short
    if value is None or isinstance(value, (bool, int)):
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
