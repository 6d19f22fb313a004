"""`propose` never writes over a draft it may not, and reads every failure lesson a run holds.

hunt-drafts (session 26), all in `_propose_new` / `_propose_revisions` (now `proposing.py`):
#1 a person's edit of a pending NEW-skill draft was overwritten when one more run of its kind
   arrived (only revisions kept the hash of the text skillbank wrote);
#3 a second `propose` replaced a pending revision with a new-skill draft of the same name that
   could not be adopted ("already exists"), the revision's lessons lost for good;
#6 another namespace's contributor redrew (and so destroyed) a stale revision he may not read;
#7 revisions read only inline `lessons=`: failures recorded with feedback (and its distilled
   lesson records) — all MCP `record_experience` and the LangChain middleware give — never
   produced one.

In process and through a client of another process that owns the root, with the real MiniLM.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from owner_client import bank_for
from skillbank.records import Experience, Lesson
from test_scope import ALICE, BOB

REMOTE = pytest.mark.parametrize("remote", [False, True], ids=["in-process", "client-of-owner"])
NAME = "import-csv-database"
NOTE = "HUMAN NOTE: run VACUUM ANALYZE afterwards"
LESSON = "Check the file encoding is UTF-8 before running COPY"


def csv_run(bank, table: str) -> str:
    return bank.experiences.record(
        task=f"Import the {table} CSV file into a database table", outcome="success",
        when_to_use="Loading CSV exports into a database",
        steps=[{"action": "inspect the CSV header"}, {"action": "COPY the rows"}])


def adopted_csv_skill(bank) -> str:
    for table in ("orders", "users", "invoices"):
        csv_run(bank, table)
    (draft,) = bank.skills.propose()
    assert draft.name == NAME and draft.revises is None
    bank.skills.adopt(NAME)
    return NAME


def text(draft) -> str:
    return Path(draft.path).read_text(encoding="utf-8")


# ------------------------------------------------------------------ #1: an edited new-skill draft

@REMOTE
def test_an_edited_new_skill_draft_is_not_written_over_by_more_runs(tmp_path, remote, minilm):
    with bank_for(tmp_path, remote, minilm) as bank:
        for table in ("orders", "users", "invoices"):
            csv_run(bank, table)
        (first,) = bank.skills.propose()
        csv_run(bank, "payments")  # untouched: new evidence refreshes it, same name
        (refreshed,) = bank.skills.propose()
        assert refreshed.name == first.name and len(refreshed.sources) == 4

        edited = text(refreshed).replace("COPY the rows", f"COPY the rows\n3. {NOTE}", 1)
        bank.skills.edit_draft(first.name, edited)
        csv_run(bank, "refunds")
        assert bank.skills.propose() == []
        kept = bank.skills.draft(first.name)
        assert NOTE in text(kept) and len(kept.sources) == 4

        by_hand = text(kept).replace(NOTE, NOTE + ", twice")  # the file edited in place
        Path(kept.path).write_text(by_hand, encoding="utf-8")
        csv_run(bank, "shipments")
        assert bank.skills.propose() == []
        assert text(bank.skills.draft(first.name)) == by_hand


# ------------------------------------------------------------------ #3: a pending revision

def fail_twice(bank, name: str, **lesson: object) -> list[str]:
    return [bank.experiences.record(
        task=f"Import the {table} CSV file into a database table", outcome="failure",
        tags=[f"skill:{name}"], **(lesson or {"lessons": [f"{LESSON} ({table})."]}))
        for table in ("payments", "refunds")]


@REMOTE
def test_a_second_propose_keeps_a_pending_revision_adoptable(tmp_path, remote, minilm):
    with bank_for(tmp_path, remote, minilm) as bank:
        name = adopted_csv_skill(bank)
        fail_twice(bank, name)
        (revision,) = bank.skills.propose()
        assert revision.revises == name
        drawn = text(revision)

        assert bank.skills.propose() == []  # the failed runs joined the CSV group: no new draft
        (pending,) = bank.skills.drafts()
        assert pending.revises == name and text(pending) == drawn

        bank.skills.update(name, body=bank.skills.load(name).body + "\n## AUTHOR EDIT\n\nok\n")
        (redrawn,) = bank.skills.propose()  # a stale revision is drawn again as a revision
        assert redrawn.revises == name
        adopted = bank.skills.adopt(name)
        assert LESSON in adopted.body and "AUTHOR EDIT" in adopted.body
        assert bank.skills.drafts() == [] and bank.skills.propose() == []


# ------------------------------------------------------------------ #6: another namespace's draft

@REMOTE
def test_a_contributor_never_redraws_a_revision_he_may_not_read(tmp_path, remote, minilm):
    with bank_for(tmp_path, remote, minilm) as bank:
        alice, bob = bank.scoped(ALICE), bank.scoped(BOB)
        bank.skills.create("deploy-billing", "Deploy the billing service with kubectl.",
                           "# Deploy billing\n\n1. kubectl apply -f billing.yaml\n")
        for i, lesson in enumerate(["Drain the saffron queue before kubectl apply.",
                                    "Pin the saffron image digest, never latest."]):
            alice.experiences.record(task=f"Deploy the billing service attempt {i}",
                                     outcome="failure", tags=["skill:deploy-billing"],
                                     lessons=[lesson])
        (revision,) = alice.skills.propose()
        assert revision.namespaces == ["alice"]
        bank.skills.update("deploy-billing",
                           body="# Deploy billing\n\n1. kubectl apply -f billing.yaml\n2. watch\n")
        for i, lesson in enumerate(["Check the HPA limits first.", "Scale the canary to one pod."]):
            bob.experiences.record(task=f"Deploy the billing service try {i}", outcome="failure",
                                   tags=["skill:deploy-billing"], lessons=[lesson])

        # bob gets a revision of his own (hunt-untrusted #2, session 27), beside alice's
        (his,) = bob.skills.propose()
        assert his.revises == "deploy-billing" and his.namespaces == ["bob"]
        assert his.name != revision.name and "saffron" not in text(his)
        assert [d.name for d in bob.skills.drafts()] == [his.name]
        (kept,) = alice.skills.drafts()
        assert kept.namespaces == ["alice"] and "saffron" in text(kept)
        assert sorted(kept.sources) == sorted(revision.sources)
        (redrawn,) = alice.skills.propose()  # its own contributor still draws it again
        assert redrawn.namespaces == ["alice"] and "saffron" in text(redrawn)


# ------------------------------------------------------------------ #7: feedback and distilled lessons

@REMOTE
def test_failures_recorded_with_feedback_give_a_revision(tmp_path, remote, minilm):
    with bank_for(tmp_path, remote, minilm) as bank:
        name = adopted_csv_skill(bank)
        runs = fail_twice(bank, name, feedback=f"{LESSON}. The import stopped at row 1.",
                          distill=True)
        assert all(bank.experiences.get(run).lessons == [] for run in runs)
        (revision,) = bank.skills.propose()
        assert revision.revises == name and sorted(revision.sources) == sorted(runs)
        added = [line for line in revision.diff.splitlines() if line.startswith("+- ")]
        assert any(LESSON in line for line in added), revision.diff  # as distilled, or as said
        assert bank.skills.propose() == []


@REMOTE
def test_lessons_distilled_from_a_failed_run_give_a_revision(tmp_path, remote, minilm):
    with bank_for(tmp_path, remote, minilm) as bank:
        name = adopted_csv_skill(bank)
        runs, lessons = [], []
        for i, table in enumerate(("payments", "refunds")):
            run = Experience(id=f"exp-run{i}", task=f"Import the {table} CSV file into a table",
                             outcome="failure", tags=[f"skill:{name}"])
            runs.append(run)
            lessons.append(Experience(
                id=f"lsn-run{i}", kind="lesson", source=run.id, outcome="failure",
                task=f"{LESSON} ({table})", lessons=[Lesson(text=f"{LESSON} ({table}).")]))
        (revision,) = bank.skills.propose(experiences=runs + lessons)
        assert revision.revises == name and revision.sources == ["exp-run0", "exp-run1"]
        assert f"+- {LESSON} (payments)." in revision.diff
        assert bank.skills.propose(experiences=runs + lessons) == []
