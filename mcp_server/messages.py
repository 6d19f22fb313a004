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
_BRANCH = re.compile(r"^(?:[A-Z]\w*|str|int|float|bool|none|(?:list|dict|literal)\[.*\])$")


def _where(loc: Iterable[Any]) -> tuple[str, str | None]:
    """The location as the caller wrote it, and the part before a union's branch (or None)."""
    parts: list[str] = []
    union: str | None = None
    for part in loc:  # a branch follows the argument (or item) it is of: never first
        if parts and isinstance(part, str) and _BRANCH.match(part):
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


def mcp_terms(message: str) -> str:
    """`message` with the Python calls the facade names replaced by tools or CLI commands
    (`skillbank.tool_text.tool_terms`, shared with the LangChain and LlamaIndex tools)."""
    from skillbank.tool_text import tool_terms

    return tool_terms(message)
