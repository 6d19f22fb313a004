"""Reading JSON out of model replies: fences, chatter and small errors tolerated.

The work is linear in the reply: one scan finds every balanced bracketed span (the candidates),
and at most `MAX_TRIES` of them are parsed, first-starting first. A reply over
`MAX_REPLY_CHARS` is not read at all (`ReplyTooLong`): no rule or lesson needs a megabyte, and
a 10 MB sampled reply of "[" once held the MCP server's event loop for ~20 s (hunt-llm #4,
session 32).
"""

from __future__ import annotations

import ast
import itertools
import json
import re
from typing import Any

#: The longest model reply that is read; a longer one is unusable (the caller falls back).
MAX_REPLY_CHARS = 1_000_000
#: Bracketed spans parsed per text, first-starting first (bounded work on chatty replies).
MAX_TRIES = 20


class UnusableReply(ValueError):
    """A model reply that cannot be used, and why: the caller falls back and says so."""


class ReplyTooLong(UnusableReply):
    """A model reply over `MAX_REPLY_CHARS`: not read, so the caller falls back and says why."""


def _balanced_spans(text: str) -> list[tuple[int, int]]:
    """Every bracketed span of `text` that closes with its own kind of bracket, as (start, end),
    first-starting first, in one scan. Brackets inside a string do not count; a quote opens a
    string only inside brackets and where a JSON value or key may start (after ``[ { , :``), so
    an apostrophe in chatter ("the users' table") opens none, and a string ends at the end of
    its line at the latest (JSON and Python literals have no raw newline in a string)."""
    spans: list[tuple[int, int]] = []
    stack: list[int] = []
    quote: str | None = None
    escape = False
    last = ""  # the last character that is not white space, outside strings
    for i, ch in enumerate(text):
        if quote:
            if escape:
                escape = False
            elif ch == "\\":
                escape = True
            elif ch == quote or ch == "\n":
                quote = None
                last = ch
            continue
        if ch in "[{":
            stack.append(i)
        elif ch in "]}":
            if stack:
                start = stack.pop()
                if (text[start] == "[") == (ch == "]"):
                    spans.append((start, i + 1))
        elif ch in "\"'" and stack and last in "[{,:":
            quote = ch
        if not ch.isspace():
            last = ch
    spans.sort()
    return spans


def _loads_lenient(candidate: str) -> Any:
    """json.loads, then without trailing commas, then as a Python literal (single quotes)."""
    try:
        return json.loads(candidate)
    except Exception:  # noqa: BLE001 - ValueError, RecursionError on absurd nesting ...
        pass
    fixed = re.sub(r",\s*([}\]])", r"\1", candidate)
    try:
        return json.loads(fixed)
    except Exception:  # noqa: BLE001
        pass
    if len(fixed) > 200_000:
        return None
    py = re.sub(r"\btrue\b", "True", fixed)
    py = re.sub(r"\bfalse\b", "False", py)
    py = re.sub(r"\bnull\b", "None", py)
    try:
        return ast.literal_eval(py)
    except Exception:  # noqa: BLE001 - SyntaxError, ValueError, MemoryError, RecursionError
        return None


def extract_json(reply: str) -> Any:
    """The first JSON array or object in a model reply (fences, chatter and small errors tolerated).

    Returns None when nothing parseable is found; raises `ReplyTooLong` for a reply over
    `MAX_REPLY_CHARS`.
    """
    if not isinstance(reply, str) or not reply.strip():
        return None
    if len(reply) > MAX_REPLY_CHARS:
        raise ReplyTooLong(f"the reply is {len(reply):,} characters; one over "
                           f"{MAX_REPLY_CHARS:,} is not read")
    fences = re.finditer(r"```(?:json|JSON|javascript|js)?\s*\n?(.*?)```", reply, re.S)
    candidates = [m.group(1).strip() for m in itertools.islice(fences, MAX_TRIES)]
    candidates.append(reply)
    for text in candidates:
        stripped = text.strip()
        if stripped[:1] in "[{":
            value = _loads_lenient(stripped)
            if value is not None:
                return value
        for start, end in _balanced_spans(text)[:MAX_TRIES]:
            value = _loads_lenient(text[start:end])
            if isinstance(value, (list, dict)):
                return value
    return None


def _items(value: Any, *keys: str) -> list[Any] | None:
    if isinstance(value, list):
        return value
    if isinstance(value, dict):
        for k in keys:
            if isinstance(value.get(k), list):
                return value[k]
        return [value]
    return None


def _as_bool(value: Any, default: bool = True) -> bool:
    if isinstance(value, bool):
        return value
    if isinstance(value, (int, float)):
        return bool(value)
    if isinstance(value, str):
        v = value.strip().lower()
        if v in ("false", "no", "0", "n", "none", "not actionable"):
            return False
        if v in ("true", "yes", "1", "y"):
            return True
    return default
