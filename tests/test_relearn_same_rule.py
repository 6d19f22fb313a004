"""The very same rule learnt again is merged, however many look-alikes there are (session 16).

Among ten rules "Always review the X before merging." (each one a template with another value,
kept apart), learning "Always review the queues before merging." again added a second copy:
the look-alikes all scored 1.00 with it, and the cut to the nearest few left the identical one
out. Three processes learning the same critiques ended with texts stored three times. In
process and through a client of another process that owns the root.
"""

from __future__ import annotations

import collections

import pytest

from owner_client import bank_for

THINGS = ["tests", "docs", "migrations", "secrets", "logs", "invoices", "emails", "backups",
          "images", "queues"]


def _check(bank) -> None:
    for thing in THINGS:
        bank.guidelines.learn(f"Always review the {thing} before merging.")
    again = bank.guidelines.learn("Always review the queues before merging.").entries[0]
    assert again.action == "merged", again
    texts = collections.Counter(g.text for g in bank.guidelines.list())
    assert set(texts.values()) == {1} and len(texts) == len(THINGS)


@pytest.mark.parametrize("remote", [False, True], ids=["in-process", "client-of-owner"])
def test_in_process_and_through_a_client(tmp_path, minilm, remote):
    with bank_for(tmp_path, remote, minilm) as bank:
        _check(bank)
