"""The same untrusted rule sent again merges into its pending proposal, also when an active
rule of that wording exists (hunt-mcp-longlived #6, session 31).

With no matching active rule, three identical untrusted `add_guideline` calls gave `pending,
merged, merged`. With a trusted active rule of the same wording, each call made a new pending
proposal ("same rule as active gl-…: kept as a proposal"): 4 calls, 4 proposals in the review
queue, each counting toward the namespace's cap. The active rule is named first among the rules
of that wording, and the untrusted path never looked for a proposal beside it. Now a repeat is
merged into the pending proposal of that wording; the active rule is untouched, and approving
the proposal still folds it into the active rule.
"""

from __future__ import annotations

import pytest

from owner_client import bank_for

RULE = "Sort imports alphabetically in billing modules."


@pytest.mark.parametrize("remote", [False, True], ids=["in-process", "client-of-owner"])
def test_an_untrusted_repeat_of_an_active_rule_is_one_proposal(tmp_path, remote):
    with bank_for(tmp_path, remote) as bank:
        active = bank.guidelines.add(RULE, topic="style").guideline_id
        entries = [bank.guidelines.add(RULE, topic="style", trusted=False) for _ in range(4)]
        # Before: ["pending", "pending", "pending", "pending"], four ids.
        # Each answered as a new proposal (they said "merged" before session 33, which told a
        # caller another client had proposed the wording: tests/test_pending_no_oracle.py).
        assert [e.action for e in entries] == ["pending"] * 4
        assert len({e.detail for e in entries}) == 1 and active in entries[0].detail
        assert len({e.guideline_id for e in entries}) == 1
        proposal = entries[0].guideline_id
        assert proposal != active
        assert [g.id for g in bank.guidelines.list(status="pending")] == [proposal]
        kept = bank.guidelines.get(active)
        assert kept.status == "active" and kept.reinforcements == 0  # untrusted: untouched
        learnt = bank.guidelines.learn("Review of the billing code", trusted=False,
                                       rules=[{"text": RULE, "topic": "style"}])
        assert learnt.entries[0].guideline_id == proposal
        approved = bank.guidelines.approve(proposal)
        assert approved.id == active  # folded into the active rule, as before
        assert bank.guidelines.counts()["pending"] == 0
        assert bank.guidelines.counts()["active"] == 1
