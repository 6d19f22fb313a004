"""An LLM distiller that fails says so outside MCP too (hunt-llm #7, session 32).

Before: a `ChatModelDistiller` over a model raising `PermissionError("401 invalid API key")`
fell back to the model-free rules without a word: the `LearnReport` had only the rules, nothing
was logged, and `distiller.last_error` (shared by every call, overwritten by concurrent ones)
was the only trace. Now the report says `distilled_by` ("model" / "rules") and this call's own
`distill_error`, and a warning is logged once per kind of failure.
"""

from __future__ import annotations

import json
import logging
import threading

import pytest

from owner_client import bank_for
from skillbank.distill import LLMDistiller

GOOD = json.dumps([{"text": "Quote every identifier in generated SQL.", "topic": "sql"}])


def model(prompt: str) -> str:
    if "broken" in prompt:
        raise PermissionError("401 invalid API key")
    return GOOD


@pytest.mark.parametrize("remote", [False, True], ids=["in-process", "client-of-owner"])
def test_the_report_says_who_read_the_critique_and_why_not_the_model(tmp_path, remote):
    """Before: both reports looked alike; nothing said the second one was model-free."""
    with bank_for(tmp_path, remote) as bank:
        bank.distiller = LLMDistiller(model, timeout=30)
        read = bank.guidelines.learn("The column names broke nothing; quote them.", task="sql")
        assert (read.distilled_by, read.distill_error) == ("model", None)
        failed = bank.guidelines.learn("This broken report used f-strings for SQL; never do that.",
                                       task="sql")
        assert failed.distilled_by == "rules"
        assert failed.distill_error == "PermissionError: 401 invalid API key"
        assert failed.entries  # the model-free reading, reported as ever
        given = bank.guidelines.learn("Anything.", rules=[{"text": "Always log the query."}])
        assert given.distilled_by is None  # the caller read it


def test_a_failure_is_logged_once_per_kind(caplog, monkeypatch):
    """Before: no log line at all. (Once per process and kind: the MCP server makes a
    distiller per call.)"""
    import skillbank.distill.llm as llm

    monkeypatch.setattr(llm, "_warned", set())
    distiller = LLMDistiller(model, timeout=30)
    with caplog.at_level(logging.WARNING, logger="skillbank.distill"):
        for _ in range(3):
            distiller.rules_from_critique("This broken run used tabs; use spaces.")
        distiller.complete = lambda prompt: "I cannot help with that."
        distiller.rules_from_critique("Use spaces.")
    lines = [r.getMessage() for r in caplog.records if r.name == "skillbank.distill"]
    assert len(lines) == 2, lines
    assert "PermissionError: 401 invalid API key" in lines[0]
    assert "unparseable reply" in lines[1] and "model-free" in lines[1]
    with caplog.at_level(logging.WARNING, logger="skillbank.distill"):
        LLMDistiller(model, timeout=30).rules_from_critique("This broken run used tabs.")
    assert len([r for r in caplog.records if r.name == "skillbank.distill"]) == 2


def test_each_call_has_its_own_answer_when_calls_share_a_distiller():
    """Before: `last_error` of one shared distiller was whichever call wrote it last; each
    result now carries its own."""
    distiller = LLMDistiller(model, timeout=30)
    results: dict[int, object] = {}
    start = threading.Barrier(8)

    def work(i: int) -> None:
        start.wait()
        critique = f"Run {i} was broken; never do that." if i % 2 else f"Run {i}: quote names."
        results[i] = distiller.rules_from_critique(critique)

    threads = [threading.Thread(target=work, args=(i,)) for i in range(8)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    for i, rules in results.items():
        if i % 2:
            assert (rules.distilled_by, rules.reason) == ("rules",
                                                          "PermissionError: 401 invalid API key")
        else:
            assert (rules.distilled_by, rules.reason) == ("model", None)
            assert [r.text for r in rules] == ["Quote every identifier in generated SQL."]
