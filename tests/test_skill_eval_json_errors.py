"""A trigger-eval file with one JSON slip is named once, with its line and column.

Hunt (report #4): a pretty-printed `evals/trigger_evals.json` array with a trailing comma after
its last object failed `json.loads`, was re-read as JSON lines, and every line failed: "5 bad
entries ... :1: not JSON (Expecting value); :2: not JSON (Extra data); ...", never the comma's
place. A pretty-printed single object did the same. JSON lines keep their per-line errors. In
process and through the CLI as a client of an owner.
"""

from __future__ import annotations

import json

import pytest
from typer.testing import CliRunner

from conftest import write_skill
from owner_client import owner_process
from skillbank.cli import app
from skillbank.errors import InvalidInputError
from skillbank.memories.skills import trigger_evals

ARRAY = """[
  {"query": "Merge these two PDFs into one file", "should_trigger": true},
  {"query": "Write a haiku about autumn", "should_trigger": false},
]
"""
OBJECT = """{
  "evals": [
    {"query": "Merge these two PDFs into one file", "should_trigger": true}
  ],
}
"""
MISSING_COLON = """[
  {"query": "Merge these two PDFs", "should_trigger" true}
]
"""


@pytest.mark.parametrize("text, where", [
    (ARRAY, "invalid JSON at line 3 column 67: a trailing comma before ']' (line 4 column 1)"),
    (OBJECT, "invalid JSON at line 4 column 4: a trailing comma before '}' (line 5 column 1)"),
    (MISSING_COLON, "invalid JSON at line 2 column 54: Expecting ':' delimiter"),
], ids=["array-trailing-comma", "object-trailing-comma", "missing-colon"])
def test_a_document_with_a_slip_is_one_error_with_its_place(tmp_path, text, where):
    path = tmp_path / "trigger_evals.json"
    path.write_text(text)
    with pytest.raises(InvalidInputError) as caught:
        trigger_evals.load(path)
    assert str(caught.value) == f"{path}: {where}"


def test_json_lines_keep_their_per_line_errors(tmp_path):
    good = json.dumps({"query": "Merge these PDFs", "should_trigger": True})
    for name in ("trigger_evals.json", "trigger_evals.jsonl"):
        path = tmp_path / name
        path.write_text(f"{good}\n{{\"query\": \"x\",}}\n{good[:-1]}\n")
        with pytest.raises(InvalidInputError, match=r"2 bad entries .*:2: not JSON .*:3: not JSON"):
            trigger_evals.load(path)
    # A line's message ends with its place: "(Unterminated string starting at)" stopped
    # mid-sentence (hunt-author #7, session 24).
    path = tmp_path / "trigger_evals.jsonl"
    path.write_text(f'{good}\n{{"query": "bad line\n')
    with pytest.raises(InvalidInputError, match=r":2: not JSON \(Unterminated string starting "
                                                r"at, column 11\)"):
        trigger_evals.load(path)
    path = tmp_path / "trigger_evals.json"  # line 1 broken, not .jsonl: its place is named
    path.write_text("{\"query\": \"x\",\n" + good + "\n")
    with pytest.raises(InvalidInputError, match="invalid JSON at line 2 column 1: Expecting property name"):
        trigger_evals.load(path)


def test_through_a_client_of_the_owner(cli_root):
    skill = write_skill(cli_root / "skills", "pdf-merge", "Merge PDF files into one.").parent
    (skill / "evals").mkdir()
    (skill / "evals" / "trigger_evals.json").write_text(ARRAY)
    with owner_process(cli_root):
        result = CliRunner().invoke(app, ["--no-bundled", "skills", "eval", "pdf-merge"])
    assert result.exit_code == 2, (result.stdout, result.stderr)
    said = " ".join(result.stderr.split())
    assert "invalid JSON at line 3 column 67: a trailing comma" in said, said
    assert "not JSON" not in said
