"""hunt-llm #6, session 32: an echoed prompt's placeholder lesson ("...") was stored as an
active lesson, `last_error` None. The memory operation runs in process and through a client of
an owner process with the same model."""

from __future__ import annotations

import json

import pytest

from scripted_llm import bank_with_model, echo_model
from skillbank.distill import LLMDistiller
from skillbank.records import Experience

REMOTE = pytest.mark.parametrize("remote", [False, True], ids=["in-process", "client-of-owner"])


@REMOTE
def test_an_echoed_prompt_is_no_lesson(tmp_path, remote):
    """hunt-llm #6, session 32: LlamaIndex's MockLLM echoes the prompt, and its JSON template
    `[{"kind": "...", "text": "...", "when_to_use": "..."}]` was stored as an active lesson
    "..." (last_error None). Now the lesson is the model-free one, from the run itself."""
    with bank_with_model(tmp_path, remote, "echo") as bank:
        eid = bank.experiences.record(task="Migrate the users table", outcome="failure",
                                      feedback="Forgot to lock the table; writes were lost.")
        ids = bank.experiences.distill(eid)
        assert ids
        for lesson_id in ids:
            record = bank.experiences.get(lesson_id)
            assert record.task != "..." and record.when_to_use != "..."
            for lesson in record.lessons:
                assert "lock the table" in lesson.text, lesson
                assert lesson.when_to_use != "..."


def test_a_wordless_lesson_falls_back_with_a_reason():
    """hunt-llm #6: a reply of placeholder lessons falls back and says why; a reply mixing a
    lesson with a placeholder keeps the lesson, and a wordless when_to_use is the run's own."""
    exp = Experience(task="Migrate the users table", outcome="failure",
                     feedback="Forgot to lock the table; writes were lost.")
    d = LLMDistiller(echo_model)
    lessons = d.lessons_from_experience(exp)
    assert lessons and all("..." != lesson.text for lesson in lessons)
    assert d.last_error.startswith("UnusableReply")
    reply = json.dumps([{"kind": "failure_trigger", "text": "Lock the table before migrating it.",
                         "when_to_use": "..."}, {"kind": "note", "text": "...", "when_to_use": "..."}])
    d = LLMDistiller(lambda prompt: reply)
    lessons = d.lessons_from_experience(exp)
    assert [(lesson.kind, lesson.text) for lesson in lessons] == [
        ("failure_trigger", "Lock the table before migrating it.")]
    assert lessons[0].when_to_use != "..." and d.last_error is None
    rule_reply = json.dumps([{"text": "Lock tables before migrations.", "when_to_use": "..."}])
    rules = LLMDistiller(lambda prompt: rule_reply).rules_from_critique("Lock tables first.")
    assert rules[0].when_to_use != "..."
