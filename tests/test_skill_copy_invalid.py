"""A served read-only skill the spec refuses can still be made the bank's own.

Before session 16, `skills update` on such a skill said "make it the bank's own with `skillbank
skills copy Excel Automation`" (unquoted: pasting it was a usage error), and `skills copy`
refused it ("invalid skill name", or "'metadata' must map strings to strings" for
`metadata: {dependencies: [openpyxl]}`): 239 skills of the shared corpus could be served but
never copied or changed. Now the advice is quoted, names `--as` where the name cannot be kept,
and the copy writes refused frontmatter in the form the spec allows, naming each change. Run
in process and through a client of another process that owns the root.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from typer.testing import CliRunner

from owner_client import owner_process
from skillbank.cli import app


@pytest.fixture
def folder(tmp_path) -> Path:
    ro = tmp_path / "ro"
    (ro / "spreadsheets").mkdir(parents=True)
    (ro / "spreadsheets" / "SKILL.md").write_text(
        "---\nname: spreadsheets\ndescription: Work with spreadsheet files.\nmetadata:\n"
        "  dependencies: [openpyxl]\n  version: 2\nallowed-tools: [Read, Bash]\n---\n# Steps\n")
    (ro / "excel").mkdir()
    (ro / "excel" / "SKILL.md").write_text(
        "---\nname: Excel Automation\ndescription: Automate Excel workbooks.\n---\n# Steps\n")
    return ro


def run(folder: Path, *args: str, code: int = 0):
    result = CliRunner().invoke(app, ["--no-bundled", "--skills-dir", str(folder), *args])
    assert result.exit_code == code, (args, result.stdout, result.stderr)
    return result


def flat(text: str) -> str:
    return " ".join(text.split())


def check(root: Path, folder: Path) -> None:
    refused = flat(run(folder, "skills", "update", "Excel Automation", "-d", "x", code=5).stderr)
    assert ("`skillbank skills copy 'Excel Automation' --as excel-automation`, then change it "
            "with `skillbank skills update excel-automation`") in refused
    assert "--as excel-automation" in flat(run(folder, "skills", "copy", "Excel Automation",
                                                code=2).stderr)
    copied = json.loads(run(folder, "--json", "skills", "copy", "Excel Automation", "--as",
                            "excel-automation").stdout)
    assert copied["name"] == "excel-automation"
    run(folder, "skills", "update", "excel-automation", "-d", "Automate Excel workbooks well.")

    hint = flat(run(folder, "skills", "update", "spreadsheets", "-d", "x", code=5).stderr)
    assert "`skillbank skills copy spreadsheets`" in hint
    result = json.loads(run(folder, "--json", "skills", "copy", "spreadsheets").stdout)
    assert any('dependencies: \'["openpyxl"]\'' in note for note in result["notes"]), result
    assert any("allowed-tools" in note for note in result["notes"])
    text = (root / "skills" / "spreadsheets" / "SKILL.md").read_text()
    assert "allowed-tools: Read Bash" in text and "version: '2'" in text
    run(folder, "skills", "update", "spreadsheets", "-d", "Work with spreadsheets, fixed.")
    shown = json.loads(run(folder, "--json", "skills", "show", "spreadsheets").stdout)
    assert shown["description"] == "Work with spreadsheets, fixed." and shown["writable"]


def test_in_process(cli_root, folder):
    check(cli_root, folder)


def test_through_a_client_of_the_owner(cli_root, folder):
    cli_root.mkdir(parents=True, exist_ok=True)
    with owner_process(cli_root, (folder,)):
        check(cli_root, folder)


def test_empty_values_booleans_and_long_fields_are_copied_the_spec_way(cli_root, tmp_path):
    ro = tmp_path / "odd"
    (ro / "odd-one").mkdir(parents=True)
    (ro / "odd-one" / "SKILL.md").write_text(
        "---\nname: odd-one\ndescription: " + "d" * 1100 + "\nlicense:\ncompatibility: ''\n"
        "metadata:\n  internal: true\n  empty:\n---\n# Steps\n")
    result = json.loads(run(ro, "--json", "skills", "copy", "odd-one").stdout)
    text = (cli_root / "skills" / "odd-one" / "SKILL.md").read_text()
    assert "None" not in text and "internal: 'true'" in text and "license" not in text
    assert "d" * 1024 in text and "d" * 1025 not in text
    notes = " ".join(result["notes"])
    assert "license was empty" in notes and "description cut to 1024" in notes


def test_an_accented_name_is_suggested_without_its_accents():
    """`skills copy 'café'` suggested `--as caf`, and "Résumé Builder" `r-sum-builder`
    (hunt-author #6, session 24): Latin letters lose their accents first, as a person would
    type the name."""
    from skillbank.cli.skill_copy import suggested_name

    assert suggested_name("café") == "cafe"
    assert suggested_name("Résumé Builder") == "resume-builder"
    assert suggested_name("Größe Über") == "grosse-uber"
    assert suggested_name("Excel Automation") == "excel-automation"
    assert suggested_name("数据库") == "copied-skill"  # nothing a spec name can hold


def test_a_name_starting_with_a_hyphen_gets_a_command_the_cli_takes(cli_root, tmp_path):
    """Fails before: the advice was `skillbank skills copy -2chat-automation --as
    2chat-automation`, which the CLI refuses ("No such option: -2"), and it blamed the
    characters "(a-z, 0-9 and '-')" where the fault is the leading '-' (hunt-clicorpus #3,
    session 36)."""
    import re
    import shlex

    ro = tmp_path / "dash"
    (ro / "-2chat-automation").mkdir(parents=True)
    (ro / "-2chat-automation" / "SKILL.md").write_text(
        "---\nname: -2chat-automation\ndescription: Automate 2chat tasks.\n---\n# Steps\n")
    refused = flat(run(ro, "skills", "copy", "--", "-2chat-automation", code=2).stderr)
    assert "must not start or end with '-'" in refused and "a-z, 0-9" not in refused, refused
    [advice] = re.findall(r"`(skillbank skills copy [^`]*)`", refused)
    assert advice == "skillbank skills copy --as 2chat-automation -- -2chat-automation"
    hint = flat(run(ro, "skills", "update", "-d", "x", "--", "-2chat-automation", code=5).stderr)
    assert f"`{advice}`, then change it with `skillbank skills update 2chat-automation`" in hint
    run(ro, *shlex.split(advice)[1:])  # the command given is one the CLI takes
    assert (cli_root / "skills" / "2chat-automation" / "SKILL.md").is_file()
