"""What a block shows (skillbank/context.py): no rules of another domain riding on one word."""

from __future__ import annotations

import pytest

from owner_client import bank_for
from skillbank import Skillbank
from skillbank.embeddings import HashEmbedding


def test_guidelines_of_another_topic_are_not_shown_on_a_shared_word(tmp_path):
    with Skillbank.open(tmp_path / "root", embedding_function=HashEmbedding(),
                        include_bundled=False) as bank:
        g = bank.guidelines
        python = [g.add(text, topic="python").guideline_id for text in (
            "Parse ISO dates in Python with datetime.fromisoformat.",
            "Add type hints to every Python function.",
            "Write a docstring for every public Python function.")]
        support = g.add("Always cite the source of a policy in customer replies.",
                        topic="support").guideline_id
        task = "Write a Python function that parses ISO dates and cite the source"
        assert support in [h.id for h in g.search(task, k=8)]  # keyword overlap finds it
        block = bank.context_for(task, budget_tokens=1600)
        assert support not in block.ids
        assert python[0] in block.ids  # the rule the task is about


def test_a_larger_budget_shows_more_rules_of_the_task_topic(tmp_path):
    with Skillbank.open(tmp_path / "root", embedding_function=HashEmbedding(),
                        include_bundled=False) as bank:
        rules = ["Document Python functions with docstrings.", "Annotate Python functions "
                 "with type hints.", "Open files in Python with pathlib.", "Log Python errors "
                 "with logging, not print.", "Model Python records as dataclasses.", "Format "
                 "Python strings with f-strings.", "Stream large Python sequences through "
                 "generators.", "Close Python resources with context managers.", "Count Python "
                 "loop indexes with enumerate.", "Raise specific Python exceptions.", "Keep "
                 "Python asserts out of production checks.", "Name Python constants in "
                 "capitals.", "Sort Python imports alphabetically.", "Test Python functions "
                 "with pytest."]
        for text in rules:
            bank.guidelines.add(text, topic="python")
        assert len(bank.guidelines.list(status="active")) >= 12
        task = "Write Python functions"
        # The budget decides how many of the topic's rules come, not a fixed count of
        # candidates: every rule of the task's family is a candidate, best first.
        small = bank.context_for(task, budget_tokens=250)
        large = bank.context_for(task, budget_tokens=1600)
        assert small.tokens <= 250 and small.omitted > 0
        assert 0 < len(small.guidelines) < len(large.guidelines)
        assert len(large.guidelines) >= 12  # not 8: the old cap on candidates at 800 tokens


def test_an_experience_is_shown_with_its_outcome_feedback_and_what_it_produced(tmp_path):
    with Skillbank.open(tmp_path / "root", embedding_function=HashEmbedding(),
                        include_bundled=False) as bank:
        bank.experiences.record_messages(
            [{"role": "user", "content": "Add an index on the users email column"},
             {"role": "assistant", "content": "CREATE INDEX users_email_idx ON users (email);"}],
            outcome="failure", feedback="Locked the table in production; use CONCURRENTLY.")
        text = bank.context_for("Add an index on the users email column",
                                budget_tokens=1600).text
        assert "(failure)" in text and "CONCURRENTLY" in text
        assert "Produced: CREATE INDEX users_email_idx" in text


@pytest.mark.parametrize("remote", [False, True], ids=["in-process", "client"])
def test_what_a_run_produced_is_its_answer_not_the_closing_pleasantry(tmp_path, remote):
    """A session that ends "thanks, that's all" / "You're welcome!" showed the user's closing
    turn as what the run produced (hunt, session 17); the answer before it is what a model
    can use."""
    with bank_for(tmp_path, remote) as bank:
        bank.experiences.record_messages(
            [{"role": "user", "content": "Where is my order 1234?"},
             {"role": "assistant", "content": "Order 1234 shipped on May 2 with DHL."},
             {"role": "user", "content": "thanks, that's all"},
             {"role": "assistant", "content": "You're welcome, have a nice day!"}],
            outcome="success")
        text = bank.context_for("Where is my order 1234?", budget_tokens=1600).text
        assert "Produced: Order 1234 shipped on May 2 with DHL." in text
        assert "welcome" not in text and "that's all" not in text
