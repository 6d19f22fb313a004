"""What a skill declares for the tool gate is read whole, or reported (hunt-routing #1, #6, #10,
session 28).

#1: `allowed-tools` / `requires` were cut after 64 names without a word: an agent holding the
100th pre-approved tool was gated out, and a skill whose 65th required tool the agent lacked was
served. Now every name counts, up to `MAX_NAMES`; past it the declaration is ignored and
`skills validate` / sync report it.
#6: `requires: [Bash, WebFetch]`, `requires: {tools: 42}`, `requires: {tools: {Bash: true}}` were
ignored by the gate and got only the "unknown key" warning a working `requires` gets. A list (or
string) of names is now read as the tools it lists; the unreadable shapes are `tool-gate-unread`.
#10: after an author loosened `allowed-tools`, the skill stayed gated until the re-check, while a
tightening applied at once: a gated skill is not a hit, so its edit went unseen.

Real parts: Chroma, the real CLI; in process and as a client of another process owning the root.
"""

from __future__ import annotations

import json

import pytest
from typer.testing import CliRunner

from conftest import write_skill
from owner_client import bank_for
from skillbank.cli import app
from skillbank.memories.skills.dependencies import MAX_NAMES, declared
from skillbank.memories.skills.skill_file import SkillDocument, validate_skill

REMOTE = pytest.mark.parametrize("remote", [False, True], ids=["in-process", "client-of-owner"])
TOOLS = [f"Tool{i}" for i in range(400)]


def _findings(frontmatter: dict) -> list[tuple[str, str]]:
    doc = SkillDocument({"name": "x", "description": "Do x.", **frontmatter}, "body\n")
    return [(f.code, f.message) for f in validate_skill(doc, folder_name="x")]


@REMOTE
def test_every_listed_tool_counts(tmp_path, remote):
    """#1. Fails before: Tool100 and Tool399 were past the cut, so their agents were gated out,
    and the agent lacking Tool64..Tool69 was served the pottery skill."""
    folder = tmp_path / "skills"
    write_skill(folder, "origami-fold", "Fold origami cranes from square paper.",
                extra="allowed-tools:\n" + "".join(f"  - {t}\n" for t in TOOLS))
    write_skill(folder, "beehive-inspect", "Inspect a honeybee hive for varroa mites.",
                extra=f"allowed-tools: {' '.join(TOOLS)}\n")
    write_skill(folder, "pottery-wheel", "Throw a pot on the pottery wheel and glaze it.",
                extra=f"requires:\n  tools: [{', '.join(TOOLS[:70])}]\n")
    with bank_for(tmp_path, remote, skill_roots=(folder,)) as bank:
        for name, task in (("origami-fold", "fold an origami crane from square paper"),
                           ("beehive-inspect", "inspect my honeybee hive for varroa mites")):
            for tool in ("Tool7", "Tool100", "Tool399"):
                hits = bank.skills.search(task, k=1, available_tools=[tool])
                assert [h.name for h in hits] == [name], (tool, hits.missing_tools)
        task = "throw a pot on the pottery wheel and glaze it"
        lacking = bank.skills.search(task, k=1, available_tools=TOOLS[:64])
        assert list(lacking) == []
        assert lacking.missing_tools == {"pottery-wheel": [f"tool{i}" for i in range(64, 70)]}
        assert [h.name for h in bank.skills.search(task, k=1, available_tools=TOOLS[:70])] == \
            ["pottery-wheel"]


def test_a_declaration_over_the_cap_is_ignored_and_reported(tmp_path, cli_root):
    """#1: past `MAX_NAMES` nothing is cut silently. Fails before: no warning, no finding."""
    names = " ".join(f"Tool{i}" for i in range(MAX_NAMES + 1))
    need = declared({"allowed-tools": names})
    assert not need and f"more than {MAX_NAMES:,} tool names" in need.warnings[0]
    assert declared({"allowed-tools": names.rsplit(" ", 1)[0]}).approved  # at the cap: read
    required = declared({"requires": {"tools": names.split()}})
    assert not required and "requires.tools" in required.warnings[0]
    assert [c for c, _ in _findings({"allowed-tools": names})] == ["tool-gate-unread"]
    write_skill(tmp_path / "s", "too-many", "Use too many tools.", extra=f"allowed-tools: {names}\n")
    result = CliRunner().invoke(app, ["--json", "skills", "validate", str(tmp_path / "s")])
    assert result.exit_code == 0, (result.stdout, result.stderr)
    assert "more than 1,000 tool names" in json.dumps(json.loads(result.stdout))


@REMOTE
def test_a_requires_list_is_read_as_its_tools(tmp_path, remote):
    """#6. Fails before: `requires: [Bash, WebFetch]` was ignored and the skill served to an agent
    with only Read. Shapes with no readable names still declare nothing (never hide a skill)."""
    folder = tmp_path / "skills"
    write_skill(folder, "kombucha-brew", "Brew kombucha tea and bottle the second ferment.",
                extra="requires: [Bash, WebFetch]\n")
    write_skill(folder, "sweater-knit", "Knit a wool sweater and rib the cuffs.",
                extra="requires:\n  tools:\n    Bash: true\n")
    with bank_for(tmp_path, remote, skill_roots=(folder,)) as bank:
        task = "brew kombucha tea and bottle the second ferment"
        gated = bank.skills.search(task, k=1, available_tools=["Read"])
        assert list(gated) == [] and gated.missing_tools == {"kombucha-brew": ["bash", "webfetch"]}
        served = bank.skills.search(task, k=1, available_tools=["Bash", "WebFetch"])
        assert [h.name for h in served] == ["kombucha-brew"]
        knit = bank.skills.search("knit a wool sweater", k=1, available_tools=["Read"])
        assert [h.name for h in knit] == ["sweater-knit"]


def test_malformed_requires_are_their_own_findings(tmp_path, cli_root):
    """#6. Fails before: each shape got only `unknown-key`, as a working `requires` does."""
    assert [c for c, _ in _findings({"requires": {"tools": ["Bash"]}})] == ["unknown-key"]
    listed = dict(_findings({"requires": ["Bash", "WebFetch"]}))
    assert "requires: {tools: [...]}" in listed["requires-type"]
    for shape, kind in (({"tools": 42}, "int"), ({"tools": {"Bash": True}}, "dict"),
                        ({"mcp": 7}, "int"), (42, "int")):
        found = dict(_findings({"requires": shape}))
        assert f"got {kind}" in found["tool-gate-unread"], shape
        assert "tool gate" in found["tool-gate-unread"]
    folder = tmp_path / "s"
    write_skill(folder, "req-num", "Fold paper.", extra="requires:\n  tools: 42\n")
    result = CliRunner().invoke(app, ["--json", "skills", "validate", str(folder)])
    assert result.exit_code == 0, (result.stdout, result.stderr)
    assert "tool-gate-unread" in result.stdout and "requires.tools" in result.stdout


@REMOTE
def test_a_loosened_declaration_applies_at_once(tmp_path, remote):
    """#10. The re-check is an hour away, so only the search itself can see the edit. Fails
    before: the search right after loosening still gated the skill on its old declaration."""
    folder = tmp_path / "root" / "skills"
    path = write_skill(folder, "sweater-knit", "Knit a wool sweater and rib the cuffs.",
                       extra="allowed-tools: Bash(git:*) Read\n")
    (tmp_path / "root" / "skillbank.toml").write_text("skills_recheck_seconds = 3600\n")
    with bank_for(tmp_path, remote) as bank:
        task = "knit a wool sweater"
        assert bank.skills.search(task, k=1, available_tools=["Read"]).missing_tools == \
            {"sweater-knit": ["bash"]}
        path.write_text(path.read_text().replace("Bash(git:*) Read", "Read"))
        hits = bank.skills.search(task, k=1, available_tools=["Read"])
        assert [h.name for h in hits] == ["sweater-knit"] and hits.missing_tools == {}
        path.write_text(path.read_text().replace("allowed-tools: Read", "allowed-tools: "
                                                 "WebFetch(domain:x.com) Read"))
        tightened = bank.skills.search(task, k=1, available_tools=["Read"])
        assert list(tightened) == [] and tightened.missing_tools == {"sweater-knit": ["webfetch"]}
