"""A conversation's turn recorded while the Chroma server is down is kept (hunt-agents-team #1,
session 31).

A turn recorded with ``thread=`` (both adapters always pass one: a LangChain thread id, a
LlamaIndex session) found its thread's open record by asking Chroma (`ids_where`), unguarded:
while the server was down it raised (``IndexUnreached``, or httpx's ``ConnectError``) before
anything was written, so every agent run the middleware or the memory block recorded during a
Chroma outage was lost, in team mode and on a plain ``chroma_url`` root, where a record without
a thread was kept in the journal and indexed once the server was back. Now the thread's record
is found in the index's keyword side (what was read before the outage, and what was staged
since): the turn updates it, a new thread starts its record, and both are indexed in Chroma
once it answers.

In process only: on a Chroma server no process owns the root for others (each opens the index
itself), so there is no client of an owner to route the call through.
"""

from __future__ import annotations

import time
import uuid

from skillbank import Skillbank
from skillbank.embeddings import HashEmbedding
from team_worker import open_bank, until
from test_chroma_outage import own_chroma  # noqa: F401 - the fixture

TASK = "Upgrade the pipeline runners"


def _turn(number: int) -> list[dict[str, str]]:
    return [{"role": "user", "content": f"Upgrade the pipeline runners, part {number}"},
            {"role": "assistant", "content": f"runner batch {number} upgraded"}]


def _turns_of(bank: Skillbank, eid: str) -> list[str]:
    text = " ".join(str(step) for step in bank.experiences.get(eid).steps)
    return [n for n in "123" if f"runner batch {n} upgraded" in text]


def _record_turns_through_an_outage(bank: Skillbank, server) -> None:
    record = bank.experiences.record_messages
    first = record(_turn(1), task=TASK, thread="th-1")  # the index has reached its server
    server.stop()
    second = record(_turn(2), task=TASK, thread="th-1")  # raised IndexUnreached / ConnectError
    other = record(_turn(1), task=TASK, thread="th-2", outcome="success")
    assert second == first and other != first
    third = record(_turn(3), task=TASK, thread="th-1", outcome="success")
    assert third == first
    assert _turns_of(bank, first) == ["1", "2", "3"]
    hits = bank.experiences.recall("upgrade pipeline runners", count_use=False)
    assert {first, other} <= {h.id for h in hits} and not hits.dense_complete, hits
    server.start()
    deadline = time.monotonic() + 300  # bounded only against a hang: nothing is timed
    while getattr(hits := bank.experiences.recall("upgrade pipeline runners",
                                                  count_use=False), "note", None):
        assert time.monotonic() < deadline, hits.note
        time.sleep(0.5)
    assert {first, other} <= {h.id for h in hits}, hits
    assert _turns_of(bank, first) == ["1", "2", "3"]


def test_a_thread_turn_recorded_while_chroma_is_down_is_kept_on_a_chroma_url_root(
        tmp_path, own_chroma):  # noqa: F811 - the fixture
    bank = Skillbank.open(tmp_path / "root", embedding_function=HashEmbedding(),
                          include_bundled=False, chroma_url=own_chroma.url)
    try:
        _record_turns_through_an_outage(bank, own_chroma)
    finally:
        bank.close()


def test_a_thread_turn_recorded_while_chroma_is_down_is_kept_in_team_mode(
        tmp_path, own_chroma, postgres):  # noqa: F811 - the fixture
    bank = open_bank(tmp_path / "root", own_chroma.url, postgres.url, uuid.uuid4().hex[:16])
    try:
        _record_turns_through_an_outage(bank, own_chroma)
    finally:
        bank.close()


def test_turns_of_one_thread_on_two_workers_while_chroma_is_down_are_all_kept(
        tmp_path, own_chroma, postgres):  # noqa: F811 - the fixture
    """One conversation served by two team workers (a shared checkpointer) while Chroma is
    down: worker B's turn extends the version worker A wrote during the outage, which B's index
    never received (its copy of the entry is the one from before the outage), and not that
    older version: A's turn was dropped from the record (its steps "1", "3"). The thread's
    record found in B's keyword side is read at its newest version in PostgreSQL first."""
    deployment = uuid.uuid4().hex[:16]
    a = open_bank(tmp_path / "a", own_chroma.url, postgres.url, deployment)
    b = open_bank(tmp_path / "b", own_chroma.url, postgres.url, deployment)
    try:
        first = a.experiences.record_messages(_turn(1), task=TASK, thread="th-1")
        assert b.experiences.get(first).id == first  # B has read the entry
        own_chroma.stop()
        assert a.experiences.record_messages(_turn(2), task=TASK, thread="th-1") == first
        assert b.experiences.record_messages(_turn(3), task=TASK, thread="th-1") == first
        assert _turns_of(b, first) == ["1", "2", "3"]  # B's turn dropped A's: ["1", "3"]
        own_chroma.start()  # A's copy catches up by a sync (a recall), as after any outage

        def a_has_all() -> bool:
            a.experiences.recall("upgrade pipeline runners", count_use=False)
            return _turns_of(a, first) == ["1", "2", "3"]
        until(a_has_all, seconds=300)  # bounded only against a hang: nothing is timed
    finally:
        b.close()
        a.close()
