"""Reading JSON out of model replies: fences, chatter and small errors tolerated."""

from __future__ import annotations

import ast
import json
import re
from typing import Any


def _balanced(text: str, start: int) -> str | None:
    """The bracketed JSON value starting at text[start], respecting strings."""
    open_ch = text[start]
    close_ch = "]" if open_ch == "[" else "}"
    depth = 0
    quote: str | None = None
    escape = False
    for i in range(start, len(text)):
        ch = text[i]
        if quote:
            if escape:
                escape = False
            elif ch == "\\":
                escape = True
            elif ch == quote:
                quote = None
            continue
        if ch in "\"'" and (ch == '"' or not text[i - 1].isalnum()):
            quote = ch
        elif ch in "[{":
            depth += 1
        elif ch in "]}":
            depth -= 1
            if depth == 0:
                return text[start : i + 1] if ch == close_ch else None
    return None


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

    Returns None when nothing parseable is found.
    """
    if not isinstance(reply, str) or not reply.strip():
        return None
    candidates: list[str] = []
    for m in re.finditer(r"```(?:json|JSON|javascript|js)?\s*\n?(.*?)```", reply, re.S):
        candidates.append(m.group(1).strip())
    candidates.append(reply)
    for text in candidates:
        stripped = text.strip()
        if stripped[:1] in "[{":
            value = _loads_lenient(stripped)
            if value is not None:
                return value
        tries = 0
        for i, ch in enumerate(text):
            if ch in "[{":
                tries += 1
                if tries > 20:  # bounded work on pathological replies
                    break
                chunk = _balanced(text, i)
                if chunk is None:
                    continue
                value = _loads_lenient(chunk)
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
