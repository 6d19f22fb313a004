"""Chroma `where` filters, evaluated in memory for the keyword (BM25) side of a search.

The dense side asks Chroma with the same filter, so both sides see the same items.
"""

from __future__ import annotations

from typing import Any


def matches(where: dict[str, Any] | None, metadata: dict[str, Any]) -> bool:
    """Evaluate a Chroma `where` filter on one metadata dict (for the in-memory BM25 side)."""
    if not where:
        return True
    for key, condition in where.items():
        if key == "$and":
            if not all(matches(c, metadata) for c in condition):
                return False
            continue
        if key == "$or":
            if not any(matches(c, metadata) for c in condition):
                return False
            continue
        value = metadata.get(key)
        if not isinstance(condition, dict):
            condition = {"$eq": condition}
        for op, expected in condition.items():
            if not _compare(op, value, expected):
                return False
    return True


def _compare(op: str, value: Any, expected: Any) -> bool:
    if op == "$eq":
        return value == expected
    if op == "$ne":
        return value != expected
    if op == "$in":
        return value in expected
    if op == "$nin":
        return value not in expected
    if op == "$contains":
        return isinstance(value, (list, tuple)) and expected in value
    if op == "$not_contains":
        return not (isinstance(value, (list, tuple)) and expected in value)
    if value is None:
        return False
    if op == "$gt":
        return value > expected
    if op == "$gte":
        return value >= expected
    if op == "$lt":
        return value < expected
    if op == "$lte":
        return value <= expected
    raise ValueError(f"unsupported filter operator {op!r}")
