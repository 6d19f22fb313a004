"""A lone surrogate in a task gets one clear error from every read (hunt-li #6).

A web client cut an emoji's escape in half (``"Write the sales report \\ud83d"``, which
`json.loads` turns into a lone surrogate). `guidelines.search`, the retriever and
`experiences.record` said "task is not valid Unicode text (it holds a lone surrogate)", but
`context_for` and `skills.search` raised the tokenizer's raw `TypeError: TextEncodeInput must be
Union[...]`; the memory block logged a traceback and the agent got no memory. With the offline
MiniLM model (the hash embedding encodes anything), in process and through a client of another
process that owns the root.
"""

from __future__ import annotations

import json

import pytest

from owner_client import bank_for
from skillbank.errors import InvalidInputError

TASK = json.loads('"Write the sales report \\ud83d"')

READS = {
    "context_for": lambda bank: bank.context_for(TASK),
    "skills.search": lambda bank: bank.skills.search(TASK),
    "guidelines.search": lambda bank: bank.guidelines.search(TASK),
    "experiences.recall": lambda bank: bank.experiences.recall(TASK),
}


@pytest.mark.parametrize("remote", [False, True], ids=["in-process", "client-of-owner"])
def test_every_read_names_the_lone_surrogate(tmp_path, minilm, remote):
    with bank_for(tmp_path, remote, minilm) as bank:
        bank.guidelines.add("Always use metric units in sales reports.")
        bank.experiences.record(task="Write the sales report for March", outcome="success")
        bank.skills.create("sales-report", "Writes the monthly sales report.", "# Steps\n")
        for name, read in READS.items():
            with pytest.raises(InvalidInputError, match="lone surrogate") as caught:
                read(bank)
            assert "task" in str(caught.value), name
        assert bank.context_for("Write the sales report").guidelines  # the bank still answers
