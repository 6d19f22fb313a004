"""`skillbank migrate` after the *team* forgot what a laptop still holds: forget means gone.

A first run imports a laptop's experiences; the team forgets some of them (by id, in the
deployment). The laptop knows nothing of that, and keeps working: a later turn of a forgotten
conversation writes the whole record again (the same id, turn one's steps included), and a
skill draft drawn from forgotten runs names them as its sources. A rerun imported both, so the
forgotten experience came back to the team with what it said, and a draft built from it
awaited review there. Both are now left out, and the report says so. Real private PostgreSQL
cluster and `chroma run`, as tests/test_team_migrate_pending.py.
"""

from __future__ import annotations

import uuid

import pytest

from test_team_migrate_pending import TASKS, _open, _team

pytest.importorskip("psycopg")

SECRET = "the staging root password is hunter2"


def test_what_the_team_forgot_is_not_brought_back_by_a_rerun(tmp_path, postgres, chroma_server):
    from skillbank.team.migrate import migrate_root

    laptop = tmp_path / "laptop"
    bank = _open(laptop)
    try:
        talk = bank.experiences.record_messages(
            [{"role": "user", "content": f"Log in to staging; {SECRET}"},
             {"role": "assistant", "content": "Logged in."}],
            task="Log in to the staging box", thread="chat-1")
        task, when, steps = TASKS["tapes"]
        runs = [bank.experiences.record(task.format(n=n), "success", when_to_use=when,
                                        steps=[{"action": s} for s in steps]) for n in range(2)]
        kept = bank.experiences.record("Water the office plants", "success")
    finally:
        bank.close()
    deployment = uuid.uuid4().hex[:16]
    migrate_root(laptop, postgres.url, deployment=deployment)

    team = _team(tmp_path, chroma_server, postgres, deployment)
    try:
        for eid in (talk, *runs):
            team.forget(eid)
    finally:
        team.close()

    bank = _open(laptop)  # the laptop goes on: a second turn, a third run, a draft of the three
    try:
        again = bank.experiences.record_messages(
            [{"role": "user", "content": "Now restart nginx there."},
             {"role": "assistant", "content": "Restarted."}],
            task="Log in to the staging box", outcome="success", thread="chat-1",
            followup=True)
        assert again == talk
        runs.append(bank.experiences.record(task.format(n=2), "success", when_to_use=when,
                                            steps=[{"action": s} for s in steps]))
        [draft] = bank.skills.propose(min_support=3)
        assert set(runs) <= set(draft.sources)
    finally:
        bank.close()

    report = migrate_root(laptop, postgres.url, deployment=deployment)
    said = " | ".join(report.skipped)
    assert "experience event(s) of records the deployment forgot" in said, said
    assert f"drafts/{draft.name}: drawn from experiences the deployment forgot" in said, said
    team = _team(tmp_path, chroma_server, postgres, deployment)
    try:
        assert team.experiences.get(kept).task == "Water the office plants"
        for eid in (talk, *runs[:2]):
            with pytest.raises(Exception):
                team.experiences.get(eid)
        assert runs[2] in {h.id for h in team.experiences.recall(task.format(n=2), k=5)}
        assert all(SECRET not in str(h.record) for h in
                   team.experiences.recall("Log in to the staging box", k=10))
        assert team.skills.drafts() == [], "a draft drawn from forgotten runs was imported"
    finally:
        team.close()
    third = migrate_root(laptop, postgres.url, deployment=deployment)
    assert not third.changed, third.imported


def test_a_lesson_the_team_forgot_does_not_come_back_inside_its_parent(
        tmp_path, postgres, chroma_server):
    """The team forgets one lesson (not its experience): the deployment drops its text from
    the parent. A later turn of that conversation on the laptop writes the parent again with
    the lesson in it; the rerun imports the turn without the forgotten lesson's text (before:
    the text was back in the team's record)."""
    from skillbank.team.migrate import migrate_root

    laptop = tmp_path / "laptop"
    bank = _open(laptop)
    try:
        talk = bank.experiences.record_messages(
            [{"role": "user", "content": "Log in to staging"},
             {"role": "assistant", "content": "Logged in."}],
            task="Log in to the staging box", thread="chat-1",
            lessons=[SECRET, "Check the VPN first."])
    finally:
        bank.close()
    deployment = uuid.uuid4().hex[:16]
    migrate_root(laptop, postgres.url, deployment=deployment)
    team = _team(tmp_path, chroma_server, postgres, deployment)
    try:
        lessons = {h.record.task: h.id for h in team.experiences.recall(SECRET, k=10)
                   if h.record.kind == "lesson"}
        team.forget(lessons[SECRET])
        assert SECRET not in str(team.experiences.get(talk).model_dump())
    finally:
        team.close()

    bank = _open(laptop)
    try:
        assert talk == bank.experiences.record_messages(
            [{"role": "user", "content": "Now restart nginx there."},
             {"role": "assistant", "content": "Restarted."}],
            task="Log in to the staging box", outcome="success", thread="chat-1",
            followup=True)
    finally:
        bank.close()
    migrate_root(laptop, postgres.url, deployment=deployment)
    team = _team(tmp_path, chroma_server, postgres, deployment)
    try:
        back = team.experiences.get(talk)
        assert back.outcome == "success"  # the turn itself was imported
        assert SECRET not in str(back.model_dump()), "the forgotten lesson is back"
        assert "Check the VPN first." in [lesson.text for lesson in back.lessons]
    finally:
        team.close()
