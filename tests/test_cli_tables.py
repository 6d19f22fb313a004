"""Tables that fit the terminal (#27): `skills list` on a large library printed 196,303 lines at
80 columns (a 48-character name squeezed the path column to one character, printed vertically);
search tables listed rows scored 0.000 and squeezed descriptions to ~15 characters."""

from __future__ import annotations

import json

import pytest

from conftest import write_skill
from test_cli import Run

LONG = "convert-spreadsheets-into-well-formatted-reports"  # 48 characters


@pytest.fixture
def library(cli_root, tmp_path, monkeypatch):
    monkeypatch.setenv("COLUMNS", "80")
    folder = tmp_path / "a-rather-long-folder-name-for-skills" / "nested"
    write_skill(folder, LONG, "Turn spreadsheets into reports with charts and a summary table")
    for i in range(64):
        write_skill(folder, f"skill-{i:02d}", f"Handle chore number {i} for the data team")
    return folder


def test_skills_list_fits_80_columns_pages_and_is_complete_in_json(library):
    run = Run()
    base = ["--no-bundled", "--skills-dir", library]
    shown = run(*base, "skills", "list").stdout
    lines = shown.splitlines()
    assert all(len(line) <= 80 for line in lines), max(lines, key=len)
    assert len(lines) < 70, len(lines)  # one line per row, 50 rows, not a column per character
    # The long name whole, broken after its hyphens over its row's lines, so the description
    # keeps 30 characters at 80 columns (it was squeezed to a few beside the name).
    names = [line.split("│")[1].strip() for line in lines if line.startswith("│")]
    assert "".join(names[:3]) == LONG, shown
    assert "50 of 65 skills" in shown
    everything = json.loads(run(*base, "--json", "skills", "list").stdout)
    assert len(everything) == 65
    assert "65 skills" in run(*base, "skills", "list", "--all").stdout


def test_search_tables_drop_rows_scored_zero_and_keep_descriptions_readable(library):
    run = Run()
    base = ["--no-bundled", "--skills-dir", library]
    found = run(*base, "skills", "search", "turn spreadsheets into reports", "-k", "10").stdout
    assert "0.000" not in found
    assert "Turn spreadsheets into reports with" in " ".join(found.split())
