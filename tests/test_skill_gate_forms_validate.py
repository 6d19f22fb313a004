"""The tool-gate forms docs/api.md documents validate as warnings, not spec errors (hunt s20).

docs/api.md's tool-gate table documents `compatibility: {tools: [...]}` and `allowed-tools` as
a YAML list, and the gate honours both, but `skills validate` reported each as an error (exit
2) and sync listed the skill as breaking the spec: an author following the API doc got a failing
CI step. Now each is a warning naming the gate and the portable form; other non-string values
stay errors.
"""

from __future__ import annotations

import json

from typer.testing import CliRunner

from skillbank.cli import app
from skillbank.memories.skills.skill_file import SkillDocument, validate_skill


def _codes(frontmatter: dict) -> dict[str, str]:
    doc = SkillDocument({"name": "x", "description": "Do x.", **frontmatter}, "body\n")
    return {f.code: f.severity for f in validate_skill(doc, folder_name="x")}


def test_the_gate_forms_are_warnings_naming_the_gate():
    compat = _codes({"compatibility": {"tools": ["Bash", "WebFetch"]}})
    assert compat == {"compatibility-type": "warning"}
    listed = _codes({"allowed-tools": ["Bash(python:*)", "Read"]})
    assert listed == {"allowed-tools-type": "warning"}
    doc = SkillDocument({"name": "x", "description": "d", "allowed-tools": ["Read"]}, "b\n")
    message = validate_skill(doc, folder_name="x")[0].message
    assert "tool gate" in message and "requires: {tools: [...]}" in message


def test_forms_the_gate_does_not_read_stay_errors():
    assert _codes({"compatibility": {"os": "linux"}}) == {"compatibility-type": "error"}
    assert _codes({"compatibility": 3}) == {"compatibility-type": "error"}
    assert _codes({"allowed-tools": [1, 2]}) == {"allowed-tools-type": "error"}
    assert _codes({"allowed-tools": {"Bash": True}}) == {"allowed-tools-type": "error"}
    assert _codes({"compatibility": "Requires git", "allowed-tools": "Read Write"}) == {}


def test_skills_validate_passes_the_documented_forms(cli_root, tmp_path):
    folder = tmp_path / "s"
    (folder / "cve-triage").mkdir(parents=True)
    (folder / "cve-triage" / "SKILL.md").write_text(
        "---\nname: cve-triage\ndescription: Triage a CVE.\ncompatibility:\n"
        "  tools: [Bash, WebFetch]\n---\nbody\n")
    (folder / "pdf-fill").mkdir()
    (folder / "pdf-fill" / "SKILL.md").write_text(
        "---\nname: pdf-fill\ndescription: Fill PDF forms.\nallowed-tools:\n"
        "  - Bash(python:*)\n  - Read\n---\nbody\n")
    result = CliRunner().invoke(app, ["--json", "skills", "validate", str(folder)])
    assert result.exit_code == 0, (result.stdout, result.stderr)
    assert "tool gate" in result.stdout
