"""`skillbank migrate --namespace team` of a personal rule that overrides a team rule.

On the root, alice's rule ("do not write a changelog entry") overrides the team's ("Always
write a changelog entry"): a reader of both namespaces gets alice's only. `--namespace team`
put both in `team`, where an override means nothing, so the team served both contradicting
rules, alice's as an unreviewed team rule (hunt-expimport #2, session 38). Such a rule now
arrives pending, its overrides of rules in its own namespace kept as what approving it
supersedes (so a reviewer decides which one the team serves), and the run's warnings name it.
Real private PostgreSQL cluster and `chroma run`, as tests/test_team_migrate_pending.py.
"""

from __future__ import annotations

import uuid

import pytest

from skillbank.scope import Scope
from test_team_migrate_pending import _open, _team

pytest.importorskip("psycopg")

LEAD = Scope(principal="lead", namespace="team", role="reviewer", face="test")
ALICE = Scope(principal="alice", namespace="alice", reads=("team",), role="contributor",
              face="test")
TASK = "Write the changelog entry for the release"


def test_an_override_folded_into_its_own_namespace_waits_for_a_reviewer(tmp_path, postgres,
                                                                       chroma_server):
    from skillbank.team.migrate import migrate_root

    laptop = tmp_path / "laptop"
    bank = _open(laptop)
    try:
        rule = bank.scoped(LEAD).guidelines.learn(
            "Always write a changelog entry.").entries[0].guideline_id
        mine = bank.scoped(ALICE).guidelines.learn(
            "From now on, do not write a changelog entry.").entries[0].guideline_id
        assert bank.scoped(ALICE).guidelines.get(mine).overrides == [rule]
        kept = bank.scoped(ALICE).guidelines.learn("Name branches after their ticket.")
        kept = kept.entries[0].guideline_id
    finally:
        bank.close()
    deployment = uuid.uuid4().hex[:16]
    report = migrate_root(laptop, postgres.url, deployment=deployment, namespace="team")
    said = " | ".join(report.warnings)
    assert mine in said and rule in said and "pending" in said, said

    team = _team(tmp_path, chroma_server, postgres, deployment)
    try:
        got = team.guidelines.get(mine)
        assert (got.namespace, got.status, got.overrides) == ("team", "pending", [])
        assert got.supersedes == [rule]  # approving it is the reviewer's call
        assert team.guidelines.get(rule).status == "active"
        assert team.guidelines.get(kept).status == "active"
        block = team.scoped(LEAD).context_for(TASK).text
        assert rule in block and mine not in block, block
    finally:
        team.close()
    # A rerun leaves it as it is (pending, no new warning about an import that did not happen).
    again = migrate_root(laptop, postgres.url, deployment=deployment, namespace="team")
    assert not again.changed and not any(mine in w for w in again.warnings), again.warnings
