"""`skills eval` over every skill: an eval query the skill search refuses (over 50,000
characters, or a lone surrogate from a JSON "\\ud83d") is an error row naming the skill, the file
and the item, and the other skills still run (hunt-badinput #1, session 26).

Before, the search's InvalidInputError escaped the per-file handling: no row for any skill, and
"task is 59,999 characters ..." named neither file nor item. In process and through a client of
an owner process (the real CLI, Chroma).
"""

from __future__ import annotations

import json
from contextlib import nullcontext

import pytest
from typer.testing import CliRunner

from conftest import write_skill
from owner_client import bank_for, owner_process
from skillbank.cli import app
from skillbank.errors import InvalidInputError
from skillbank.memories.skills import trigger_evals

REMOTE = pytest.mark.parametrize("remote", [False, True], ids=["in-process", "client-of-owner"])
LONG = "clean csv " * 6000  # 60,000 characters
SURROGATE = "clean csv \ud83d"


def _skills(cli_root, bad_query):
    folder = cli_root / "skills"
    write_skill(folder, "pdf-merge", "Merge several PDF files into one PDF document.")
    write_skill(folder, "csv-clean", "Clean CSV files and remove duplicate rows.")
    for name, cases in (("pdf-merge", [{"query": "merge these two PDFs", "should_trigger": True}]),
                        ("csv-clean", [{"query": "remove duplicate rows", "should_trigger": True},
                                       {"query": bad_query, "should_trigger": True}])):
        (folder / name / "evals").mkdir()
        (folder / name / "evals" / "trigger_evals.json").write_text(json.dumps(cases))
    return folder


def run(*args, code):
    result = CliRunner().invoke(app, ["--no-bundled", *map(str, args)])
    assert result.exit_code == code, (args, result.stdout, result.stderr, result.exception)
    return result


@REMOTE
@pytest.mark.parametrize("bad_query", [LONG, SURROGATE], ids=["60k-chars", "lone-surrogate"])
def test_a_refused_query_is_an_error_row_and_the_others_run(cli_root, remote, bad_query):
    """Fails before: exit 2 with no table, and the error named no skill, file or item."""
    folder = _skills(cli_root, bad_query)
    with owner_process(cli_root) if remote else nullcontext():
        out = json.loads(run("--json", "skills", "eval", code=2).stdout)
        human = " ".join(run("skills", "eval", code=2).stdout.split())
        alone = run("--json", "skills", "eval", "csv-clean", code=2)
    assert [r["skill"] for r in out["skills"]] == ["pdf-merge"]
    assert out["skills"][0]["passed"] == 1
    (error,) = out["errors"]
    assert error["skill"] == "csv-clean"
    assert error["file"] == str(folder / "csv-clean" / "evals" / "trigger_evals.json")
    assert "trigger_evals.json: item 2: \"query\"" in error["error"]
    assert ("60,000 characters" in error["error"] if bad_query == LONG
            else "lone surrogate" in error["error"])
    assert "pdf-merge" in human and "csv-clean: not run: 1 bad entry" in human
    assert "item 2" in json.loads(alone.stderr.strip().splitlines()[-1])["error"]


@REMOTE
def test_a_query_the_search_refuses_names_its_item(tmp_path, remote):
    """`run` on a case `load` did not check (a caller's own): the real search's refusal names
    the file and item."""
    case = trigger_evals.Case(LONG, True, "evals.json: item 3")
    with bank_for(tmp_path, remote) as bank:
        with pytest.raises(InvalidInputError, match=r"^f.json: evals.json: item 3: task is 60,000"):
            trigger_evals.run(bank.skills, "s", [case], "f.json")


def test_the_not_an_array_message_has_no_stray_brace(tmp_path):
    path = tmp_path / "trigger_evals.json"
    path.write_text('{"evals": 5}')
    with pytest.raises(InvalidInputError) as caught:
        trigger_evals.load(path)
    assert '{"query", "should_trigger"} objects' in str(caught.value)
