"""An episode a thread closed with an outcome is never updated by a later one.

In a support thread, "Where is my order 1234?" succeeded; asked again later in the same thread
it failed. The thread's record was looked up by its task alone, so the second run updated the
first: one experience marked failure holding the successful run's steps, the success gone.
An outcome ends an episode (docs/api.md); the same request later is a new one. In process and
through a client.
"""

from __future__ import annotations

from owner_client import client_of_owner
from skillbank import Skillbank
from skillbank.embeddings import HashEmbedding

ASK = "Where is my order 1234?"


def _twice(bank) -> None:
    first = bank.experiences.record_messages(
        [{"role": "user", "content": ASK}, {"role": "assistant", "content": "It ships today."}],
        task=ASK, outcome="success", thread="support-7")
    second = bank.experiences.record_messages(
        [{"role": "user", "content": ASK}, {"role": "assistant", "content": "I cannot find it."}],
        task=ASK, outcome="failure", feedback="The lookup tool was down.", thread="support-7")
    assert first != second
    kept = bank.experiences.get(first)
    assert kept.outcome == "success" and kept.feedback is None
    assert "ships today" in str([s.model_dump() for s in kept.steps])
    assert "cannot find" not in str([s.model_dump() for s in kept.steps])
    assert bank.experiences.get(second).outcome == "failure"
    # An open episode (no outcome yet) is still continued, and closed by its outcome: no twin.
    third = bank.experiences.record_messages([{"role": "user", "content": "Refund order 77"}],
                                             task="Refund order 77", thread="support-7")
    closed = bank.experiences.record_messages(
        [{"role": "assistant", "content": "Refunded."}], task="Refund order 77",
        outcome="success", thread="support-7", followup=True)
    assert closed == third and bank.experiences.get(third).outcome == "success"


def test_a_closed_episode_is_not_updated(tmp_path):
    with Skillbank.open(tmp_path / "root", embedding_function=HashEmbedding(),
                        include_bundled=False) as bank:
        _twice(bank)


def test_a_closed_episode_is_not_updated_through_a_client(tmp_path):
    with client_of_owner(tmp_path / "root") as bank:
        _twice(bank)
