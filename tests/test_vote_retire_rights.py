"""A vote retires a rule only for a caller who may retire it.

A contributor who writes his own namespace and only reads the team's was refused
``retire(gid)`` on a team rule (it needs the reviewer role), yet three "not helpful" votes of
his alone retired it for the whole team, in process and through a client of an owner process.
His votes still count; the rule stays active until a reviewer of the team decides.
"""

from __future__ import annotations

import pytest

from owner_client import client_of_owner
from skillbank import Skillbank
from skillbank.embeddings import HashEmbedding
from skillbank.errors import PermissionDeniedError
from skillbank.scope import Scope

CARL = Scope(principal="carl", namespace="carl", reads=("team",), role="contributor")
REVIEWER = Scope(principal="rita", namespace="team", role="reviewer")


def _votes(bank) -> None:
    gid = bank.guidelines.add("Use conventional commit messages.", namespace="team").guideline_id
    carl = bank.scoped(CARL)
    with pytest.raises(PermissionDeniedError):
        carl.guidelines.retire(gid)
    for _ in range(bank.guidelines.retire_margin + 1):
        answer = carl.rate(gid, helpful=False)
        assert answer["counted"] is True and answer["status"] == "active"
    rule = bank.guidelines.get(gid)
    assert (rule.status, rule.harmful) == ("active", bank.guidelines.retire_margin + 1)
    team = bank.scoped(Scope(principal="tina", namespace="team", role="contributor"))
    assert gid in team.context_for("Write a commit message").ids
    # Carl's own rules he may retire, so his votes retire them; a reviewer's retire team rules.
    mine = carl.guidelines.add("Squash fixup commits before a merge.").guideline_id
    assert [carl.rate(mine, helpful=False)["status"]
            for _ in range(bank.guidelines.retire_margin)][-1] == "retired"
    assert bank.scoped(REVIEWER).rate(gid, helpful=False)["status"] == "retired"


def test_a_reader_of_the_team_cannot_retire_its_rule_by_votes(tmp_path):
    with Skillbank.open(tmp_path / "root", embedding_function=HashEmbedding(),
                        include_bundled=False) as bank:
        _votes(bank)


def test_a_reader_of_the_team_cannot_retire_its_rule_by_votes_through_a_client(tmp_path):
    with client_of_owner(tmp_path / "root") as bank:
        _votes(bank)
