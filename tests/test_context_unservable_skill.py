"""A memory block whose best skill cannot be served at that moment (hunt-watch #1, session 33).

A third-party skill the search routed to as the clear match, with its SKILL.md half-saved or
left mid-merge (or held, or gone, since the search): `bank.context_for` raised the skill's
`load` refusal (InvalidInputError "being edited … try again" / "unresolved merge conflict"),
and MCP `memory_context` answered `is_error: true`, so the agent lost the whole block, its
guidelines and experiences too, until a person resolved the conflict. Now the block comes
without that skill and its `note` says why it was left out.
"""

from __future__ import annotations

import pytest

from conftest import write_skill
from test_skill_trust import vendor_bank

TASK = "Summarise a CSV file into a short report."
GOOD = "# Steps\n\nRead the CSV, total each numeric column, write the report.\n"
HALF_SAVED = ("---\nname: csv-report\ndescription: Summarise a CSV file into a short report.\n"
              "---\n# Ste")[:70]
MID_MERGE = ("---\nname: csv-report\ndescription: Summarise a CSV file into a short report.\n"
             "---\n<<<<<<< HEAD\nRead the CSV.\n=======\nLoad the CSV.\n>>>>>>> theirs\n")


@pytest.mark.parametrize("state,why", [(HALF_SAVED, "being edited"),
                                       (MID_MERGE, "unresolved merge conflict")],
                         ids=["half-saved", "mid-merge"])
@pytest.mark.parametrize("remote", [False, True], ids=["in-process", "client-of-owner"])
def test_the_block_comes_without_a_skill_that_cannot_be_served(tmp_path, remote, state, why):
    vendor = tmp_path / "vendor"
    skill_md = write_skill(vendor, "csv-report", TASK, GOOD)
    with vendor_bank(tmp_path / "root", vendor, remote) as bank:
        rule = bank.guidelines.add("When summarising a CSV file, report totals per column.",
                                   when_to_use="summarising CSV files into reports")
        served = bank.context_for(TASK)
        assert "skill:csv-report" in served.ids and "total each numeric column" in served.text
        skill_md.write_text(state)
        bank.skills.sync()
        assert [h.name for h in bank.skills.search(TASK)] == ["csv-report"]  # still routed
        ctx = bank.context_for(TASK)  # raised the load's refusal
        assert "skill:csv-report" not in ctx.ids and "csv-report" not in ctx.text
        assert rule.guideline_id in ctx.ids, ctx.text  # the rest of the block still comes
        assert "The skill csv-report was left out" in ctx.note and why in ctx.note, ctx.note
