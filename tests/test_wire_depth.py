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


def _deep_dict(depth: int) -> dict:
    value: dict = {}
    for _ in range(depth):
        value = {"a": value}
    return value


@pytest.mark.parametrize("through", ["in-process", "client-of-owner"])
def test_a_step_nested_too_deeply_says_so(tmp_path, through):
    """A step's action_input 300 levels deep was refused as "characters that are not valid
    Unicode text (lone surrogates)" in process; through a client the wire refuses it first."""
    import contextlib

    from owner_client import client_of_owner
    from skillbank import Skillbank
    from skillbank.embeddings import HashEmbedding

    opened = (Skillbank.open(tmp_path / "root", embedding_function=HashEmbedding(),
                             include_bundled=False) if through == "in-process"
              else client_of_owner(tmp_path / "root"))
    with opened as bank:
        with pytest.raises(InvalidInputError, match="nested") as caught:
            bank.experiences.record(task="Migrate the users table", outcome="success",
                                    steps=[{"action": "migrate", "action_input": _deep_dict(300)}])
        assert "surrogate" not in str(caught.value)
        assert bank.experiences.list(kind="experience") == []
        with contextlib.suppress(AttributeError):
            bank.flush()
