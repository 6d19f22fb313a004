"""A skill adopted from a draft and later deleted is drafted again from new runs of its kind.

The ledger's "adopted" kept every later run of that kind from being drafted for good, even after
a person deleted the skill (`skills delete`, `forget skill:<name>`): the kind's new evidence had
nowhere to go (review #6, session 26). The deletion is now in the ledger; the latest of the two
decides. In process and through a client of another process that owns the root, real MiniLM.
"""

from __future__ import annotations

import pytest

from owner_client import bank_for
from test_propose_keeps_drafts import NAME, adopted_csv_skill, csv_run

REMOTE = pytest.mark.parametrize("remote", [False, True], ids=["in-process", "client-of-owner"])


@REMOTE
@pytest.mark.parametrize("how", ["delete", "forget"])
def test_new_runs_of_a_deleted_adopted_skill_are_drafted_again(tmp_path, remote, how, minilm):
    with bank_for(tmp_path, remote, minilm) as bank:
        adopted_csv_skill(bank)
        csv_run(bank, "payments")
        assert bank.skills.propose() == []  # adopted: new runs reach it through revisions only

        if how == "delete":
            bank.skills.delete(NAME)
        else:
            bank.forget(f"skill:{NAME}")
        (again,) = bank.skills.propose()  # the run since the adoption is new evidence
        assert again.name == NAME and again.revises is None
        assert len(again.sources) == 4
        bank.skills.adopt(NAME)
        assert bank.skills.load(NAME).name == NAME


@REMOTE
def test_a_skill_never_drafted_is_deleted_without_a_ledger_line(tmp_path, remote, minilm):
    with bank_for(tmp_path, remote, minilm) as bank:
        bank.skills.save("csv-notes", description="Notes on importing CSV files into databases",
                         body="Inspect the header first.")
        bank.skills.delete("csv-notes")
        assert not (tmp_path / "root" / "drafts" / ".ledger.jsonl").exists()
