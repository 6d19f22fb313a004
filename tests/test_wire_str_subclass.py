"""A LangChain message's `.text` (langchain_core's TextAccessor: a str subclass with __slots__)
is a task like any other (hunt-agents #2, session 29). In process it worked; a client of an
owner process raised `TypeError: vars() argument must have __dict__ attribute` in the wire
encoder, so an agent run through a client bank that named its task with `.text` was never
recorded. In process and as a client of another process that owns the root."""

from __future__ import annotations

import pytest

from owner_client import bank_for
from skillbank.sharing import wire

REMOTE = pytest.mark.parametrize("remote", [False, True], ids=["in-process", "client-of-owner"])


class Slotted(str):
    """A str subclass without a __dict__, as langchain_core's TextAccessor is."""

    __slots__ = ()


def test_a_slotted_str_travels_as_its_text():
    encoded = wire.encode({"task": Slotted("Migrate the orders table")})
    assert encoded == {"task": "Migrate the orders table"}
    assert type(encoded["task"]) is str


@REMOTE
def test_a_message_text_is_a_task_on_every_bank(tmp_path, remote):
    from langchain_core.messages import HumanMessage

    task = HumanMessage(content="Migrate the orders table to the new schema").text
    assert type(task) is not str  # the subclass this test is about
    with bank_for(tmp_path, remote) as bank:
        recorded = bank.experiences.record(task=task, outcome="success")
        assert [r.task for r in bank.experiences.list()] == [str(task)]
        assert bank.experiences.get(recorded).outcome == "success"
        assert bank.context_for(task).task == str(task)
        assert bank.skills.search(task) is not None
