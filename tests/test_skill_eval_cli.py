"""`skillbank skills eval`: a skill's trigger queries (Agent Skills eval format) routed over the
whole library, misfires reported both ways; bad eval files are clear errors (#26)."""

from __future__ import annotations

import json

import pytest
from typer.testing import CliRunner

from conftest import write_skill
from skillbank.cli import app


@pytest.fixture
def library(cli_root, tmp_path, monkeypatch):
    folder = tmp_path / "skills"
    write_skill(folder, "pdf-tools", "Merge, split and rotate PDF files")
    write_skill(folder, "git-cleanup", "Delete stale local git branches after squash merges")
    write_skill(folder, "sql-tuning", "Speed up slow SQL queries with indexes")
    evals = folder / "pdf-tools" / "evals"
    evals.mkdir()
    (evals / "trigger_evals.json").write_text(json.dumps([
        {"query": "merge these two PDF files into one", "should_trigger": True},
        {"query": "rotate page 3 of the PDF", "should_trigger": True},
        {"query": "delete my stale git branches", "should_trigger": False},
        {"query": "the SQL query for slow orders needs an index", "should_trigger": True},
    ]))
    monkeypatch.setenv("SKILLBANK_SKILL_ROOTS", str(folder))
    return folder


def run(*args, code=0):
    result = CliRunner().invoke(app, [str(a) for a in args])
    assert result.exit_code == code, (result.stdout, result.stderr, result.exception)
    return result


def test_eval_reports_misfires_both_ways(library):
    out = json.loads(run("--json", "skills", "eval", "pdf-tools").stdout)
    report = out["skills"][0]
    assert report["skill"] == "pdf-tools" and report["total"] == 4
    assert report["passed"] == 3 and report["misses"] == 1 and report["false_triggers"] == 0
    missed = [r for r in report["results"] if not r["passed"]][0]
    assert missed["query"].startswith("the SQL query") and missed["routed_to"][0] == "sql-tuning"
    # a should-not query that does route to the skill is a false trigger
    (library / "pdf-tools" / "evals" / "trigger_evals.json").write_text(
        '{"query": "split the PDF in two", "should_trigger": false}\n')
    report = json.loads(run("--json", "skills", "eval").stdout)["skills"]
    assert [(r["skill"], r["false_triggers"]) for r in report] == [("pdf-tools", 1)]
    human = run("skills", "eval", "pdf-tools").stdout
    assert "fired on" in human and "split the PDF" in human


@pytest.mark.parametrize("content, message", [
    ('[{"query": "merge", "should_trigger": "yes"}]', "item 1: \"should_trigger\" must be true"),
    ('{"query": "merge", "should_trigger": true}\nnot json\n', "trigger_evals.json:2: not JSON"),
    ('[{"should_trigger": true}]', "\"query\" must be a non-empty string"),
    ('{"cases": []}', "expected a JSON array"),
    ("[]", "holds no trigger queries"),
    ('[{"query": "a", "should_trigger": true}, {"query": "a", "should_trigger": false}]',
     "labelled both ways"),
])
def test_bad_eval_files_are_clear_errors(library, content, message):
    (library / "pdf-tools" / "evals" / "trigger_evals.json").write_text(content)
    result = run("--json", "skills", "eval", "pdf-tools", code=2)
    assert message in json.loads(result.stderr.strip().splitlines()[-1])["error"]


def test_a_skill_without_evals_and_file_without_name(library, tmp_path):
    result = run("--json", "skills", "eval", "git-cleanup", code=3)
    assert "keeps no trigger evals" in result.stderr
    run("--json", "skills", "eval", "--file", tmp_path / "x.json", code=2)
    other = tmp_path / "mine.jsonl"
    other.write_text('{"prompt": "clean up stale git branches", "should_trigger": true}\n')
    report = json.loads(run("--json", "skills", "eval", "git-cleanup", "--file", other).stdout)
    assert report["passed"] == 1


def test_fail_on_miss_lets_ci_fail_on_misfires(library):
    """What users met (docs hunt): misses exited 0 like a clean run, so CI could not fail."""
    run("skills", "eval", "pdf-tools")  # a miss is a result, not an error
    out = json.loads(run("--json", "skills", "eval", "pdf-tools", "--fail-on-miss",
                         code=1).stdout)
    assert out["skills"][0]["misses"] == 1  # the report is still written
    run("skills", "eval", "--fail-on-miss", code=1)  # every skill's evals
    (library / "pdf-tools" / "evals" / "trigger_evals.json").write_text(
        '{"query": "split the PDF in two", "should_trigger": false}\n')  # a false trigger
    run("skills", "eval", "pdf-tools", "--fail-on-miss", code=1)
    (library / "pdf-tools" / "evals" / "trigger_evals.json").write_text(
        '{"query": "merge these two PDF files into one", "should_trigger": true}\n')
    run("skills", "eval", "pdf-tools", "--fail-on-miss")  # all pass: 0
    (library / "pdf-tools" / "evals" / "trigger_evals.json").write_text("[]")
    run("skills", "eval", "--fail-on-miss", code=2)  # a bad file is still exit 2


def test_a_skill_that_did_not_load_but_keeps_evals_is_an_error_row(library):
    """Users met a 1.08 MB SKILL.md refused as too large while its eval file was skipped in
    silence ("passed 1/1"; `--fail-on-miss` exited 0). Now an error row and exit 2 (hunt s20)."""
    from skillbank.memories.skills.skill_file import MAX_SKILL_BYTES

    big = write_skill(library, "big-runbook", "A runbook", "x" * (MAX_SKILL_BYTES + 10))
    (big.parent / "evals").mkdir()
    (big.parent / "evals" / "trigger_evals.json").write_text(json.dumps(
        [{"query": "follow the runbook", "should_trigger": True}]))
    out = json.loads(run("--json", "skills", "eval", "--fail-on-miss", code=2).stdout)
    [error] = out["errors"]
    assert error["skill"] == "big-runbook" and "too-large" in error["error"]
    assert [r["skill"] for r in out["skills"]] == ["pdf-tools"]
