"""A client that offers sampling but whose user declines it can still learn from a critique
(hunt-sampling #3, session 36).

On a 2026-07-28 session the sampling request rides the input-required flow: a declined request
(or a sampling handler that fails, or a reply the HTTP guard refuses) ends in the client's own
driver, which raises and never sends the retry, so the server cannot fall back on its own.
Every call of such a client asked the same question again and failed: nothing was ever learned.
`use_client_model: false` skips the client's model and extracts the rules with the built-in
distiller, on either protocol.
"""

from __future__ import annotations

from typing import Any

import mcp_types as types
import pytest
from mcp import Client

from skillbank import Skillbank
from skillbank.embeddings import HashEmbedding


@pytest.fixture
def bank(tmp_path):
    bank = Skillbank.open(tmp_path / "root", embedding_function=HashEmbedding(),
                          include_bundled=False)
    yield bank
    bank.close()


@pytest.mark.parametrize("mode", ["auto", "legacy"])
async def test_a_client_that_declines_sampling_learns_with_use_client_model_false(bank, mode):
    from skillbank.mcp_server import build_server

    asked: list[str] = []

    async def declines(context: Any, params: Any) -> types.ErrorData:
        asked.append("asked")
        return types.ErrorData(code=-1, message="User rejected sampling request")

    async with Client(build_server(bank, trusted=True), mode=mode,
                      sampling_callback=declines) as client:
        result = await client.call_tool("learn_from_critique", {
            "critique": "Always close files with a context manager.",
            "task": "Python file handling", "use_client_model": False})
    assert not result.is_error, result.content
    learned = result.structured_content
    assert asked == []  # the client's model was not asked
    assert learned["distilled_by"] == "rules"
    assert [e["action"] for e in learned["entries"]] == ["added"]
    assert [g.text for g in bank.guidelines.list()] == [learned["entries"][0]["text"]]
