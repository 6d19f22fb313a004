"""With --json every error is one JSON line on stderr, usage errors too.

Before session 16 click's usage errors (a bad option value, a missing file, an unknown
command) printed a rich "Usage ... Error" box even with --json, and a script reading stderr as
JSON broke. The exit code stays click's 2; a success and a command's own error are unchanged.
"""

from __future__ import annotations

import json

import pytest
from typer.testing import CliRunner

from skillbank.cli import app


@pytest.mark.parametrize("args, says", [
    (["experiences", "record", "--task", "x", "--outcome", "bogus"], "--outcome"),
    (["experiences", "list", "--limit", "0"], "--limit"),
    (["experiences", "import", "/no/such.jsonl"], "does not exist"),
    (["skills", "nosuch"], "No such command 'nosuch'"),
    (["--json-typo"], "No such option"),
])
def test_usage_errors_are_one_json_line(cli_root, args, says):
    result = CliRunner().invoke(app, ["--json", *args] if args[0] != "--json-typo"
                                else ["--json", "stats", "--json-typo"])
    assert result.exit_code == 2, (result.stdout, result.stderr)
    lines = result.stderr.strip().splitlines()
    assert len(lines) == 1, result.stderr
    error = json.loads(lines[0])
    assert error["type"] == "UsageError" and error["exit_code"] == 2 and says in error["error"]


def test_the_json_flag_after_the_command_counts_and_without_it_people_get_the_box(cli_root):
    result = CliRunner().invoke(app, ["experiences", "list", "--limit", "0", "--json"])
    assert result.exit_code == 2 and json.loads(result.stderr)["exit_code"] == 2
    human = CliRunner().invoke(app, ["experiences", "list", "--limit", "0"])
    assert human.exit_code == 2 and "Usage" in human.stderr


def test_success_and_command_errors_keep_their_codes(cli_root):
    ok = CliRunner().invoke(app, ["--json", "guidelines", "list"])
    assert ok.exit_code == 0 and json.loads(ok.stdout) == []
    missing = CliRunner().invoke(app, ["--json", "guidelines", "show", "gl-000000000000"])
    assert missing.exit_code == 3 and json.loads(missing.stderr)["type"] == "NotFoundError"


def test_a_group_without_its_command_says_so(cli_root):
    result = CliRunner().invoke(app, ["--json", "guidelines"])
    assert result.exit_code == 2
    error = json.loads(result.stderr.strip().splitlines()[-1])
    assert "a command is missing" in error["error"] and "guidelines --help" in error["error"]
