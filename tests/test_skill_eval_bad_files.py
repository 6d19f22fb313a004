"""`skills eval` over every skill reports each skill even when one eval file is bad, and a
`--file` that is a folder is invalid input (exit 2), not an unexpected error.

Before the fix the run stopped at the first malformed file with no result for any other
skill, and `--file <a folder>` exited 1 with a raw `[Errno 21] Is a directory`. Run in process
and through a client of an owner.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from typer.testing import CliRunner

from conftest import write_skill
from owner_client import owner_process
from skillbank.cli import app
from skillbank.errors import InvalidInputError
from skillbank.memories.skills import trigger_evals


@pytest.fixture
def skills(cli_root) -> Path:
    folder = cli_root / "skills"
    write_skill(folder, "csv-report", "Summarise a CSV file into a markdown report.")
    write_skill(folder, "pdf-merge", "Merge several PDF files into one document.")
    write_skill(folder, "zip-files", "Pack files into a zip archive.")
    for name, cases in (("csv-report", [{"query": "summarise this csv as a report",
                                         "should_trigger": True}]),
                        ("pdf-merge", [{"query": "join these pdfs", "should_trigger": "yes"}]),
                        ("zip-files", [{"query": "zip these files up", "should_trigger": True}])):
        (folder / name / "evals").mkdir()
        (folder / name / "evals" / "trigger_evals.json").write_text(json.dumps(cases))
    return folder


def run(*args, code=0):
    result = CliRunner().invoke(app, ["--no-bundled", *map(str, args)])
    assert result.exit_code == code, (args, result.stdout, result.stderr, result.exception)
    return result


def check_all(json_result, human_result) -> None:
    out = json.loads(json_result.stdout)
    assert [r["skill"] for r in out["skills"]] == ["csv-report", "zip-files"]
    assert [e["skill"] for e in out["errors"]] == ["pdf-merge"]
    assert '"should_trigger" must be true or false' in out["errors"][0]["error"]
    assert out["errors"][0]["file"].endswith("pdf-merge/evals/trigger_evals.json")
    human = " ".join(human_result.stdout.split())
    assert "csv-report" in human and "zip-files" in human
    assert "pdf-merge: not run: 1 bad entry" in human


def test_one_bad_eval_file_does_not_hide_the_other_skills(skills):
    check_all(run("--json", "skills", "eval", code=2), run("skills", "eval", code=2))
    run("skills", "eval", "csv-report")  # a good one alone: exit 0
    run("skills", "eval", "pdf-merge", code=2)  # the bad one alone: invalid input


def test_a_folder_or_a_pipe_as_the_eval_file_is_invalid_input(skills, tmp_path):
    folder = skills / "csv-report" / "evals"
    result = run("--json", "skills", "eval", "csv-report", "--file", folder, code=2)
    error = json.loads(result.stderr.strip().splitlines()[-1])
    assert error["type"] == "InvalidInputError" and "is a folder" in error["error"]
    assert "Errno" not in error["error"]
    import os

    fifo = tmp_path / "evals.fifo"
    os.mkfifo(fifo)
    with pytest.raises(InvalidInputError, match="not a regular file"):
        trigger_evals.load(fifo)  # never opened: opening a pipe would block


def test_through_a_client_of_the_owner(skills, cli_root):
    with owner_process(cli_root):
        check_all(run("--json", "skills", "eval", code=2), run("skills", "eval", code=2))
        run("skills", "eval", "csv-report", "--file", skills / "csv-report" / "evals", code=2)
