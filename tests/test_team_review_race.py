"""Reviewers on two team workers deciding one pending experience (hunt-teamclock #2, session
30): the second decision sees the first.

Before, `approve`, `reject` and `forget` checked the record's status on the worker's own copy
of the index, as it was when the call began (the change feed is read before a call), not once
the write lock was taken. A reject on worker B just after an approve on worker A was answered
"rejected" and deleted the record A had just made active (reviewed memory gone, which reject
promises never to do); the other way round, A's approve of a record B had just rejected was
answered "active" for a record that no longer existed. Both were told it worked.

No timing: B's memory is taken before A decides (as a call whose feed check ran just before
A's write committed), and B decides after A's call returned.
"""

from __future__ import annotations

import pytest

from skillbank.errors import InvalidInputError, NotFoundError
from team_worker import until
from test_chroma_outage import own_chroma  # noqa: F401 - the fixture

pytest.importorskip("psycopg")


def _pending(a, b) -> str:
    eid = a.experiences.record("Check the nightly backup of the billing database", "success",
                               feedback="Compare the row counts with the primary.",
                               trusted=False)
    until(lambda: _status(b, eid) == "pending")  # B has read it: its copy says pending
    return eid


def _status(bank, eid: str) -> str | None:
    try:
        return bank.experiences.get(eid).status
    except NotFoundError:
        return None


def test_a_reject_on_b_after_an_approve_on_a_is_refused(two_machines):
    """Before: B's reject was answered {"rejected": True} and the approved record was gone."""
    a, b = two_machines
    eid = _pending(a, b)
    b_memory = b.experiences  # B's call began: its change feed was read
    assert a.experiences.approve(eid)["status"] == "active"
    with pytest.raises(InvalidInputError, match="is active, not pending"):
        b_memory.reject(eid)
    assert a.experiences.get(eid).status == "active"
    until(lambda: _status(b, eid) == "active")


def test_an_approve_on_a_after_a_reject_on_b_finds_nothing(two_machines):
    """Before: A's approve was answered "active" (and journaled) for the rejected record."""
    a, b = two_machines
    eid = _pending(a, b)
    a_memory = a.experiences
    assert a_memory.get(eid).status == "pending"  # A's reviewer looks at it first
    assert b.experiences.reject(eid)["rejected"] is True
    with pytest.raises(NotFoundError):
        a_memory.approve(eid)
    for bank in (a, b):
        until(lambda: _status(bank, eid) is None)


def test_an_approve_on_b_takes_the_lessons_distilled_on_a(two_machines):
    """B's approve named the lessons the experience brought from B's own copy of the index: a
    lesson distilled on A after B last read the change feed stayed pending for good, its
    experience active (review 2, session 30). Now the shared index is asked for them."""
    a, b = two_machines
    eid = a.experiences.record("Check the nightly backup of the billing database", "success",
                               feedback="Compare the row counts with the primary.",
                               trusted=False, distill=False)
    until(lambda: _status(b, eid) == "pending")
    b_memory = b.experiences  # B's call began: its change feed was read
    lessons = a.experiences.distill(eid)
    assert lessons, "the deterministic distiller draws a lesson from the feedback"
    approved = b_memory.approve(eid)["approved"]
    assert sorted(approved) == sorted([eid, *lessons]), approved
    for lesson in lessons:
        until(lambda: _status(a, lesson) == "active")


def test_an_approve_takes_a_lesson_distilled_while_chroma_was_down(tmp_path, own_chroma,
                                                                     postgres):
    """Worker A distilled a lesson while the Chroma server was down (kept in PostgreSQL, not
    yet in Chroma); B's approve asked Chroma for the experience's lessons, met the outage and
    decided on its own copy: the lesson stayed pending under the active experience even after
    the server came back (session 31's review). The lessons come from PostgreSQL now."""
    from team_worker import two_banks

    with two_banks(tmp_path / "machine-a", tmp_path / "machine-b", own_chroma.url,
                   postgres.url) as (a, b):
        eid = a.experiences.record("Check the nightly backup of the billing database",
                                   "success", feedback="Compare the row counts with the primary.",
                                   trusted=False, distill=False)
        until(lambda: _status(b, eid) == "pending")
        own_chroma.stop()
        lessons = a.experiences.distill(eid)
        assert lessons, "the deterministic distiller draws a lesson from the feedback"
        approved = b.experiences.approve(eid)["approved"]
        assert sorted(approved) == sorted([eid, *lessons]), approved
        own_chroma.start()

        def active_after_a_recall(bank, lesson: str) -> bool:  # the recall indexes what waited
            bank.experiences.recall("nightly backup of the billing database", count_use=False)
            return _status(bank, lesson) == "active"

        for lesson in lessons:
            until(lambda: active_after_a_recall(a, lesson))
