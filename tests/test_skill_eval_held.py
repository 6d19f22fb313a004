"""A held skill's evals are a row, not silence, and the held message's command runs as printed
(hunt-disclose #6 and #7, session 25).

#6: `skills eval` over every skill left out a held third-party skill that keeps an eval file:
exit 0, `errors: []`, so `--fail-on-miss` in CI passed while its evals never ran (a named
`skills eval "Data Cleaning"` did say it is held). #7: the held message printed
`skillbank skills review Data Cleaning accept`, which fails for the space in the name
("Got unexpected extra argument"). In process and through a client of another process that
owns the root, on the API and the CLI.
"""

from __future__ import annotations

import json
import shlex
from pathlib import Path

import pytest
from typer.testing import CliRunner

from conftest import write_skill
from owner_client import bank_for, owner_process
from skillbank.cli import app
from skillbank.memories.skills import trigger_evals
from skillbank.memories.skills.trust import HeldError

HELD = "Data Cleaning"
COMMAND = "skillbank skills review 'Data Cleaning' accept"


def _evals(folder: Path, query: str) -> None:
    (folder / "evals").mkdir()
    (folder / "evals" / "trigger_evals.json").write_text(
        json.dumps([{"query": query, "should_trigger": True}]))


@pytest.fixture
def vendor(tmp_path) -> Path:
    folder = tmp_path / "vendor"
    _evals(write_skill(folder, HELD, "Tidy spreadsheet data for analysis.").parent,
           "tidy my spreadsheet for analysis")
    return folder


def _command(message: str) -> list[str]:
    """The command a held message gives, split as a shell splits it."""
    assert COMMAND in message, message
    return shlex.split(message[message.index(COMMAND):])[1:]


@pytest.mark.parametrize("remote", [False, True], ids=["in-process", "client-of-owner"])
def test_a_held_skill_is_named_with_a_command_that_runs(tmp_path, vendor, remote):
    with bank_for(tmp_path, remote, skill_roots=(vendor,)) as bank:
        bank.skills.review_skill(HELD, "reject", reason="not looked at yet")
        with pytest.raises(HeldError) as refused:
            bank.skills.load(HELD)
        assert _command(str(refused.value)) == ["skills", "review", HELD, "accept"]
        [row] = trigger_evals.held(bank.skills.list(include_held=True))
        assert row["skill"] == HELD and row["file"].endswith("evals/trigger_evals.json")
        assert "its evals were not run" in row["error"] and COMMAND in row["error"]
        bank.skills.review_skill(HELD, "accept")
        assert trigger_evals.held(bank.skills.list(include_held=True)) == []


def run(*args, code=0):
    result = CliRunner().invoke(app, ["--no-bundled", *map(str, args)])
    assert result.exit_code == code, (args, result.stdout, result.stderr, result.exception)
    return result


def _check_cli() -> None:
    run("skills", "review", HELD, "reject", "--reason", "not looked at yet")
    out = json.loads(run("--json", "skills", "eval", code=2).stdout)
    assert [r["skill"] for r in out["skills"]] == ["pdf-report"]
    assert [e["skill"] for e in out["errors"]] == [HELD]
    assert "held for review" in out["errors"][0]["error"]
    human = " ".join(run("skills", "eval", "--fail-on-miss", code=2).stdout.split())
    assert f"{HELD}: not run: its evals were not run" in human
    named = run("--json", "skills", "eval", HELD, code=7)
    error = json.loads(named.stderr.strip().splitlines()[-1])["error"]
    run(*_command(error))  # the command exactly as the message prints it
    out = json.loads(run("--json", "skills", "eval").stdout)
    assert sorted(r["skill"] for r in out["skills"]) == [HELD, "pdf-report"]
    assert out["errors"] == []


@pytest.fixture
def library(cli_root, vendor, monkeypatch) -> Path:
    _evals(write_skill(cli_root / "skills", "pdf-report",
                       "Build a PDF report from CSV data.").parent,
           "make a pdf report from my csv")
    monkeypatch.setenv("SKILLBANK_SKILL_ROOTS", str(vendor))
    return cli_root


def test_the_cli_eval_names_a_held_skill(library):
    _check_cli()


def test_the_cli_eval_names_a_held_skill_through_a_client_of_the_owner(library, vendor):
    with owner_process(library, (vendor,)):
        _check_cli()
