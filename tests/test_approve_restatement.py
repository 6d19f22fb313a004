"""Approving an untrusted restatement of an active rule folds it into that rule.

An untrusted client repeating an active rule's wording is kept as a pending proposal (untrusted
input never changes an active rule). Approving it made a second active rule of one wording, and
both were served. Now the approval reinforces the active rule (which takes the proposal's
sources) and retires the proposal, on every face: the API (in process and as a client of an
owner process) and the CLI.
"""

from __future__ import annotations

import contextlib

import pytest

from owner_client import bank_for
from skillbank import Skillbank
from skillbank.embeddings import HashEmbedding

RULE = "Never put SQL in f-strings."


def _propose_restatement(bank) -> tuple[str, str]:
    held = bank.guidelines.add(RULE, topic="sql").guideline_id
    pending = bank.guidelines.add(RULE, topic="sql", trusted=False)
    assert pending.action == "pending"
    return held, pending.guideline_id


@pytest.mark.parametrize("remote", [False, True], ids=["in-process", "client-of-owner"])
def test_approving_a_restatement_reinforces_the_active_rule(tmp_path, remote):
    """Fails before: two active rules worded alike, both in the playbook."""
    with bank_for(tmp_path, remote) as bank:
        held, proposed = _propose_restatement(bank)
        before = bank.guidelines.get(held).reinforcements
        approved = bank.guidelines.approve(proposed)
        assert approved.id == held and approved.status == "active"
        assert approved.reinforcements == before + 1
        assert bank.guidelines.get(proposed).status == "retired"
        assert held in bank.guidelines.get(proposed).related
        active = [g.id for g in bank.guidelines.list(status="active")]
        assert active == [held]
        assert [h.id for h in bank.guidelines.search("SQL in f-strings")] == [held]
        other = bank.guidelines.add("Always quote table names in SQL.", topic="sql",
                                    trusted=False).guideline_id
        assert bank.guidelines.approve(other).id == other  # a new rule is approved as before


@pytest.mark.parametrize("remote", [False, True], ids=["in-process", "client-of-owner"])
def test_the_cli_says_the_proposal_was_folded(cli_root, remote):
    from typer.testing import CliRunner

    from owner_client import owner_process
    from skillbank.cli import app

    cli_root.mkdir(parents=True, exist_ok=True)
    with Skillbank.open(cli_root, embedding_function=HashEmbedding(),
                        include_bundled=False) as bank:
        held, proposed = _propose_restatement(bank)
    with owner_process(cli_root) if remote else contextlib.nullcontext():
        result = CliRunner().invoke(app, ["--no-bundled", "guidelines", "approve", proposed])
    assert result.exit_code == 0, result.output
    said = " ".join(result.output.split())
    assert f"{proposed}: folded into {held}" in said and f"{held}: active" in said
