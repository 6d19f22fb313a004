"""An `allowed-tools` entry with an unclosed parenthesis declares nothing, with a warning
(hunt-disclose #4, session 25).

`Bash(git:*` was read as a tool named "bash(git:*" that no agent has: the skill was hidden from
every agent, and `skills validate` said nothing. The docs promise a malformed declaration is a
warning and never hides a skill. Real bank (Chroma), in process and as a client of an owner
process; the real CLI.
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

TASK = "clean up stale git branches"


def _skills(tmp_path):
    folder = tmp_path / "skills"
    write_skill(folder, "git-cleanup", "Clean up stale git branches. Use when asked to prune old "
                "branches.", extra="allowed-tools: Bash(git:*\n")
    return folder


@pytest.mark.parametrize("remote", [False, True], ids=["in-process", "client-of-owner"])
def test_an_unclosed_entry_hides_the_skill_from_no_agent(tmp_path, remote):
    """Fails before: an agent with Bash, Read and Write got nothing, and missing_tools said it
    lacked "bash(git:*"."""
    with bank_for(tmp_path, remote, skill_roots=(_skills(tmp_path),)) as bank:
        for tools in (["Bash", "Read", "Write"], ["Read"]):
            hits = bank.skills.search(TASK, available_tools=tools)
            assert [h.name for h in hits] == ["git-cleanup"] and hits.missing_tools == {}


def test_the_entry_declares_nothing_and_says_why():
    need = declared({"allowed-tools": "Bash(git:* Read"})
    assert not need and "unclosed parenthesis" in need.warnings[0]
    listed = declared({"allowed-tools": ["Bash(git:*", "Read"]})
    assert listed.approved == {"read"} and len(listed.warnings) == 1  # the good entry counts
    assert not declared({"allowed-tools": "Bash(git:*) Read"}).warnings


def test_skills_validate_warns_of_it(tmp_path, cli_root):
    """Fails before: `skills validate` reported 0 warnings."""
    doc = SkillDocument({"name": "x", "description": "d", "allowed-tools": "Bash(git:*"}, "b\n")
    findings = validate_skill(doc, folder_name="x")
    assert [(f.severity, f.code) for f in findings] == [("warning", "tool-gate-unread")]
    assert "Bash(git:*" in findings[0].message and "tool gate" in findings[0].message
    result = CliRunner().invoke(app, ["--json", "skills", "validate",
                                      str(_skills(tmp_path) / "git-cleanup")])
    assert result.exit_code == 0, (result.stdout, result.stderr)
    assert "tool-gate-unread" in json.dumps(json.loads(result.stdout))


def test_a_quoted_parenthesis_in_a_pattern_is_not_unclosed():
    """Review F6, session 25: counting parentheses called `Bash(echo ")")` unclosed, so the
    skill declared nothing. Quotes inside a pattern are skipped; a lone apostrophe is text."""
    need = declared({"allowed-tools": 'Bash(echo ")") Read'})
    assert need.tools == {"bash"} and need.approved == {"bash", "read"} and not need.warnings
    assert declared({"allowed-tools": "Bash(don't:*)"}).tools == {"bash"}
    assert declared({"allowed-tools": "Bash(don't:*) Read(it's)"}).tools == {"bash", "read"}
    assert declared({"allowed-tools": "Bash (git:*)"}).tools == {"bash"}
    assert declared({"allowed-tools": "Bash(a (b) c), Read"}).approved == {"bash", "read"}
    assert "unclosed" in declared({"allowed-tools": "Read) Write"}).warnings[0]


@pytest.mark.parametrize("remote", [False, True], ids=["in-process", "client-of-owner"])
def test_a_quoted_parenthesis_still_gates_the_skill(tmp_path, remote):
    """Fails before: the skill declared nothing and an agent without a shell was served it."""
    folder = tmp_path / "skills"
    write_skill(folder, "echo-paren", "Print a closing parenthesis with echo. Use when asked to "
                "echo a parenthesis.", extra="allowed-tools: 'Bash(echo \")\")'\n")
    with bank_for(tmp_path, remote, skill_roots=(folder,)) as bank:
        task = "echo a closing parenthesis"
        assert [h.name for h in bank.skills.search(task, available_tools=["Bash"])] == \
            ["echo-paren"]
        hits = bank.skills.search(task, available_tools=["Read"])
        assert list(hits) == [] and hits.missing_tools == {"echo-paren": ["bash"]}
