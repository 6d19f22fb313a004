"""`skillbank stats` through a client says what the owner serves (session 16).

On a root served by a process without the bundled skills, `stats` said "bundled skills:
served" (this command's own request) beside a note saying they are not served.
"""

from __future__ import annotations

import json

from typer.testing import CliRunner

from owner_client import owner_process
from skillbank.cli import app


def test_stats_through_a_client_says_what_the_owner_serves(cli_root):
    cli_root.mkdir(parents=True, exist_ok=True)
    with owner_process(cli_root, bundled=False):
        result = CliRunner().invoke(app, ["--json", "stats"])
    assert result.exit_code == 0, result.stderr
    data = json.loads(result.stdout)
    assert data["bundled_skills"] == "not served by the process that serves this root"
    assert data["skills"] == 0
