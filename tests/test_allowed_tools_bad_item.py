"""An `allowed-tools` YAML list with an item that is not a tool name: the finding names the
item, and `skills validate` and sync agree (hunt-badinput #6, session 26).

`skills validate` said "'allowed-tools' must be a space-separated string, got list" (an error,
exit 2) although a list is read, with a warning; the dict inside it was the problem, and sync
reported the same file as a warning. The gate logged "has a dict where a tool name belongs",
naming no item. Now: the list's documented warning plus `tool-gate-unread` naming the item, as
the gate ignores it and reads the rest. Real CLI; the sync of a real bank (Chroma), in process
and as a client of another process that owns the root.
"""

from __future__ import annotations

import json

import pytest
from typer.testing import CliRunner

from conftest import write_skill
from owner_client import bank_for
from skillbank.cli import app
from skillbank.memories.skills.dependencies import declared
from skillbank.memories.skills.skill_file import SkillDocument, validate_skill

EXTRA = "allowed-tools:\n  - {name: Bash, pattern: 'git:*'}\n  - Read\n"
ITEM = "allowed-tools item 1, {'name': 'Bash', 'pattern': 'git:*'} (a dict), is not a tool name"


def _skills(tmp_path):
    folder = tmp_path / "skills"
    write_skill(folder, "git-release", "Tag a git release and write the changelog from commits.",
                extra=EXTRA)
    return folder


def _findings(frontmatter):
    doc = SkillDocument({"name": "x", "description": "Do x.", **frontmatter}, "body\n")
    return [(f.severity, f.code, f.message) for f in validate_skill(doc, folder_name="x")]


def test_the_gate_names_the_item_and_reads_the_rest():
    need = declared({"allowed-tools": [{"name": "Bash"}, "Read", None]})
    assert need.approved == {"read"}
    assert [w.split(",")[0] for w in need.warnings] == ["allowed-tools item 1",
                                                        "allowed-tools item 3"]
    assert "None (a NoneType)" in need.warnings[1]


def test_validate_warns_of_the_list_and_names_the_item(tmp_path, cli_root):
    """Fails before: one error, "must be a space-separated string, got list"; exit 2."""
    found = _findings({"allowed-tools": [{"name": "Bash", "pattern": "git:*"}, "Read"]})
    assert [(s, c) for s, c, _ in found] == [("warning", "allowed-tools-type"),
                                            ("warning", "tool-gate-unread")]
    assert found[1][2].startswith(ITEM)
    result = CliRunner().invoke(app, ["--json", "skills", "validate",
                                      str(_skills(tmp_path) / "git-release")])
    assert result.exit_code == 0, (result.stdout, result.stderr)
    assert ITEM in json.dumps(json.loads(result.stdout))


def test_a_list_with_no_tool_name_stays_an_error_naming_its_items():
    (finding,) = _findings({"allowed-tools": [{"name": "Bash"}, 2]})
    assert finding[:2] == ("error", "allowed-tools-type")
    assert "got list with no tool name in it: {'name': 'Bash'} (a dict), 2 (an int)" in finding[2]


@pytest.mark.parametrize("remote", [False, True], ids=["in-process", "client-of-owner"])
def test_sync_says_what_validate_says(tmp_path, remote):
    """Fails before: sync's finding was a warning "got list", naming no item."""
    folder = _skills(tmp_path)
    with bank_for(tmp_path, remote, skill_roots=(folder,)) as bank:
        findings = [f for f in bank.skills.sync().findings if "git-release" in str(f.path)]
        assert [h.name for h in bank.skills.search("tag a git release",
                                                   available_tools=["Read"])] == ["git-release"]
    assert {(f.severity, f.code) for f in findings} == {("warning", "allowed-tools-type"),
                                                       ("warning", "tool-gate-unread")}
    assert any(f.message.startswith(ITEM) for f in findings)
