"""Approving a proposal an active rule says in other words folds it into that rule (review 1 #4,
session 32).

Since hunt-scopes #1 a trusted contributor who does not review the namespace is decided against
active rules only, so its paraphrase of a pending proposal ("Run the linter before you push any
branch." beside the pending "Always run the linter before pushing a branch.") is added active.
When a reviewer then approved the proposal, `approve` folded only an identical wording: two
active paraphrases of one rule were served. Now `approve` checks the proposal against the
namespace's active rules with the decision a learn makes (`_active_paraphrase`: `_nearest`,
`_plan`, `merge_evidence`) and folds it into the active one (reinforced, the proposal's sources
kept there, the proposal retired and related); the CLI, MCP and browser say "folded into gl-…".
"""

from __future__ import annotations

import pytest

from owner_client import bank_for
from skillbank.scope import Scope

PENDING = "Always run the linter before pushing a branch."
PARAPHRASE = "Run the linter before you push any branch."


@pytest.mark.parametrize("remote", [False, True], ids=["in-process", "client-of-owner"])
def test_approving_a_paraphrase_of_an_active_rule_folds_it(tmp_path, remote, minilm):
    """Fails before: approve activated the proposal, two active rules saying one thing."""
    with bank_for(tmp_path, remote, minilm) as bank:
        agent = bank.scoped(Scope(principal="agent", namespace="team", role="contributor",
                                  trusted=False))
        carol = bank.scoped(Scope(principal="carol", namespace="team", role="contributor"))
        rev = bank.scoped(Scope(principal="rev", namespace="team", role="reviewer"))
        proposed = agent.guidelines.add(PENDING, topic="git")
        assert proposed.action == "pending"
        added = carol.guidelines.add(PARAPHRASE, topic="git")
        assert added.action == "added"  # it may not see the pending one: correct
        before = rev.guidelines.get(added.guideline_id).reinforcements

        approved = rev.guidelines.approve(proposed.guideline_id)
        assert approved.id == added.guideline_id and approved.status == "active"
        assert approved.text == PARAPHRASE  # the active wording stays
        assert approved.reinforcements == before + 1
        assert any(s.critique == PENDING for s in approved.sources)  # its source kept
        gone = rev.guidelines.get(proposed.guideline_id)
        assert gone.status == "retired" and added.guideline_id in gone.related
        assert [g.id for g in rev.guidelines.list(status="active")] == [added.guideline_id]

        # A proposal no active rule says is approved as before.
        other = agent.guidelines.add("Quote table names in every SQL query.", topic="sql")
        assert rev.guidelines.approve(other.guideline_id).id == other.guideline_id


@pytest.mark.parametrize("remote", [False, True], ids=["in-process", "client-of-owner"])
def test_a_folded_proposal_that_says_more_gives_the_rule_its_wording(tmp_path, remote, minilm):
    """As a learn's merge does: the approved, more specific wording is what is served."""
    with bank_for(tmp_path, remote, minilm) as bank:
        held = bank.guidelines.add("Always add tests.", topic="code").guideline_id
        proposed = bank.guidelines.add("Always add tests for edge cases.", topic="code",
                                       trusted=False).guideline_id
        approved = bank.guidelines.approve(proposed)
        assert approved.id == held and approved.text == "Always add tests for edge cases."
        assert [g.id for g in bank.guidelines.list(status="active")] == [held]
        assert [h.id for h in bank.guidelines.search("tests for edge cases")] == [held]
