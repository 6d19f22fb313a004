"""A value nested too deeply for the wire is a clear InvalidInputError before it leaves the
client, never a raw RecursionError or orjson error (found in review)."""

from __future__ import annotations

import pytest

from skillbank.errors import InvalidInputError
from skillbank.sharing import wire


def nested(depth: int) -> list:
    value: list = []
    for _ in range(depth):
        value = [value]
    return value


def test_a_value_thousands_of_levels_deep_is_refused_clearly():
    with pytest.raises(InvalidInputError, match="nested more than"):
        wire.encode({"task": nested(5000)})


def test_a_value_too_deep_for_json_is_refused_clearly():
    encoded = wire.encode(nested(300))  # within Python's recursion, beyond orjson's 254 levels
    with pytest.raises(InvalidInputError, match="nested more than"):
        wire.dumps({"args": [encoded]})


def test_ordinary_values_travel_unchanged():
    value = {"task": "x", "k": 3, "tags": ["a", "b"], "deep": nested(50)}
    assert wire.decode(wire.encode(value)) == value
    assert wire.dumps({"args": wire.encode([value])}).startswith(b"{")
