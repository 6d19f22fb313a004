"""`skillbank migrate` run again after the team (or the laptop) moved on (issue 24): a rerun
"changes nothing" must hold for what the team did since the first run. A guideline the team
forgot is not brought back (forget means gone), a vote the team cast is not overwritten by
the root's older copy, and a guideline forgotten on the root since the first run leaves the
deployment too. Real private PostgreSQL cluster; the team side is the deployment's store.
"""

from __future__ import annotations

import uuid

import pytest

from skillbank import Skillbank
from skillbank.embeddings import HashEmbedding

pytest.importorskip("psycopg")


def _open(root):
    return Skillbank.open(root, embedding_function=HashEmbedding(), include_bundled=False)


def test_a_rerun_keeps_what_the_team_did_and_carries_the_roots_forgets(tmp_path, postgres):
    from skillbank.store.postgres import PostgresStore
    from skillbank.team.migrate import migrate_root

    embedded = tmp_path / "laptop"
    bank = _open(embedded)
    try:
        voted = bank.guidelines.learn("Pin the base image of every container build.").ids()[0]
        team_forgets = bank.guidelines.learn("Never paste customer names in tickets.").ids()[0]
        root_forgets = bank.guidelines.learn("Rotate the staging keys each Friday.").ids()[0]
    finally:
        bank.close()
    deployment = uuid.uuid4().hex[:16]
    assert migrate_root(embedded, postgres.url, deployment=deployment).imported["guidelines"] == 3

    # The team moves on: a vote on one rule, another forgotten for good.
    with PostgresStore(postgres.url, deployment=deployment) as store:
        records = store.guidelines()
        rules = {gid: g for gid, (g, _) in records.load().records.items()}
        records.save(rules[voted].model_copy(update={"helpful": rules[voted].helpful + 4}),
                     rules[voted])
        records.delete(rules[team_forgets])
        store.forgotten().add(team_forgets, "guideline", "2026-12-02T08:00:00+00:00", "alice")
    # The laptop moves on too: one of its rules forgotten there.
    bank = _open(embedded)
    try:
        bank.forget(root_forgets)
    finally:
        bank.close()

    again = migrate_root(embedded, postgres.url, deployment=deployment)
    with PostgresStore(postgres.url, deployment=deployment) as store:
        rules = {gid: g for gid, (g, _) in store.guidelines().load().records.items()}
        texts = [row[0] for row in store.db.execute(
            "SELECT document FROM sb_guidelines WHERE deployment = %s", (deployment,))]
    assert team_forgets not in rules, "a rule the team forgot came back from the root"
    assert not any("customer names" in t for t in texts)
    assert rules[voted].helpful == 4, "the team's vote was overwritten by the root's copy"
    assert root_forgets not in rules, "a rule forgotten on the root stays in the deployment"
    assert not any("staging keys" in t for t in texts)
    assert again.imported["guidelines"] == 0

    third = migrate_root(embedded, postgres.url, deployment=deployment)
    assert not third.changed, third.imported


def _holding(url: str, deployment: str, word: str) -> list[str]:
    """Every table of the deployment whose rows still hold `word` (as text, anywhere)."""
    import psycopg

    tables = ("sb_experience_events", "sb_experiences", "sb_drafts", "sb_draft_ledger",
              "sb_guidelines", "sb_audit", "sb_forgotten")
    with psycopg.connect(url) as conn:
        return [t for t in tables if conn.execute(
            f"SELECT count(*) FROM {t} AS r WHERE deployment = %s AND r::text ILIKE %s",
            (deployment, f"%{word}%")).fetchone()[0]]


def test_what_the_root_forgets_after_a_first_run_leaves_the_deployment_on_the_next(
        tmp_path, postgres):
    from skillbank.team.migrate import migrate_root

    embedded = tmp_path / "laptop"
    bank = _open(embedded)
    try:
        parent = bank.experiences.record("Restore the wiki snapshot", "success",
                                         lessons=["Check the zebracrossing checksum first."])
        lesson = next(e.id for e in bank.experiences.list(namespace="*")
                      if e.kind == "lesson" and e.source == parent)
        sources = [bank.experiences.record(f"Rotate the quokkatape of rack {n}", "success",
                                           when_to_use="When rotating quokkatape racks",
                                           steps=[{"action": "eject"}, {"action": "label"}])
                   for n in range(3)]
        assert bank.skills.propose(min_support=3)
    finally:
        bank.close()
    deployment = uuid.uuid4().hex[:16]
    migrate_root(embedded, postgres.url, deployment=deployment)
    assert _holding(postgres.url, deployment, "zebracrossing")
    assert "sb_drafts" in _holding(postgres.url, deployment, "quokkatape")

    bank = _open(embedded)  # the laptop forgets a lesson and the experiences of a draft
    try:
        bank.forget(lesson)
        for eid in sources:
            bank.forget(eid)
    finally:
        bank.close()
    migrate_root(embedded, postgres.url, deployment=deployment)
    assert _holding(postgres.url, deployment, "zebracrossing") == [], \
        "the forgotten lesson's text stays in its parent's row and event"
    assert _holding(postgres.url, deployment, "quokkatape") == [], \
        "a draft drawn from forgotten experiences stays in the deployment"


def test_a_rule_removed_from_postgresql_is_noted_forgotten_in_the_same_transaction(
        tmp_path, postgres):
    """A worker killed between the removal and the forget's note left a rule gone with no
    `sb_forgotten` row, which is what a migrate rerun reads to never bring a rule back."""
    from skillbank.records import Guideline
    from skillbank.store.postgres import PostgresStore

    with PostgresStore(postgres.url, deployment=uuid.uuid4().hex[:16]) as store:
        records = store.guidelines()
        g, _ = records.save(Guideline(id="gl-00000000abcd", topic="general",
                                      text="Keep the release notes short."))
        records.delete(g)  # ... and the worker is killed here
        assert [e["id"] for e in store.forgotten().list()] == [g.id]
        store.forgotten().add(g.id, "guideline", "2026-12-02T09:00:00+00:00", "alice")
        assert [(e["id"], e["principal"]) for e in store.forgotten().list()] == [(g.id, "alice")]


def test_a_rerun_after_a_local_vote_keeps_the_teams_votes_and_retirement(tmp_path, postgres):
    """Users met this: after the team voted a rule helpful 4 times and retired another, one
    local vote on each and a rerun set the team's votes to 0 and made the retired rule active
    again (the root's whole copy replaced the team's)."""
    from skillbank.store.postgres import PostgresStore
    from skillbank.team.migrate import migrate_root

    embedded = tmp_path / "laptop"
    bank = _open(embedded)
    try:
        voted = bank.guidelines.add("Never put SQL in f-strings.").guideline_id
        retired = bank.guidelines.add("Use British spelling in the docs.").guideline_id
    finally:
        bank.close()
    deployment = uuid.uuid4().hex[:16]
    migrate_root(embedded, postgres.url, deployment=deployment)
    with PostgresStore(postgres.url, deployment=deployment) as store:  # the team moves on
        records = store.guidelines()
        rules = {gid: g for gid, (g, _) in records.load().records.items()}
        records.save(rules[voted].model_copy(update={"helpful": 4}), rules[voted])
        records.save(rules[retired].model_copy(update={"status": "retired"}), rules[retired])
    bank = _open(embedded)  # the root, still in use, votes once on each
    try:
        bank.guidelines.vote(voted, helpful=False)
        bank.guidelines.vote(retired, helpful=True)
    finally:
        bank.close()

    again = migrate_root(embedded, postgres.url, deployment=deployment)
    with PostgresStore(postgres.url, deployment=deployment) as store:
        rules = {gid: g for gid, (g, _) in store.guidelines().load().records.items()}
    assert (rules[voted].helpful, rules[voted].harmful) == (4, 1), "the team's votes were lost"
    assert rules[retired].status == "retired", "the team's retirement was undone"
    assert rules[retired].helpful == 1
    assert again.imported["guidelines"] == 2
    assert not migrate_root(embedded, postgres.url, deployment=deployment).changed

    bank = _open(embedded)  # the root then changes a status itself: that is carried
    try:
        bank.guidelines.retire(voted)
    finally:
        bank.close()
    migrate_root(embedded, postgres.url, deployment=deployment)
    with PostgresStore(postgres.url, deployment=deployment) as store:
        rules = {gid: g for gid, (g, _) in store.guidelines().load().records.items()}
    assert rules[voted].status == "retired" and rules[voted].helpful == 4
