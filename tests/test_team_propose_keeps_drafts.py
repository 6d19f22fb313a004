"""`propose` in team mode keeps a reviewer's edit and an adopted draft's name (hunt-drafts #1 and
#3's team kin, session 26).

#1: a reviewer's `edit_draft` on worker B (in the shared `sb_drafts` row) was overwritten by
worker A's next `propose` once one more run of its kind was recorded. #3: a draft proposed on A
and adopted on B (no `skills_repo`: the skill is B's own, team.md) was proposed on A again as a
NEW-skill draft of the adopted name once failures tagged with it came, which B could not adopt
("already exists"); the shared ledger's `adopted` entry was never read. Real PostgreSQL
(private cluster) and `chroma run`, two workers with their own roots.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from team_worker import reindex_drafts, until

pytest.importorskip("psycopg")

NOTE = "REVIEWER NOTE: pause the writers first."


def _text(bank, name: str) -> str:
    return Path(bank.skills.draft(name).path).read_text(encoding="utf-8")


def _run(bank, n: int, outcome: str = "success", **more) -> str:
    return bank.experiences.record(f"Rebuild the search index of shop {n}", outcome,
                                   when_to_use="When rebuilding a shop's search index",
                                   steps=[{"action": "pause_writes"}, {"action": "reindex"}], **more)


def test_an_edit_on_b_survives_new_evidence_proposed_on_a(two_machines):
    a, b = two_machines
    [name] = reindex_drafts(a)
    assert until(lambda: [d.name for d in b.skills.drafts()] == [name])
    b.skills.edit_draft(name, _text(b, name).rstrip() + f"\n\n{NOTE}\n")
    assert until(lambda: NOTE in _text(a, name))

    _run(a, 99)
    assert a.skills.propose() == []
    assert NOTE in _text(a, name) and NOTE in _text(b, name)


def test_a_draft_adopted_on_b_is_never_proposed_again_as_a_new_skill_on_a(two_machines):
    a, b = two_machines
    [name] = reindex_drafts(a)
    assert until(lambda: [d.name for d in b.skills.drafts()] == [name])
    b.skills.adopt(name)
    for n, lesson in ((7, "Check the replica lag before the rebuild."),
                      (8, "Snapshot the index before the rebuild starts.")):
        _run(a, n, "failure", tags=[f"skill:{name}"], lessons=[lesson])

    assert a.skills.propose() == []  # A has no such skill: nothing to revise, no new draft
    (revision,) = b.skills.propose()  # B, whose skill it is, gets the revision
    assert revision.name == name and revision.revises == name
    assert "replica lag" in b.skills.adopt(name).body
