"""Every `skillbank migrate` command README.md and docs/*.md show passes the options the CLI
requires, as written (review).

Users met this: README's CLI summary showed `skillbank migrate --from ROOT --database-url URL
--namespace team`, which stops at once with "name the team deployment to import into:
--deployment NAME" unless SKILLBANK_DEPLOYMENT happens to be set. Each documented command is
run through the CLI with neither setting in the environment and the import itself replaced by
a stand-in that records what it was given.
"""

from __future__ import annotations

import re
import shlex
from pathlib import Path

import pytest
from typer.testing import CliRunner

REPO = Path(__file__).resolve().parents[1]
DOCS = [REPO / "README.md", *sorted((REPO / "docs").glob("*.md"))]


def documented_migrate_commands() -> list[tuple[str, list[str]]]:
    """(where, argv after `skillbank`) of each `skillbank migrate` command line, with its
    continuation lines joined and a trailing `# comment` dropped."""
    found = []
    for path in DOCS:
        lines = path.read_text(encoding="utf-8").splitlines()
        i = 0
        while i < len(lines):
            line = lines[i]
            start = line.find("skillbank migrate ")
            if start >= 0 and not line[:start].strip(" `$"):
                where = f"{path.relative_to(REPO)}:{i + 1}"
                command = line[start:]
                while command.rstrip().endswith("\\") and i + 1 < len(lines):
                    i += 1
                    command = command.rstrip()[:-1] + " " + lines[i]
                command = re.split(r"\s#\s", command.split("`")[0])[0]
                found.append((where, shlex.split(command)[1:]))
            i += 1
    return found


def test_there_are_documented_migrate_commands():
    where = {w.split(":")[0] for w, _ in documented_migrate_commands()}
    assert {"README.md", "docs/team.md"} <= where, where


@pytest.mark.parametrize("where,argv", documented_migrate_commands(),
                         ids=[w for w, _ in documented_migrate_commands()])
def test_a_documented_migrate_command_runs_as_written(where, argv, monkeypatch, tmp_path):
    from skillbank.cli import app
    from skillbank.team import migrate as team_migrate

    for name in ("SKILLBANK_DEPLOYMENT", "SKILLBANK_DATABASE_URL", "SKILLBANK_ROOT"):
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setenv("HOME", str(tmp_path))
    monkeypatch.chdir(tmp_path)
    given: dict = {}

    class Imported(Exception):
        pass

    def stand_in(root, database_url, **kwargs):
        given.update(kwargs, root=root, database_url=database_url)
        raise Imported

    monkeypatch.setattr(team_migrate, "migrate_root", stand_in)
    result = CliRunner().invoke(app, argv)
    assert given, f"{where}: `skillbank {' '.join(argv)}` stops before importing:\n" \
                  f"{result.stdout}{result.stderr}"
    assert given["deployment"] and given["database_url"]
