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


@pytest.fixture
def twins(cli_root, tmp_path):
    """Two skills whose paths differ only near their end (hunt-clicorpus #2, session 36)."""
    folder = tmp_path / "checkouts" / "sickn33+antigravity-awesome-skills" / "skills"
    for name in ("xss-html-injection", "xss-html-injection-v2"):
        write_skill(folder, name, f"Use when testing for XSS and HTML injection ({name}).")
    Run()("--no-bundled", "--skills-dir", tmp_path / "checkouts", "skills", "sync")
    return folder


@pytest.mark.parametrize("columns", [110, 130, 160, 200])
def test_wide_skills_list_shows_the_paths_tail_whole(twins, monkeypatch, columns):
    """Fails before: the tail of 48 was cut again at its end by a narrower column, at 160
    columns "…me-skills/skills/xss-html-inje…": the part that tells the two apart was lost."""
    monkeypatch.setenv("COLUMNS", str(columns))
    shown = Run()("skills", "list").stdout
    lines = shown.splitlines()
    assert all(len(line) <= columns for line in lines), max(lines, key=len)
    cells = [line.split("│")[3].strip() for line in lines if line.startswith("│")]
    for name in ("xss-html-injection", "xss-html-injection-v2"):
        path = str(twins / name / "SKILL.md")
        # its tail, uncut at its end (down to the skill's own folder where there is room)
        tails = [c for c in cells if c.endswith("/SKILL.md") and path.endswith(c.lstrip("…"))
                 and (columns < 130 or c.endswith(f"/{name}/SKILL.md"))]
        assert tails, shown


def test_skills_show_gives_the_path_whole(twins, monkeypatch):
    """Fails before: piped at 80 columns, the path line ended "…awesome-sk…"."""
    monkeypatch.setenv("COLUMNS", "80")
    path = str(twins / "xss-html-injection-v2" / "SKILL.md")
    assert len(path) > 80
    shown = Run()("skills", "show", "xss-html-injection-v2").stdout
    [line] = [line for line in shown.splitlines() if line.startswith("path")]
    assert line.split(None, 1)[1].rstrip() == path, shown
    # On a terminal the path is folded over lines at its width, never cut.
    monkeypatch.setattr("skillbank.cli.skills.stdout_is_terminal", lambda: True)
    lines = Run()("skills", "show", "xss-html-injection-v2").stdout.splitlines()
    start = next(i for i, line in enumerate(lines) if line.startswith("path"))
    assert all(len(line) <= 80 for line in lines[:start + 3])
    assert "".join(line[13:].rstrip() for line in lines[start:start + 3]).startswith(path), lines
