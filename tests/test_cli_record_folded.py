"""`skillbank experiences record` says when a run was folded into a stored one, and
`experiences show` says how many runs a record stands for.

hunt-loop-shared #4 (session 31): recording the same run twice printed "recorded exp-..." both
times and `--json` gave only `{"id": ...}`, while the API's RecordedId said "folded into exp-...:
it repeats a run stored before ... nothing new was stored"; `experiences show` did not show the
run count (`duplicates`), so a CLI user could not see that anything was folded. In process and
as a client of an owner process.
"""

from __future__ import annotations

import contextlib
import json

import pytest

from owner_client import owner_process
from test_multiprocess import cli

RUN = ["experiences", "record", "--task", "Migrate the users table", "--outcome", "failure",
       "--feedback", "Forgot to lock the table."]


def skillbank(root, remote, *args):
    """The CLI's stdout (it must succeed): in process, or a subprocess that is a client."""
    if remote:
        done = cli(root, "--no-bundled", *args)
        assert done.returncode == 0, done.stderr
        return done.stdout
    from typer.testing import CliRunner

    from skillbank.cli import app

    result = CliRunner().invoke(app, ["--root", str(root), "--no-bundled", *args])
    assert result.exit_code == 0, result.output
    return result.stdout


@pytest.mark.parametrize("remote", [False, True], ids=["in-process", "client-of-owner"])
def test_a_folded_run_is_told_as_folded(cli_root, remote):
    cli_root.mkdir(parents=True, exist_ok=True)
    with owner_process(cli_root) if remote else contextlib.nullcontext():
        first = json.loads(skillbank(cli_root, remote, "--json", *RUN))
        assert first["folded"] is False and first["note"] == "", first
        again = json.loads(skillbank(cli_root, remote, "--json", *RUN))
        assert again["id"] == first["id"] and again["folded"] is True, again
        assert again["note"].startswith(f"folded into {first['id']}"), again
        said = " ".join(skillbank(cli_root, remote, *RUN).split())
        assert said.startswith(f"folded into {first['id']}"), said
        assert "recorded" not in said
        shown = " ".join(skillbank(cli_root, remote, "experiences", "show", first["id"]).split())
        assert "runs 3 (2 folded in as repeats)" in shown, shown


@pytest.mark.parametrize("remote", [False, True], ids=["in-process", "client-of-owner"])
def test_a_new_run_is_still_recorded(cli_root, remote):
    cli_root.mkdir(parents=True, exist_ok=True)
    with owner_process(cli_root) if remote else contextlib.nullcontext():
        said = " ".join(skillbank(cli_root, remote, *RUN).split())
        assert said.startswith("recorded exp-"), said
        eid = said.split()[1]
        shown = " ".join(skillbank(cli_root, remote, "experiences", "show", eid).split())
        assert "runs 1" in shown, shown

