"""Every search returns a `Hits`, whichever path answered (fix-hits #1, session 32; left by
session 31).

`experiences.recall` and `guidelines.search` returned a plain `list` when the index answered
(dense and keyword), and a `skillbank.records.Hits` only when they answered degraded (a Chroma
server down, keyword-only mode), so `hits.dense_complete` / `hits.note` raised AttributeError on
the good path, while `skills.search` always gave a `Hits`. Now all three do, with fields that say
what happened: `dense_complete` True and no note when dense search saw everything, False with
`pending` and a note while a model is missing. The MCP face reads `search_mode` from them. Both
in process and through a client of an owner process.
"""

from __future__ import annotations

import pytest
from mcp import Client

from owner_client import bank_for
from skillbank.records import Hits

TASK = "Migrate the orders table to the new schema"


def _fill(bank) -> None:
    bank.experiences.record(task=TASK, outcome="failure",
                            feedback="Lock the orders table before migrating it.")
    bank.guidelines.add("Lock a table before migrating its schema.", topic="sql")


def _searches(bank) -> dict[str, Hits]:
    return {"recall": bank.experiences.recall("migrate the orders table schema"),
            "guidelines": bank.guidelines.search("migrate the orders table schema"),
            "skills": bank.skills.search("migrate the orders table schema")}


@pytest.mark.parametrize("remote", [False, True], ids=["in-process", "client-of-owner"])
def test_recall_and_guideline_search_return_hits_on_the_good_path(tmp_path, remote):
    """Before: `recall` and `guidelines.search` gave a plain list here, and `.dense_complete`
    raised AttributeError."""
    with bank_for(tmp_path, remote) as bank:
        _fill(bank)
        found = _searches(bank)
        for name, hits in found.items():
            assert type(hits) is Hits, name
            assert hits.dense_complete is True and hits.pending == 0 and hits.note == "", name
        for name in ("recall", "guidelines"):
            hits = found[name]
            assert len(hits) == 1, name
            assert hits.best_keyword > 0 and hits.best_dense >= hits[0].dense, name
        # The answers with nothing in them, too.
        for empty in (bank.experiences.recall(TASK, k=0), bank.guidelines.search(TASK, k=0),
                      bank.experiences.recall("   "),
                      bank.experiences.recall(TASK, outcome="success")):
            assert type(empty) is Hits and not empty and empty.dense_complete is True


@pytest.mark.parametrize("remote", [False, True], ids=["in-process", "client-of-owner"])
def test_without_a_model_every_search_says_keyword_only(tmp_path, remote, monkeypatch):
    """No embedding model: each search still says so (it did before only where it was a
    `Hits`), in the same fields."""
    from skillbank.embeddings import MiniLMEmbedding

    monkeypatch.setenv("SKILLBANK_MODEL_DIR", str(tmp_path / "no-model-here"))
    monkeypatch.setenv("HOME", str(tmp_path / "home"))
    monkeypatch.setattr("skillbank.index_fill._warned_keyword_only", False)
    with bank_for(tmp_path, remote, embedding=MiniLMEmbedding()) as bank:
        _fill(bank)
        found = _searches(bank)
        for name in ("recall", "guidelines"):
            hits = found[name]
            assert type(hits) is Hits and len(hits) == 1, name
            assert hits.dense_complete is False and hits.pending >= 1, name
            assert "found by keyword" in hits.note and hits.best_dense == 0, name


@pytest.mark.parametrize("remote", [False, True], ids=["in-process", "client-of-owner"])
async def test_the_mcp_search_mode_is_read_from_the_results(tmp_path, remote):
    """The MCP tools read `search_mode` from the results' own `dense_complete` (a plain list
    took the skill index's state instead)."""
    from skillbank.mcp_server import build_server

    with bank_for(tmp_path, remote) as bank:
        _fill(bank)
        async with Client(build_server(bank, trusted=True)) as client:
            recalled = await client.call_tool("recall_experiences", {"task": TASK})
            searched = await client.call_tool("search_guidelines", {"task": TASK})
        for result in (recalled, searched):
            assert not result.is_error, result.content[0].text
            assert result.structured_content["search_mode"] == "hybrid"
        assert recalled.structured_content["experiences"][0]["task"] == TASK
        assert searched.structured_content["guidelines"]


def test_a_face_reads_the_fields_of_every_search():
    """`mode_of` reads `dense_complete` from any search's results."""
    from skillbank.mcp_server.modes import mode_of

    keyword = Hits()
    keyword.dense_complete = False
    assert mode_of(Hits()) == "hybrid" and mode_of(keyword) == "keyword"
