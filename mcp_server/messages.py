"""Error texts for the person or model that reads them: what was wrong, the valid form, and the
tool or command that helps. Never a pydantic dump with links, never a Python call."""

from __future__ import annotations

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


def describe_errors(errors: Iterable[dict[str, Any]]) -> list[str]:
    """One short phrase per pydantic error: 'k must be a whole number (got true)'."""
    out: list[str] = []
    for error in list(errors)[:6]:
        loc = [str(p) for p in error.get("loc", ())]
        where = ".".join(loc) or "the arguments"
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
        out.append(f"{where} {phrase}{got}")
    return out


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
