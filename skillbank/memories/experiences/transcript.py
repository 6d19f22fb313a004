"""Chat transcript -> steps: turn a raw agent trajectory into the steps an experience stores.

Duck-typed over LangChain messages, LlamaIndex ChatMessage, OpenAI chat-completion dicts,
Anthropic content blocks and OpenAI Responses items, so no framework is imported here: the
experience memory must accept what any face hands it without depending on that face.
"""

from __future__ import annotations

import json
import math
import re
from typing import Any, Iterable, Mapping, Sequence

from skillbank.errors import InvalidInputError
from skillbank.records import MAX_STEPS, MAX_TEXT, Step, repaired

__all__ = ["steps_from_messages", "MAX_MESSAGES"]

MAX_MESSAGES = 5_000  # a trajectory longer than this is refused, not silently cut

_ROLES = {
    "user": "user", "human": "user",
    "assistant": "assistant", "ai": "assistant", "model": "assistant", "chatbot": "assistant",
    "system": "system", "developer": "system",
    "tool": "tool", "function": "tool", "tool_result": "tool",
}


def _get(obj: Any, name: str, default: Any = None) -> Any:
    if isinstance(obj, Mapping):
        return obj.get(name, default)
    return getattr(obj, name, default)


def _role(message: Any) -> str:
    raw = _get(message, "role")
    if raw is None:
        raw = _get(message, "type")  # LangChain: human / ai / system / tool
    raw = getattr(raw, "value", raw)  # LlamaIndex MessageRole is a str Enum
    return _ROLES.get(str(raw or "").lower(), str(raw or "").lower())


def _parse_arguments(arguments: Any) -> Any:
    if isinstance(arguments, str):
        text = arguments.strip()
        if text[:1] in ("{", "["):
            try:
                return json.loads(text)
            except ValueError:
                return arguments
    return arguments


def _text_of(content: Any) -> str:
    """Plain text of a message content: a string, or a list of text parts/blocks."""
    if content is None:
        return ""
    if isinstance(content, str):
        return content
    if isinstance(content, (list, tuple)):
        parts = []
        for block in content:
            if isinstance(block, str):
                parts.append(block)
                continue
            kind = str(_get(block, "type", None) or _get(block, "block_type", None) or "text")
            if kind in ("text", "input_text", "output_text"):
                text = _get(block, "text")
                if isinstance(text, str):
                    parts.append(text)
        return "\n".join(p for p in parts if p)
    text = _get(content, "text")
    return text if isinstance(text, str) else str(content)


def _tool_calls(message: Any) -> list[tuple[str | None, str, Any]]:
    """(call id, tool name, arguments) of every tool call an assistant message makes."""
    calls: list[tuple[str | None, str, Any]] = []
    sources: list[Any] = []
    for found in (_get(message, "tool_calls"),
                  (_get(message, "additional_kwargs") or {}).get("tool_calls")
                  if isinstance(_get(message, "additional_kwargs"), Mapping) else None):
        if found:
            sources.extend(found)
            break
    for call in sources:
        function = _get(call, "function")
        if function is not None:  # OpenAI: {"id", "function": {"name", "arguments"}}
            name, args = _get(function, "name"), _get(function, "arguments")
        else:  # LangChain: {"name", "args", "id"}
            name = _get(call, "name")
            args = _get(call, "args", _get(call, "arguments", _get(call, "input")))
        call_id = _get(call, "id", None) or _get(call, "tool_call_id", None) or _get(call, "call_id", None)
        if name:
            calls.append((call_id, str(name), _parse_arguments(args)))
    legacy = _get(message, "function_call")
    if not calls and legacy:  # OpenAI's legacy single function call
        calls.append((None, str(_get(legacy, "name") or "function"),
                      _parse_arguments(_get(legacy, "arguments"))))
    if not calls:  # content blocks: Anthropic tool_use, LangChain tool_call, LlamaIndex ToolCallBlock
        blocks = _get(message, "blocks")
        if not isinstance(blocks, (list, tuple)):
            blocks = _get(message, "content")
        if isinstance(blocks, (list, tuple)):
            for block in blocks:
                if isinstance(block, str):
                    continue
                kind = str(_get(block, "type", None) or _get(block, "block_type", None) or "")
                if kind in ("tool_use", "tool_call", "function_call"):
                    name = _get(block, "name") or _get(block, "tool_name")
                    args = _get(block, "input", _get(block, "args", _get(block, "arguments",
                                _get(block, "tool_kwargs"))))
                    call_id = _get(block, "id", None) or _get(block, "tool_call_id", None) \
                        or _get(block, "call_id", None)
                    if name:
                        calls.append((call_id, str(name), _parse_arguments(args)))
    return calls


def _tool_results(message: Any) -> list[tuple[str | None, str | None, str]]:
    """Tool results carried as content blocks of a user message (Anthropic style)."""
    content = _get(message, "content")
    results: list[tuple[str | None, str | None, str]] = []
    if isinstance(content, (list, tuple)):
        for block in content:
            if not isinstance(block, str) and _get(block, "type") == "tool_result":
                inner = _get(block, "content")
                results.append((_get(block, "tool_use_id"), None,
                                _text_of(inner) if not isinstance(inner, str) else inner))
    return results


def _tool_call_id(message: Any) -> str | None:
    value = _get(message, "tool_call_id")
    if value is None:
        extra = _get(message, "additional_kwargs")
        if isinstance(extra, Mapping):
            value = extra.get("tool_call_id") or extra.get("call_id")
    return None if value is None else str(value)


def _tool_name(message: Any) -> str | None:
    name = _get(message, "name")
    if not name:
        extra = _get(message, "additional_kwargs")
        if isinstance(extra, Mapping):
            name = extra.get("name") or extra.get("tool_name")
    return str(name) if name else None


def _normalise_item(item: Any) -> Any:
    """("role", "text") pairs and OpenAI Responses API items become chat-completion dicts."""
    if isinstance(item, tuple) and len(item) == 2 and isinstance(item[0], str):
        return {"role": item[0], "content": item[1]}
    if isinstance(item, Mapping) and "role" not in item:
        kind = item.get("type")
        if kind == "function_call":
            return {"role": "assistant", "content": None, "tool_calls": [
                {"id": item.get("call_id") or item.get("id"),
                 "function": {"name": item.get("name"), "arguments": item.get("arguments")}}]}
        if kind == "function_call_output":
            return {"role": "tool", "tool_call_id": item.get("call_id"),
                    "content": item.get("output")}
    return item


def steps_from_messages(messages: Sequence[Any], task: str | None = None
                        ) -> tuple[list[Step], str | None]:
    """Turn a chat trajectory into steps; returns (steps, text of the first user message).

    `task`: the record's task when the caller names it. A first user message that says
    something else (a follow-up of a thread, a turn a chat memory flushed under the session's
    goal) is what the user asked in this turn: a step in its place, not a task to drop.

    Accepts LangChain message objects (`.type`, `.content`, `.tool_calls`, `.tool_call_id`),
    LlamaIndex `ChatMessage` (`.role`, `.content`, `.blocks`, `.additional_kwargs`), and dicts in
    OpenAI chat-completions form (`role`, `content`, `tool_calls`, role "tool" with
    `tool_call_id`), Anthropic content blocks and OpenAI Responses items, all duck-typed.
    Assistant text becomes a thought, each tool call an action with its input, each tool result
    the observation of the call it answers (by id, else the oldest open call of that name), later
    user messages observations, and a final assistant text a last "final answer" step.
    """
    if isinstance(messages, (str, bytes, Mapping)) or not isinstance(messages, Iterable):
        raise InvalidInputError("messages must be a list of chat messages")
    messages = list(messages)
    if len(messages) > MAX_MESSAGES:
        raise InvalidInputError(f"{len(messages)} messages; at most {MAX_MESSAGES} are recorded")
    steps: list[Step] = []
    first_user: str | None = None
    open_calls: dict[str, int] = {}  # call id -> step index
    pending: list[int] = []  # steps with an action and no observation yet, oldest first
    items = [_normalise_item(m) for m in messages]
    last_assistant = max((i for i, m in enumerate(items) if _role(m) == "assistant"), default=-1)

    def observe(call_id: str | None, name: str | None, text: str) -> None:
        index = open_calls.pop(call_id, None) if call_id else None
        if index is None:
            index = next((i for i in pending if name is None or steps[i].action == name), None)
        if index is None:
            steps.append(Step(action=name, observation=text))
            return
        if index in pending:
            pending.remove(index)
        step = steps[index]
        observation = text if step.observation is None else f"{step.observation}\n{text}"
        steps[index] = step.model_copy(update={"observation": observation[:MAX_TEXT]})

    for position, message in enumerate(items):
        role = _role(message)
        if role == "system":
            continue
        if role == "tool":
            observe(_tool_call_id(message), _tool_name(message), _text_of(_get(message, "content")))
            continue
        if role == "user":
            results = _tool_results(message)
            for call_id, name, text in results:
                observe(call_id, name, text)
            text = _text_of(_get(message, "content")).strip()
            if results and not text:
                continue
            if first_user is None and text:
                first_user = text
                if task is not None and " ".join(text.split()) != " ".join(str(task).split()):
                    steps.append(Step(observation=f"User: {text}"[:MAX_TEXT]))
            elif text:
                steps.append(Step(observation=f"User: {text}"[:MAX_TEXT]))
            continue
        if role != "assistant":
            continue
        text = _text_of(_get(message, "content")).strip()
        calls = _tool_calls(message)
        if calls:
            for number, (call_id, name, args) in enumerate(calls):
                steps.append(Step(thought=(text or None) if number == 0 else None, action=name,
                                  action_input=_jsonable(args)))
                pending.append(len(steps) - 1)
                if call_id:
                    open_calls[str(call_id)] = len(steps) - 1
        elif text and position == last_assistant:
            steps.append(Step(action="final answer", observation=text))
        elif text:
            steps.append(Step(thought=text))
    # A chat's cut emoji (a lone surrogate) is one character short in the record, where it
    # made the whole run unrecordable (hunt-li, session 21; records.repaired).
    return (_fit_steps([_repaired_step(step) for step in steps]),
            repaired(first_user) if first_user else first_user)


def _repaired_step(step: Step) -> Step:
    return step.model_copy(update={name: _repaired_value(getattr(step, name))
                                   for name in type(step).model_fields})


def _repaired_value(value: Any) -> Any:
    if isinstance(value, str):
        return repaired(value)
    if isinstance(value, dict):
        return {_repaired_value(k): _repaired_value(v) for k, v in value.items()}
    if isinstance(value, list):
        return [_repaired_value(v) for v in value]
    return value


def _fit_steps(steps: list[Step], budget: int | None = None) -> list[Step]:
    """Keep the head and the tail of an over-long trajectory, with a marker between saying how
    many steps are left out.

    A long thread is fitted again at every turn, its earlier marker among the steps it drops:
    the marker stands for the steps it left out, so the new one counts them too ("[3 steps
    omitted]" where 101 were gone after 300 turns; hunt-exp #5, session 27).

    `budget`: the bytes the steps' JSON may take (a thread's record, `threads._turn`). Bounded
    by count alone, a thread with large tool outputs grew past the record limit, and once its
    record was too large to journal every later turn and the outcome were refused (479 steps,
    3.4 MB; hunt-threads #1, session 38). The head is at most half the budget and ends at an
    earlier marker, so it stays the same turn after turn; the tail, the latest steps, takes
    the rest (at least the last step; `validation._fit_record` trims texts if it alone is too
    large)."""
    sizes = [len(step.model_dump_json().encode("utf-8")) + 1 for step in steps] \
        if budget is not None else []
    if len(steps) <= MAX_STEPS and (budget is None or sum(sizes) <= budget):
        return steps
    room = math.inf if budget is None else budget - _MARKER_BYTES
    head, used = 0, 0
    while head < min(MAX_STEPS // 2, len(steps) - 1) and not _is_marker(steps[head]) \
            and (budget is None or used + sizes[head] <= room / 2):
        used += sizes[head] if budget is not None else 0
        head += 1
    tail = 0
    while tail < min(MAX_STEPS - head - 1, len(steps) - head) and \
            (tail == 0 or budget is None or used + sizes[-tail - 1] <= room):
        used += sizes[-tail - 1] if budget is not None else 0
        tail += 1
    if head + tail >= len(steps):
        return steps
    skipped = sum(_stands_for(step) for step in steps[head:len(steps) - tail])
    marker = Step(thought=f"[{skipped} steps omitted]")
    return steps[:head] + [marker] + steps[len(steps) - tail:]


#: Room kept for the marker's JSON in a byte budget (`{"thought":"[N steps omitted]",…}`).
_MARKER_BYTES = 200


_MARKER = re.compile(r"\[(\d+) steps omitted\]")


def _stands_for(step: Step) -> int:
    """How many steps of the trajectory `step` is: a marker `_fit_steps` wrote is the steps it
    left out, any other step one."""
    return int(_MARKER.fullmatch(step.thought or "").group(1)) if _is_marker(step) else 1


def _is_marker(step: Step) -> bool:
    """Whether `step` is a marker `_fit_steps` wrote (its text only, nothing else)."""
    return bool(_MARKER.fullmatch(step.thought or "")) and step.action is None \
        and step.observation is None and step.action_input is None


def _jsonable(value: Any) -> Any:
    """Tool inputs as plain JSON data (anything else becomes its string form)."""
    try:
        return json.loads(json.dumps(value, default=str, allow_nan=False))
    except (TypeError, ValueError):
        return str(value)
