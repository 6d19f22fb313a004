"""`skillbank migrate` after the root erased a draft together with its forgotten experiences.

Forgetting an experience erases the drafts drawn from it and blanks their names in the drafts
ledger (the name is a slug of the forgotten words: tests/test_forget_draft_names.py), so the
erase leaves the ledger no close of that name to read, as a discard does. Runs of the same
kind of task that were not forgotten then make a new draft, which can take the same name (the
words are the task's). A rerun read that proposal as a refresh of the draft a first run
imported and the team no longer holds ("the team's decision stands") and skipped it: the new
draft never reached the team. The ledger does say what happened: no entry before the new
proposal names the draft any more, so the draft the first run imported was erased.
Real private PostgreSQL cluster and `chroma run`, as tests/test_team_migrate_pending.py.
"""

from __future__ import annotations

import uuid

import pytest

from test_team_migrate_pending import TASKS, _open, _team

pytest.importorskip("psycopg")


def _record(bank, kind: str, runs: range) -> list[str]:
    task, when, steps = TASKS[kind]
    return [bank.experiences.record(task.format(n=n), "success", when_to_use=when,
                                    steps=[{"action": s} for s in steps]) for n in runs]


@pytest.mark.parametrize("team", ["kept-it", "discarded-it"])
def test_a_new_draft_after_the_root_forgot_an_imported_ones_runs_is_imported(
        tmp_path, postgres, chroma_server, team):
    """A first run imports a draft; the team keeps it pending, or discards it; the laptop
    forgets one of its runs (the draft is erased there and, by the rerun, in the team too),
    and later runs make a new draft under the same name. The rerun imports the new draft
    (before: skipped), carries nothing of the forgotten run, and a third run changes nothing."""
    from skillbank.team.migrate import migrate_root

    laptop = tmp_path / "laptop"
    bank = _open(laptop)
    try:
        runs = _record(bank, "tapes", range(3))
        [first] = bank.skills.propose(min_support=3)
    finally:
        bank.close()
    deployment = uuid.uuid4().hex[:16]
    migrate_root(laptop, postgres.url, deployment=deployment)
    if team == "discarded-it":
        worker = _team(tmp_path, chroma_server, postgres, deployment)
        try:
            worker.skills.discard(first.name)
        finally:
            worker.close()

    bank = _open(laptop)  # forget one run: its draft goes with it; new runs draft it again
    try:
        bank.forget(runs[0])
        assert bank.skills.drafts() == []
        later = _record(bank, "tapes", range(3, 5))
        [second] = bank.skills.propose(min_support=3)
        assert second.name == first.name, "the new draft took another name: nothing to test"
        assert runs[0] not in second.sources and set(later) <= set(second.sources)
    finally:
        bank.close()

    assert migrate_root(laptop, postgres.url, deployment=deployment).changed
    worker = _team(tmp_path, chroma_server, postgres, deployment)
    try:
        drafts = worker.skills.drafts()
        assert [d.name for d in drafts] == [second.name], "the new draft was not imported"
        assert set(drafts[0].sources) == set(second.sources)
        assert runs[0] not in drafts[0].sources
    finally:
        worker.close()
    third = migrate_root(laptop, postgres.url, deployment=deployment)
    assert not third.changed, third.imported


def test_a_draft_the_root_erased_with_its_forgotten_runs_is_not_brought_back(
        tmp_path, postgres, chroma_server):
    """The guard on the other side: the laptop forgets a run of a draft a first run imported
    and makes no new one. The rerun removes the draft from the team, and neither it nor a
    third run brings it back."""
    from skillbank.team.migrate import migrate_root

    laptop = tmp_path / "laptop"
    bank = _open(laptop)
    try:
        runs = _record(bank, "certs", range(3))
        [first] = bank.skills.propose(min_support=3)
    finally:
        bank.close()
    deployment = uuid.uuid4().hex[:16]
    migrate_root(laptop, postgres.url, deployment=deployment)
    bank = _open(laptop)
    try:
        bank.forget(runs[0])
        assert bank.skills.drafts() == [] and bank.skills.propose(min_support=3) == []
    finally:
        bank.close()
    for _ in range(2):
        migrate_root(laptop, postgres.url, deployment=deployment)
        worker = _team(tmp_path, chroma_server, postgres, deployment)
        try:
            assert worker.skills.drafts() == [], f"{first.name} came back"
        finally:
            worker.close()
