"""`skillbank migrate` merging a guideline the root changed into the team's (review of
skillbank/team/migrate_guidelines.py). Real private PostgreSQL cluster.

Users met two defects here:
- `migrate --namespace team`, one local vote, then a rerun without `--namespace` moved the
  team's rule back to `default`, out of every `--reads team` token: the root's namespace was
  merged as if the root had changed it. A rule stays where the run that imported it put it.
- a run cut between a rule's save and the note of what it imported (`sb_imports`) was
  finished by a rerun that merged against the old note and counted the root's new votes twice.
  The save and the note are now one transaction.
"""

from __future__ import annotations

import uuid

import pytest

from skillbank import Skillbank
from skillbank.embeddings import HashEmbedding

pytest.importorskip("psycopg")


def _open(root):
    return Skillbank.open(root, embedding_function=HashEmbedding(), include_bundled=False,
                          share=False)


def _team_rule(url: str, deployment: str, gid: str):
    from skillbank.store.postgres import PostgresStore

    with PostgresStore(url, deployment=deployment) as store:
        return {k: g for k, (g, _) in store.guidelines().load().records.items()}[gid]


def _learn(root, text: str) -> str:
    bank = _open(root)
    try:
        return bank.guidelines.learn(text).ids()[0]
    finally:
        bank.close()


def _vote(root, gid: str) -> int:
    bank = _open(root)
    try:
        bank.rate(gid, True)
        return bank.guidelines.get(gid).helpful
    finally:
        bank.close()


def test_a_rerun_without_namespace_leaves_the_rule_where_it_was_put(tmp_path, postgres):
    from skillbank.team.migrate import migrate_root

    root = tmp_path / "laptop"
    gid = _learn(root, "Tag every release with the ticket id.")
    deployment = uuid.uuid4().hex[:16]
    migrate_root(root, postgres.url, deployment=deployment, namespace="team")
    helpful = _vote(root, gid)
    again = migrate_root(root, postgres.url, deployment=deployment)  # no --namespace
    rule = _team_rule(postgres.url, deployment, gid)
    assert rule.namespace == "team", "the team's rule moved out of 'team'"
    assert rule.helpful == helpful  # the local vote still arrived
    assert again.namespaces == {"team"}
    # A rule new to the deployment keeps the root's namespace (no --namespace this run).
    other = _learn(root, "Write the rollback step before the deploy step.")
    migrate_root(root, postgres.url, deployment=deployment)
    assert _team_rule(postgres.url, deployment, other).namespace == "default"


def test_a_run_cut_between_save_and_note_is_finished_exactly(tmp_path, postgres, monkeypatch):
    from skillbank.store.postgres import PostgresStore
    from skillbank.team import migrate_guidelines
    from skillbank.team.migrate import migrate_root

    root = tmp_path / "laptop"
    gid = _learn(root, "Pin the base image of every container build.")
    deployment = uuid.uuid4().hex[:16]
    migrate_root(root, postgres.url, deployment=deployment)
    with PostgresStore(postgres.url, deployment=deployment) as store:  # the team votes 4 times
        records = store.guidelines()
        rule = records.load().records[gid][0]
        records.save(rule.model_copy(update={"helpful": rule.helpful + 4}), rule)
        team_helpful = rule.helpful + 4
    root_helpful = _vote(root, gid)  # one local vote: the root grew by 1 since the first run

    real = migrate_guidelines._mark

    def killed(*args, **kwargs):  # the process dies right after the rule's save
        raise KeyboardInterrupt("killed between the save and the note")

    monkeypatch.setattr(migrate_guidelines, "_mark", killed)
    with pytest.raises(KeyboardInterrupt):
        migrate_root(root, postgres.url, deployment=deployment)
    monkeypatch.setattr(migrate_guidelines, "_mark", real)
    migrate_root(root, postgres.url, deployment=deployment)  # finished by running it again
    assert _team_rule(postgres.url, deployment, gid).helpful == team_helpful + 1, \
        f"the root's new vote was counted twice (root helpful={root_helpful})"
    assert not migrate_root(root, postgres.url, deployment=deployment).changed
