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


def test_an_unreadable_best_skill_is_left_out_and_logged_for_the_person_who_must_fix_it(
        tmp_path, monkeypatch, caplog):
    """Review 3 of session 33: an unreadable SKILL.md (permissions, not a regular file), which
    `load` raises as `UnreadableError`, became only a note inside the agent's block; the person
    who must fix the file got no log line. (Faked: the tests run as root, who reads a 000 file.)"""
    import logging

    from skillbank.errors import UnreadableError

    vendor = tmp_path / "vendor"
    write_skill(vendor, "csv-report", TASK, GOOD)
    with vendor_bank(tmp_path / "root", vendor, False) as bank:
        def unreadable(name: str, *args, **kwargs):
            raise UnreadableError(f"skill {name!r} cannot be read: permission denied")

        monkeypatch.setattr(bank.skills, "load", unreadable)
        with caplog.at_level(logging.WARNING, logger="skillbank.context"):
            ctx = bank.context_for(TASK)
        assert "The skill csv-report was left out" in ctx.note, ctx.note
        assert any("csv-report" in r.getMessage() and "permission denied" in r.getMessage()
                   for r in caplog.records), caplog.records  # was: no log line
