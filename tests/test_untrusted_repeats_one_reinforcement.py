"""One approval of an untrusted proposal is one reinforcement, however often it was repeated.

hunt-teamvotes #5, session 38: one untrusted client sent the same critique 20 times; it joined
one proposal (reinforcements 19), and a reviewer's single approval folded it into the active
rule as "reinforced 20×", the ranking prior near full strength. Pending records carry no
principal, so the repeats count as one. Checked in process, through a client of an owner
process, and on two team workers (real PostgreSQL, tests/pg_cluster.py, and a Chroma server).
"""

from __future__ import annotations

import pytest

from owner_client import bank_for
from test_team_guidelines import workers  # noqa: F401 - a fixture

RULE = "Use UTC timestamps in every log line."
OTHER = "Name feature branches after the ticket number."


def _repeated(proposer, reviewer) -> None:
    held = reviewer.guidelines.add(RULE, topic="logs").guideline_id
    ids = {proposer.guidelines.add(RULE, topic="logs", trusted=False).guideline_id
           for _ in range(20)}
    [proposal] = ids
    assert reviewer.guidelines.get(proposal).reinforcements == 19  # the reviewer sees them
    folded = reviewer.guidelines.approve(proposal)
    assert folded.id == held and folded.reinforcements == 1  # was 20
    assert len(folded.sources) > 1  # the critiques go along
    new = {proposer.guidelines.add(OTHER, topic="git", trusted=False).guideline_id
           for _ in range(20)}
    [fresh] = new
    approved = reviewer.guidelines.approve(fresh)
    assert approved.id == fresh and approved.status == "active"
    assert approved.reinforcements == 0  # was 19: "reinforced 19×" at once
    assert "reinforced 0×" in reviewer.guidelines.playbook("git")


@pytest.mark.parametrize("remote", [False, True], ids=["in-process", "client-of-owner"])
def test_repeats_of_one_untrusted_proposal_are_one_reinforcement(tmp_path, remote):
    with bank_for(tmp_path, remote) as bank:
        _repeated(bank, bank)


def test_repeats_of_one_untrusted_proposal_are_one_reinforcement_in_team_mode(workers):
    a, b = workers
    _repeated(a, b)
