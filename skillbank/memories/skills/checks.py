"""Argument checks for the skill library's public methods.

Faces pass through what models and people typed; a wrong type must come back as an
`InvalidInputError` that names the argument and says what is expected, never as a raw
TypeError from deep inside, and never be silently reinterpreted (`k=-1` dropping the last hit,
`success="no"` counting as a success).
"""

from __future__ import annotations

import math
from typing import Any

from skillbank.errors import InvalidInputError
from skillbank.fsutil import check_unicode

MAX_K = 100_000


def check_k(k: Any, what: str = "k", *, limit: int = MAX_K) -> int:
    """A positive whole number of results (bools are not numbers here)."""
    if isinstance(k, bool) or not isinstance(k, int):
        raise InvalidInputError(f"{what} must be a whole number from 1 to {limit}, "
                                f"got {k!r} ({type(k).__name__})")
    if not 1 <= k <= limit:
        raise InvalidInputError(f"{what} must be from 1 to {limit}, got {k}")
    return k


def check_score(value: Any, what: str = "min_score") -> float | None:
    """An optional finite number (a similarity floor)."""
    if value is None:
        return None
    if isinstance(value, bool) or not isinstance(value, (int, float)) or not math.isfinite(value):
        raise InvalidInputError(f"{what} must be a finite number such as 0.2, got {value!r}")
    return float(value)


def check_str(value: Any, what: str, *, optional: bool = False, non_empty: bool = False
              ) -> str | None:
    """A string argument (optionally None, optionally required to hold some text)."""
    if value is None and optional:
        return None
    if not isinstance(value, str):
        raise InvalidInputError(f"{what} must be a string, got {type(value).__name__}")
    if non_empty and not value.strip():
        raise InvalidInputError(f"{what} must not be empty")
    return check_unicode(value, what)  # not the tokenizer's TypeError


def check_flag(value: Any, what: str, *, optional: bool = True) -> bool | None:
    """True, False (or None when optional): "no", 1 and the like are refused, not guessed."""
    if value is None and optional:
        return None
    if not isinstance(value, bool):
        raise InvalidInputError(f"{what} must be true or false{' or null' if optional else ''}, "
                                f"got {value!r}")
    return value


def check_mapping(value: Any, what: str) -> dict[str, Any] | None:
    """An optional mapping with string keys (frontmatter, resources)."""
    if value is None:
        return None
    if not isinstance(value, dict) or not all(isinstance(k, str) for k in value):
        raise InvalidInputError(f"{what} must be a mapping with string keys, "
                                f"got {type(value).__name__}")
    return value


def check_budget(value: Any, what: str = "budget_tokens") -> int | None:
    """An optional non-negative whole number of tokens."""
    if value is None:
        return None
    if isinstance(value, bool) or not isinstance(value, int) or value < 0:
        raise InvalidInputError(f"{what} must be a whole number of tokens, 0 or more, got {value!r}")
    return value
