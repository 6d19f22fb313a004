"""Error texts for the person or model that reads them: what was wrong, the valid form, and the
tool or command that helps. Never a pydantic dump with links, never a Python call."""

from __future__ import annotations

import re
from typing import Any, Iterable

_PHRASES = {
    "missing": "is required",
    "extra_forbidden": "is not an argument of this tool",
    "int_type": "must be a whole number",
    "int_parsing": "must be a whole number",
    "float_type": "must be a number",
    "float_parsing": "must be a number",
    "bool_type": "must be true or false",
    "bool_parsing": "must be true or false",
    "string_type": "must be a string",
    "list_type": "must be a list",
    "dict_type": "must be an object",
    "model_type": "must be an object",
}


def _shown(value: Any) -> str:
    text = repr(value) if not isinstance(value, bool) else str(value).lower()
    return text if len(text) <= 40 else text[:37] + "…"


#: A union's branch, as pydantic names it in an error's location ("StepInput", "str"): not a
#: place in the arguments a caller could find.
_BRANCH = re.compile(r"^(?:[A-Z]\w*|str|int|float|bool|none|list\[.*\]|dict\[.*\])$")


def _where(loc: Iterable[Any]) -> tuple[str, str | None]:
    """The location as the caller wrote it, and the part before a union's branch (or None)."""
    parts: list[str] = []
    union: str | None = None
    for part in loc:
        if isinstance(part, str) and _BRANCH.match(part):
            union = ".".join(parts)
            continue
        parts.append(str(part))
    return ".".join(parts) or "the arguments", union


def _one_per_value(found: list[tuple[str, str, str | None, str]]) -> list[str]:
    """One message per value a union refused: the branch that went deeper (an object whose
    field is wrong) when there is one, else the branches joined ("must be an object or a
    string"), never pydantic's branch names."""
    out: list[str] = []
    done: set[str] = set()
    for where, phrase, union, got in found:
        if union is None:
            out.append(f"{where} {phrase}{got}")
            continue
        if union in done:
            continue
        done.add(union)
        siblings = [row for row in found if row[2] == union]
        deeper = [row for row in siblings if row[0] != union]
        if deeper:
            out.extend(f"{w} {p}{g}" for w, p, _, g in deeper)
        else:
            kinds = [p.removeprefix("must be ") for _, p, _, _ in siblings]
            out.append(f"{union} must be {' or '.join(dict.fromkeys(kinds))}{siblings[0][3]}")
    return out


def describe_errors(errors: Iterable[dict[str, Any]]) -> list[str]:
    """One short phrase per pydantic error: 'k must be a whole number (got true)'."""
    found: list[tuple[str, str, str | None, str]] = []
    for error in list(errors)[:6]:
        where, union = _where(error.get("loc", ()))
        kind = str(error.get("type", ""))
        ctx = error.get("ctx") or {}
        if kind in _PHRASES:
            phrase = _PHRASES[kind]
        elif kind == "literal_error":
            phrase = f"must be one of {ctx.get('expected', 'the listed values')}"
        elif kind in ("greater_than_equal", "greater_than", "less_than_equal", "less_than"):
            bound = next(iter(ctx.values()), "")
            sign = {"greater_than_equal": "at least", "greater_than": "more than",
                    "less_than_equal": "at most", "less_than": "less than"}[kind]
            phrase = f"must be {sign} {bound}"
        elif kind == "string_too_short":
            phrase = ("must not be empty" if ctx.get("min_length") == 1
                      else f"must have at least {ctx.get('min_length')} characters")
        elif kind == "string_too_long":
            phrase = f"must have at most {ctx.get('max_length')} characters"
        elif kind == "too_long":
            phrase = f"must have at most {ctx.get('max_length')} items"
        else:
            phrase = str(error.get("msg", "is not valid")).replace("Input should be", "must be")
        got = "" if kind == "missing" or "input" not in error else f" (got {_shown(error['input'])})"
        found.append((where, phrase, union, got))
    return _one_per_value(found)


def signature(name: str, schema: dict[str, Any] | None) -> str:
    """'find_skills(task, k=5)' from a tool's input schema."""
    if not schema:
        return f"{name}(…)"
    props = schema.get("properties", {})
    required = set(schema.get("required", []))
    parts = []
    for arg, spec in props.items():
        if arg in required:
            parts.append(arg)
        elif "default" in spec and spec["default"] is not None:
            parts.append(f"{arg}={_shown(spec['default'])}")
        else:
            parts.append(f"{arg}?")
    return f"{name}({', '.join(parts)})"


def tool_arguments(name: str, errors: Iterable[dict[str, Any]],
                   schema: dict[str, Any] | None) -> str:
    """The text of a tool call refused for its arguments."""
    problems = "; ".join(describe_errors(errors))
    return (f"Invalid arguments for {name}: {problems}. Valid form: {signature(name, schema)}; "
            "tools/list shows each argument's type and limits.")


#: (pattern, replacement): the facade's Python-call hints in MCP terms (tools, or the CLI for
#: what only a person should do). Applied to every error a tool or resource passes on.
_HINTS: tuple[tuple[Any, str], ...] = ()


def _hints() -> tuple[tuple[Any, str], ...]:
    global _HINTS
    if not _HINTS:
        import re

        _HINTS = tuple((re.compile(p), r) for p, r in (
            (r"find ids with bank\.guidelines\.list\([^)]*\) or search\(\)",
             "find ids with search_guidelines(task) or list_pending()"),
            (r"find ids with bank\.guidelines\.search\(task\) or list\(\)",
             "find ids with search_guidelines(task) or list_pending()"),
            (r",? or run sync\(\) if the file was just added by hand", ""),
            (r"run sync\(\)", "ask the user to run `skillbank reindex`"),
            (r"use retire\(\) for an active one",
             "an active rule is retired by rating it unhelpful (rate_memory) or with "
             "`skillbank guidelines retire ID`"),
            (r"waits for approve\(\) or reject\(\)",
             "waits for review_memory(id, 'approve' or 'reject') in a trusted session"),
            (r"(skill '[^']+' already exists); update it instead",
             r"\1; save_skill with the same name updates the bank's own copy"),
            (r"; drafts\(\) lists them", "; `skillbank skills drafts` lists them"),
            (r"; history\(\) lists them", "; `skillbank skills history NAME` lists them"),
            (r"as listed by history\(\)", "as listed by `skillbank skills history NAME`"),
        ))
    return _HINTS


def mcp_terms(message: str) -> str:
    """`message` with the Python calls the facade names replaced by tools or CLI commands."""
    if "(" not in message:
        return message
    for pattern, replacement in _hints():
        message = pattern.sub(replacement, message)
    return message
