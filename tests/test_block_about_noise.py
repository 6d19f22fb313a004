"""A task that says "about" gets no rule for that word alone (session 16).

Every distilled rule's `when_to_use` ends "; about <key words>", and "about" was no stop word
of the keyword index: "Summarise this article about whales" and "Tell me about whales" matched
every rule by keyword (0.22 against a floor of 0.15), so two support-desk rules came into the
block of a task about whales. In process and through a client of another process that owns
the root.
"""

from __future__ import annotations

import pytest

from owner_client import bank_for
from skillbank.keyword import tokenize

TAUGHT = [
    ("Use parameterised queries, and always add an index for foreign keys.",
     "Write the SQL migration for the orders table"),
    ("Always include the tracking link, and apologise when an order is late.",
     "Where is my order 1234?"),
    ("Use type hints on public functions, and write docstrings in Google style.",
     "Write a Python helper to parse dates"),
]


def test_about_is_a_stop_word():
    assert tokenize("Tell me about whales") == tokenize("Tell me whales")


def _check(bank) -> None:
    for critique, task in TAUGHT:
        bank.guidelines.learn(critique, task=task)
    assert "about" in bank.guidelines.list()[0].when_to_use
    for task in ["Summarise this article about whales", "Tell me about whales"]:
        assert not bank.context_for(task).guidelines, task
    assert bank.context_for("Where is my order 5678? It is late.").guidelines  # still found


@pytest.mark.parametrize("remote", [False, True], ids=["in-process", "client-of-owner"])
def test_in_process_and_through_a_client(tmp_path, minilm, remote):
    with bank_for(tmp_path, remote, minilm) as bank:
        _check(bank)
