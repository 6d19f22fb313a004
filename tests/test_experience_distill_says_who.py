"""`experiences.distill` says who wrote the lessons, as `guidelines.learn` does (session 33, left
item 2 of session 32's hunt-llm #7).

Before: it returned a bare list of lesson ids, so a caller could not tell a model's lessons
from the model-free fallback's, nor why the model failed (a 401, a timeout): the result had no
`distilled_by` / `distill_error`, and `skillbank.records` had no `Distilled` type to name it.
"""

from __future__ import annotations

import json

import pytest

from owner_client import bank_for
from skillbank.distill import LLMDistiller
from skillbank.records import Distilled

LESSON = "Take the lock in small batches when migrating a busy table."
GOOD = json.dumps([{"text": LESSON, "when_to_use": "migrating a busy table"}])


def model(prompt: str) -> str:
    if "broken" in prompt:
        raise PermissionError("401 invalid API key")
    return GOOD


def failed_run(memory, feedback: str) -> str:
    return memory.record(task="Migrate the orders database", outcome="failure",
                         feedback=feedback)


@pytest.mark.parametrize("remote", [False, True], ids=["in-process", "client-of-owner"])
def test_the_bank_s_own_distiller_says_it_wrote_the_lessons(tmp_path, remote):
    """The model-free distiller (the bank's default, the owner's for a client): "rules"."""
    with bank_for(tmp_path, remote) as bank:
        memory = bank.experiences
        eid = failed_run(memory, "The migration locked the table for ten minutes.")
        distilled = memory.distill(eid)
        assert isinstance(distilled, Distilled)
        assert (distilled.distilled_by, distilled.distill_error) == ("rules", None)
        assert distilled and all(i.startswith("lsn-") for i in distilled)
        assert list(distilled) == list(memory.distill(eid))  # the same lessons, folded


def test_a_model_s_lessons_and_a_failed_model_are_told_apart(tmp_path):
    """Before: both results were plain lists; nothing said the second was model-free, nor
    that the model answered 401."""
    with bank_for(tmp_path, False) as bank:
        bank.distiller = LLMDistiller(model, timeout=30)
        memory = bank.experiences
        read = memory.distill(failed_run(memory, "The migration locked the table."))
        assert (read.distilled_by, read.distill_error) == ("model", None)
        assert len(read) == 1 and LESSON in memory.get(read[0]).model_dump_json()
        failed = memory.distill(failed_run(memory, "The broken migration dropped a column."))
        assert failed.distilled_by == "rules"
        assert failed.distill_error == "PermissionError: 401 invalid API key"


def test_a_custom_distiller_that_does_not_say_is_none(tmp_path):
    class Quiet:
        def lessons_from_experience(self, experience, similar=()):
            return [LESSON]

    with bank_for(tmp_path, False) as bank:
        bank.distiller = Quiet()
        memory = bank.experiences
        distilled = memory.distill(failed_run(memory, "The migration locked the table."))
        assert len(distilled) == 1
        assert (distilled.distilled_by, distilled.distill_error) == (None, None)


def test_the_cli_prints_who_distilled(tmp_path, cli_root):
    from typer.testing import CliRunner

    from skillbank.cli import app

    runner = CliRunner()
    eid = json.loads(runner.invoke(app, [
        "--json", "experiences", "record", "--task", "Migrate the orders database",
        "--outcome", "failure", "--feedback", "The migration locked the table."]).stdout)["id"]
    shown = json.loads(runner.invoke(app, ["--json", "experiences", "distill", eid]).stdout)
    assert (shown["distilled_by"], shown["distill_error"]) == ("rules", None)
