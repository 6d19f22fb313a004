"""Scope bugs a review found (issue 22): skill drafts crossed scopes, `stats()` counted every
user's experiences, and `import_` told a caller whether an id existed in another namespace.

Real parts as in test_scope.py: an embedded root, and a real owner in another process serving
a client (the hash embedding: this is about who sees what, not retrieval quality).
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from skillbank.errors import NotFoundError
from skillbank.scope import Scope
from test_scope import ALICE, ALICE_REVIEWER, BOB, BOB_REVIEWER
from test_scope import bank  # noqa: F401 - the fixture: in process, or a client of an owner
from workers.common import open_bank

SECRET = "saffron"  # a word only alice's experiences hold
TASKS = [f"Import the {SECRET} {what} CSV file into the {table} database table"
         for what, table in (("sales", "orders"), ("customers", "accounts"),
                              ("returns", "refunds"))]


def record_alices_runs(view: Any) -> list[str]:
    return [view.experiences.record(
        task=task, outcome="success", when_to_use="When loading CSV exports into SQL",
        steps=[{"action": "detect_encoding"}, {"action": "copy_into_table"}],
        lessons=[f"Detect the {SECRET} file encoding before parsing."]) for task in TASKS]


def not_found_like_missing(call, name: str) -> None:
    """`call(name)` fails exactly as it does for a draft no one wrote (no existence oracle)."""
    with pytest.raises(NotFoundError) as hidden:
        call(name)
    with pytest.raises(NotFoundError) as missing:
        call("no-such-draft")
    assert str(hidden.value).replace(name, "<n>") == str(missing.value).replace("no-such-draft", "<n>")


# ------------------------------------------------------------------------------ 1. drafts

def test_drafts_are_read_and_decided_only_within_the_callers_scope(bank):
    alice, bob = bank.scoped(ALICE), bank.scoped(BOB)
    sources = record_alices_runs(alice)
    bob.experiences.record(task="Deploy the billing service with kubectl", outcome="success")
    [draft] = alice.skills.propose(min_support=3)
    assert sorted(draft.sources) == sorted(sources) and draft.namespaces == ["alice"]
    name = draft.name

    # bob, even as a reviewer of his namespace, neither sees nor decides on alice's draft
    for view in (bob, bank.scoped(BOB_REVIEWER)):
        assert view.skills.drafts() == []
        not_found_like_missing(view.skills.draft, name)
    not_found_like_missing(bank.scoped(BOB_REVIEWER).skills.adopt, name)
    not_found_like_missing(bank.scoped(BOB_REVIEWER).skills.discard, name)
    # ... nor can he draft from her experiences, by default or by naming her namespace
    assert bob.skills.propose(min_support=1) == [] or \
        all(d.namespaces == ["bob"] and SECRET not in Path(d.path).read_text()
            for d in bob.skills.drafts())
    assert bob.skills.propose(namespace="alice", min_support=3) == []
    assert all(s not in {d for x in bob.skills.drafts() for d in x.sources} for s in sources)

    # alice's draft is untouched: she reads it, her reviewer adopts it
    assert [d.name for d in alice.skills.drafts()] == [name]
    assert alice.skills.draft(name).sources == draft.sources
    # drawn from alice's namespace, not the bank's: the draft is named apart from its skill
    # (hunt-untrusted #2/#3, session 27), and adopting it writes the skill
    assert name.startswith(f"{draft.skill}-alice-")
    assert bank.scoped(ALICE_REVIEWER).skills.adopt(name).name == draft.skill
    assert bank.skills.load(draft.skill).name == draft.skill  # the bank's own (admin) view


def test_the_banks_own_view_still_sees_every_draft(bank):
    record_alices_runs(bank.scoped(ALICE))
    [draft] = bank.scoped(ALICE).skills.propose(min_support=3)
    assert [d.name for d in bank.skills.drafts()] == [draft.name]
    assert bank.skills.discard(draft.name).status == "discarded"


def test_drafts_written_before_namespaces_were_recorded_belong_to_the_banks_namespace(tmp_path):
    bank = open_bank(tmp_path / "root")
    try:
        record_alices_runs(bank)  # the bank's own namespace
        [draft] = bank.skills.propose(min_support=3)
        assert draft.namespaces == [bank.settings.namespace]
        meta = Path(draft.path).parent / ".draft.json"
        old = json.loads(meta.read_text())
        del old["namespaces"]  # as written before this change
        meta.write_text(json.dumps(old))
        own = Scope(principal="me", namespace=bank.settings.namespace, role="reviewer")
        assert [d.name for d in bank.scoped(own).skills.drafts()] == [draft.name]
        assert bank.scoped(BOB).skills.drafts() == []
        not_found_like_missing(bank.scoped(BOB_REVIEWER).skills.discard, draft.name)
        assert bank.scoped(own).skills.discard(draft.name).status == "discarded"
    finally:
        bank.close()


# ------------------------------------------------------------------------------ 2. stats

def test_stats_count_only_the_experiences_the_caller_reads(bank):
    alice, bob = bank.scoped(ALICE), bank.scoped(BOB)
    record_alices_runs(alice)  # 3 experiences, each with a lesson
    bob.experiences.record(task="Deploy the billing service with kubectl", outcome="success")
    a, b = alice.stats()["experiences"], bob.stats()["experiences"]
    # alice: her runs and their lessons (folded when alike); bob: his one run
    assert a == len(alice.experiences.list(limit=100)) >= 4 and b == 1
    # the bank's own (single-user, admin) figure is as before: every record of every namespace
    assert bank.stats()["experiences"] == a + b
    if not bank.is_remote:
        assert bank.stats()["experiences"] == bank.index("experiences").count()


# ------------------------------------------------------------------------------ 3. import

def test_import_never_shows_whether_an_id_exists_in_another_namespace(bank, tmp_path):
    taken = bank.scoped(ALICE).experiences.record(task=f"{SECRET} vacuum", outcome="success")
    free = "exp-0123456789ab"
    path = tmp_path / "runs.jsonl"
    path.write_text("".join(json.dumps(line) + "\n" for line in (
        {"id": taken, "task": "Rotate the billing keys", "outcome": "success"},
        {"id": free, "task": "Resize the billing volume", "outcome": "failure"},
        {"id": "lsn-0123456789ab", "kind": "lesson", "source": free,
         "task": "Resize the billing volume", "outcome": "failure",
         "lessons": ["Snapshot the billing volume before resizing"]})))
    bob = bank.scoped(BOB)
    report = bob.experiences.import_(path)

    elsewhere = open_bank(tmp_path / "fresh")  # the same import where no id is taken
    try:
        fresh = elsewhere.scoped(BOB).experiences.import_(path)
    finally:
        elsewhere.close()
    assert report.added == fresh.added and len(report.added) == 3
    assert taken not in report.added and free not in report.added  # taken or not: same answer
    assert bank.scoped(ALICE).experiences.get(taken).task == f"{SECRET} vacuum"
    lesson = bob.experiences.get(report.added[2])
    assert lesson.source == report.added[1]  # the lesson follows its experience's new id

    again = bob.experiences.import_(path)  # a user's own re-import adds nothing
    assert again.added == [] and again.unchanged == 3
    assert len(bob.experiences.list("*", limit=100)) == 3
