"""What `--no-watch` does is what docs/mcp.md says (hunt-mcpauthor #5, session 37).

The docs said changed files "are served after the next start or `skillbank skills sync`", but an
edited SKILL.md was served by `load_skill` at once (reads come from the files) while search kept
its old description and a new skill stayed unknown. The behaviour is kept (a read never serves
a file's older text); the docs now say it. The bank as `serve --no-watch` opens it
(`skills_recheck_seconds = 0`).
"""

from __future__ import annotations

from pathlib import Path

import pytest

from conftest import write_skill
from skillbank import Skillbank
from skillbank.embeddings import HashEmbedding
from skillbank.errors import NotFoundError

DOCS = Path(__file__).resolve().parents[1] / "docs" / "mcp.md"


def test_no_watch_reads_follow_the_files_and_the_index_waits_for_a_sync(tmp_path):
    line = next(x for x in DOCS.read_text().splitlines() if "`--no-watch`" in x and "|" in x)
    assert "changed files are served after the next start" not in line
    assert "`load_skill` and `skill://` reads serve an edit at once" in line
    bank = Skillbank.open(tmp_path / "root", include_bundled=False, skills_recheck_seconds=0,
                          embedding_function=HashEmbedding())
    try:
        skills = bank.root / "skills"
        write_skill(skills, "csv-report", "Summarise a CSV file into a short report")
        bank.skills.sync()
        write_skill(skills, "csv-report", "Summarise a CSV file EDITED", "# edited body\n")
        write_skill(skills, "json-fmt", "Format a JSON file")
        assert bank.skills.load("csv-report").body == "# edited body\n"  # at once
        assert [h.record.description for h in bank.skills.search(
            "summarise a csv file into a short report")] == [
            "Summarise a CSV file into a short report"]  # the index: until a sync
        with pytest.raises(NotFoundError):
            bank.skills.load("json-fmt")
        bank.skills.sync()
        assert bank.skills.load("json-fmt").description == "Format a JSON file"
    finally:
        bank.close()
