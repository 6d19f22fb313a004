"""A SKILL.md that grows past 1 MiB keeps its skill's last good version (hunt-watch #2,
session 33).

A log pasted into an indexed skill's SKILL.md (over `MAX_SKILL_BYTES`) dropped the skill at
once: the scan's size check reported `too-large` and skipped the file before the parse and
last-good path, so the index treated the skill as removed: search returned nothing, `load`
said "no skill named …" while the file was there, no `kept-last-good` was reported and no copy
was kept. Now it is one more file that does not parse: the skill stays routed, `load` serves
the text it was last indexed from with the "being edited" note, and `sync` reports `too-large`
with `kept-last-good`; once the file is cut back, it is served as it is.

Review 3 of session 33: a third-party skill grown past the limit (served only from files its
trust rules judged, so no last good copy) was refused as "being edited ... does not parse
right now ...; try again in a moment", and an own skill's note said the same: a file past the
limit does not fix itself. Both now say a person must cut it back.
"""

from __future__ import annotations

import pytest

from conftest import write_skill
from owner_client import bank_for
from skillbank.memories.skills.skill_file import MAX_SKILL_BYTES
from test_skill_trust import vendor_bank

NAME = "release-notes"
TASK = "Write release notes from merged pull requests."


@pytest.mark.parametrize("remote", [False, True], ids=["in-process", "client-of-owner"])
def test_a_skill_md_grown_past_the_limit_keeps_its_last_good_version(tmp_path, remote):
    with bank_for(tmp_path, remote) as bank:
        bank.skills.save(NAME, TASK, "# Steps\n1. Group by kind.\n")
        skill_md = bank.root / "skills" / NAME / "SKILL.md"
        good = skill_md.read_text()
        skill_md.write_text(good + "pasted log line\n" * (MAX_SKILL_BYTES // 16 + 10))
        report = bank.skills.sync()
        codes = {f.code for f in report.findings if f.path == str(skill_md)}
        assert {"too-large", "kept-last-good"} <= codes, report.findings  # 'too-large' alone
        assert NAME not in report.removed
        assert [h.name for h in bank.skills.search(TASK)] == [NAME]  # it returned []
        served = bank.skills.load(NAME)  # raised NotFoundError "no skill named ..."
        assert served.body.strip() == "# Steps\n1. Group by kind."
        assert any("being edited" in n and "larger than" in n and "cuts the file back" in n
                   for n in served.notes), served.notes
        skill_md.write_text(good.replace("Group by kind", "Group by area"))
        bank.skills.sync()
        assert "Group by area" in bank.skills.load(NAME).body


@pytest.mark.parametrize("remote", [False, True], ids=["in-process", "client-of-owner"])
def test_a_third_party_skill_past_the_limit_is_said_to_need_a_person_not_a_moment(
        tmp_path, remote):
    """Before: "... is being edited ... does not parse right now ...; try again in a moment"."""
    task = "Summarise a CSV file into a short report."
    md = write_skill(tmp_path / "vendor", "csv-report", task, "# Steps\n\nTotal each column.\n")
    with vendor_bank(tmp_path / "root", tmp_path / "vendor", remote) as bank:
        bank.context_for(task)
        md.write_text(md.read_text() + "log line\n" * (MAX_SKILL_BYTES // 9 + 10))
        bank.skills.sync()
        note = bank.context_for(task).note
        assert "csv-report was left out" in note and "too large" in note, note
        assert "cuts it back" in note and "try again in a moment" not in note, note
