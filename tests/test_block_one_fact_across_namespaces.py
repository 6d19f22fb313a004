"""One rule or experience held in a team's and a person's namespace is shown once (session 16).

Alice learnt a critique the team already had; a block read in her scope (which reads the
team's namespace) showed "Quote identifiers in SQL." and the failed CSV import twice, and so
did the documented team + personal middleware pair across its two blocks: blocks were deduped
by id only. In process and through a client of another process that owns the root.
"""

from __future__ import annotations

import pytest

from owner_client import bank_for
from skillbank import Scope
from skillbank.context import without_shown

TASK = "Import the users CSV into PostgreSQL with SQL"


@pytest.mark.parametrize("remote", [False, True], ids=["in-process", "client-of-owner"])
def test_the_same_fact_in_two_namespaces_is_shown_once(tmp_path, remote):
    with bank_for(tmp_path, remote) as bank:
        for ns in ("team", "alice"):
            bank.guidelines.learn("Quote identifiers in SQL.",
                                  task="Import the orders CSV into PostgreSQL", namespace=ns)
            bank.experiences.record(task="Import the orders CSV into PostgreSQL",
                                    outcome="failure", namespace=ns,
                                    feedback="The file was Latin-1; the import garbled names.")
        alice = bank.scoped(Scope(principal="alice", namespace="alice", reads=("team",),
                                  role="contributor"))
        text = alice.context_for(TASK).text
        assert text.count("Quote identifiers in SQL.") == 1, text
        assert text.count("Latin-1") == 1, text
        team = bank.context_for(TASK, namespace="team").text
        mine = bank.context_for(TASK, namespace="alice").text
        assert "Quote identifiers" in team and "Quote identifiers" in mine
        assert without_shown(mine, team) == ""  # the personal block adds nothing new


@pytest.mark.parametrize("remote", [False, True], ids=["in-process", "client-of-owner"])
def test_a_lesson_of_a_shown_experience_is_not_shown_again(tmp_path, remote):
    """With distill=True the lesson of a failed run restated its feedback right beside the
    experience's own line: one sentence twice in one block."""
    feedback = "The migration locked the table for ten minutes and writes timed out."
    with bank_for(tmp_path, remote) as bank:
        bank.experiences.record(task="Migrate the users table to add an email column",
                                outcome="failure", feedback=feedback, distill=True)
        assert any(e.kind == "lesson" for e in bank.experiences.list(kind="lesson"))
        text = bank.context_for("Migrate the users table to add an email column").text
        assert text.count(feedback) == 1, text


@pytest.mark.parametrize("remote", [False, True], ids=["in-process", "client-of-owner"])
def test_runs_of_one_kind_failing_the_same_way_are_shown_once(tmp_path, remote):
    """Three "Refund order N" failures with one feedback were three lines saying "Needs the
    finance role." (they differ only in the order number)."""
    with bank_for(tmp_path, remote) as bank:
        for order in ("1111", "2222", "3333"):
            bank.experiences.record(task=f"Refund order {order}", outcome="failure",
                                    feedback="Needs the finance role.")
        block = bank.context_for("Refund order 4444", budget_tokens=1500)
        assert block.text.count("Needs the finance role.") == 1, block.text
        assert len([i for i in block.ids if i.startswith("exp-")]) == 1


@pytest.mark.parametrize("remote", [False, True], ids=["in-process", "client-of-owner"])
def test_runs_that_differ_in_a_number_and_say_nothing_more_stay_apart(tmp_path, remote):
    """Without feedback, the number may be the whole difference: "Python 3.12" and "Python
    3.8" failures are two lessons (a review found the fold above dropped one of them)."""
    with bank_for(tmp_path, remote) as bank:
        bank.experiences.record(task="Upgrade the service to Python 3.12", outcome="failure",
                                lessons=["tensorflow has no 3.12 wheels yet: pin 3.11"])
        bank.experiences.record(task="Upgrade the service to Python 3.8", outcome="failure",
                                lessons=["3.8 lacks the match statement used in router.py"])
        block = bank.context_for("Upgrade the service to Python 3.9", budget_tokens=1500)
        assert "tensorflow" in block.text and "match statement" in block.text, block.text
