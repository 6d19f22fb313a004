"""A revision draft's diff is headed with the path of the SKILL.md it revises, nested in a
collection too (hunt-skilllife #2, session 35).

Before: for a skill kept in a collection folder (`skills/docs/pdf-join/`), the diff shown by
`propose`, `drafts()`, `edit_draft`, `skills drafts --diff` and MCP `propose_skills` read
`--- skills/pdf-join/SKILL.md`, a file that does not exist (adopting wrote the right folder).
"""

from __future__ import annotations

import shutil
from pathlib import Path
from typing import Any

import pytest

from owner_client import bank_for
from test_multiprocess import cli

NESTED = "--- skills/docs/pdf-join/SKILL.md"
BODY = "# Steps\n\n1. Join the files with qpdf.\n"


def _revision_of_a_nested_skill(bank: Any, root: Path) -> Any:
    """`pdf-join`, moved by hand into the `docs` collection, fails twice: its revision draft."""
    bank.skills.save("pdf-join", "Merge several PDF files into one document with qpdf.", BODY)
    (root / "skills" / "docs").mkdir()
    shutil.move(root / "skills" / "pdf-join", root / "skills" / "docs" / "pdf-join")
    bank.skills.sync()
    for task, lesson in (("Merge the quarterly PDF reports into one file",
                          "Check the bookmarks after qpdf has merged the files."),
                         ("Merge the scanned contract PDFs into a single document",
                          "Sort the input files by page order before merging them.")):
        bank.experiences.record(task=task, outcome="failure", tags=["skill:pdf-join"],
                                lessons=[{"kind": "failure_trigger", "text": lesson}])
    return [d for d in bank.skills.propose() if d.revises == "pdf-join"][0]


@pytest.mark.parametrize("remote", [False, True], ids=["in-process", "client-of-owner"])
def test_a_revision_of_a_skill_in_a_collection_names_its_real_file(tmp_path, remote):
    root = tmp_path / "root"
    with bank_for(tmp_path, remote) as bank:
        draft = _revision_of_a_nested_skill(bank, root)
        assert Path(bank.skills.load("pdf-join").path) == \
            root / "skills" / "docs" / "pdf-join" / "SKILL.md"
        assert draft.diff.splitlines()[:2] == [NESTED, "+++ drafts/pdf-join/SKILL.md"], draft.diff
        assert bank.skills.draft(draft.name).diff.splitlines()[0] == NESTED  # read again
        edited = Path(draft.path).read_text(encoding="utf-8") + "\nA reviewer's line.\n"
        assert bank.skills.edit_draft(draft.name, edited).diff.splitlines()[0] == NESTED
    shown = cli(root, "skills", "drafts", "--diff")
    assert shown.returncode == 0, shown.stderr
    assert NESTED in shown.stdout and "skills/pdf-join/SKILL.md" not in \
        shown.stdout.replace(NESTED, ""), shown.stdout


async def test_mcp_propose_skills_names_the_real_file(tmp_path):
    from mcp import Client

    from skillbank.mcp_server import build_server

    root = tmp_path / "root"
    with bank_for(tmp_path, False) as bank:
        bank.skills.save("pdf-join", "Merge several PDF files into one document with qpdf.", BODY)
        (root / "skills" / "docs").mkdir()
        shutil.move(root / "skills" / "pdf-join", root / "skills" / "docs" / "pdf-join")
        bank.skills.sync()
        for n in range(2):
            bank.experiences.record(task=f"Merge the PDF reports of week {n + 1} into one file",
                                    outcome="failure", tags=["skill:pdf-join"], lessons=[{
                                        "kind": "failure_trigger",
                                        "text": "Check the bookmarks after qpdf has merged."}])
        async with Client(build_server(bank, trusted=True)) as client:
            result = await client.call_tool("propose_skills", {"min_support": 3})
            assert not result.is_error, result.content[0].text
        [revision] = [d for d in result.structured_content["drafts"] if d["revises"]]
        assert revision["diff"].splitlines()[0] == NESTED, revision["diff"]
