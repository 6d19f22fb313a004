"""A critique gives at most 20 rules whoever distilled them (hunt-llm #1, session 32).

`GuidelineMemory.learn` held the in-process distiller to MAX_AGENT_RULES (20) and reported the
rest `ignored`, but took a `candidates=` list whole: MCP sampling and a client bank's own
distiller both pass the model's rules that way, so a sampled reply of 100 rules added 100
rules (18 s under the write lock; 3,000 held the server for many minutes) and nothing said
anything was held back."""

from __future__ import annotations

import json
from typing import Any

import mcp_types as types
import pytest
from mcp import Client

from owner_client import bank_for
from skillbank.distill import LLMDistiller
from skillbank.memories.guidelines.agent_rules import MAX_AGENT_RULES

CRITIQUE = "Use British spelling in the docs, and never put SQL in f-strings."


def many_rules(n: int) -> str:
    return json.dumps({"rules": [{"text": f"Always prefix log line {i} with tag-{i} zebra{i}.",
                                  "topic": f"t{i % 7}"} for i in range(n)]})


def held(entries: list[Any], n: int) -> None:
    def get(e: Any, key: str) -> Any:
        return e[key] if isinstance(e, dict) else getattr(e, key)

    learnt = [e for e in entries if get(e, "action") != "ignored"]
    ignored = [get(e, "detail") for e in entries if get(e, "action") == "ignored"]
    assert len(learnt) == MAX_AGENT_RULES, [get(e, "action") for e in entries]
    assert ignored == [f"the distiller gave {n} rules; the first {MAX_AGENT_RULES} were learnt "
                       f"(at most {MAX_AGENT_RULES} per critique)"]


@pytest.mark.parametrize("mode", ["auto", "legacy"])
async def test_a_sampled_reply_is_held_to_20_rules(tmp_path, mode):
    """Before: `distilled_by client_model`, all 100 rules `added`, no `ignored` entry."""
    from skillbank import Skillbank
    from skillbank.embeddings import HashEmbedding
    from skillbank.mcp_server import build_server

    async def sample(context: Any, params: types.CreateMessageRequestParams) -> Any:
        return types.CreateMessageResult(role="assistant", model="fake-llm",
                                         content=types.TextContent(type="text", text=many_rules(40)))

    with Skillbank.open(tmp_path / "root", embedding_function=HashEmbedding(),
                        include_bundled=False) as bank:
        async with Client(build_server(bank, trusted=True), mode=mode,
                          sampling_callback=sample) as client:
            result = await client.call_tool("learn_from_critique",
                                            {"critique": CRITIQUE, "task": "write docs"})
        assert not result.is_error, result.content[0].text
        learned = result.structured_content
        assert learned["distilled_by"] == "client_model"
        held(learned["entries"], 40)
        assert len(bank.guidelines.list()) == MAX_AGENT_RULES


@pytest.mark.parametrize("remote", [False, True], ids=["in-process", "client-of-owner"])
def test_candidates_and_a_client_banks_distiller_are_held_to_20_rules(tmp_path, remote):
    """Before: `learn(critique, candidates=<30 rules>)` added 30; a client bank whose own
    distiller gave 30 rules (sent to the owner as candidates) added 30, nothing ignored."""
    with bank_for(tmp_path, remote) as bank:
        given = [{"text": f"Always name table {i} with prefix zebra{i}.", "topic": "sql"}
                 for i in range(30)]
        held(bank.guidelines.learn("Name the tables well.", candidates=given).entries, 30)
        bank.distiller = LLMDistiller(lambda prompt: many_rules(30))
        held(bank.guidelines.learn(CRITIQUE, task="write docs").entries, 30)
        assert len(bank.guidelines.list()) == 2 * MAX_AGENT_RULES
