"""A SKILL.md left mid-merge by git (hunt-git #2 and #6, session 23).

#2: git's conflict markers in a SKILL.md body passed `skillbank skills validate` (exit 0) and
both sides of the conflict were served to agents as the skill's instructions; in the
frontmatter the only message was a raw YAML error. Now such a file does not parse: validate
names "unresolved merge conflict (line N)" (exit 2, in --json too), and the library treats it as
a half-written file: the bank's own skill is served as its last good version, any other is
refused with a message that names the conflict. A line of `=======` alone (a markdown heading's
underline) and markers inside a fenced code block (a skill teaching conflicts) are not one.

#6: the person who must resolve a team or third-party skill's conflict met `skills show NAME`
exit 2 and a browser 400, both saying "try again in a moment". Now a person's read
(`include_held=True`: the CLI, the browser) shows the file as it is with the problem named.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from typer.testing import CliRunner

from conftest import write_skill
from owner_client import bank_for
from skillbank.errors import InvalidInputError
from test_skill_trust import vendor_bank

NAME = "recipe-scaler"
GOOD_STEP = "1. Multiply every quantity.\n"
CONFLICT = ("<<<<<<< HEAD\n1. Multiply every quantity.\n=======\n1. Divide every quantity.\n"
            ">>>>>>> feature\n")

# A conflict whose sides open fences of their own: found whatever the fences.
FENCED_SIDES = ("---\nname: fenced-sides\ndescription: Run the report script.\n---\n# Steps\n\n"
                "<<<<<<< HEAD\n```bash\n=======\n```sh\n>>>>>>> feature\n./report\n```\n")
# In the frontmatter: named as a conflict, not as the YAML error it causes.
IN_FRONTMATTER = ("---\nname: in-frontmatter\n<<<<<<< HEAD\ndescription: Main decks.\n=======\n"
                  "description: Side decks.\n>>>>>>> side\n---\n# Steps\n")
# Legitimate content: a setext heading, the markers taught inside ``` and ~~~ fences, half a
# pattern, a longer run of '<' (an rST underline).
TEACHES = ("---\nname: resolve-conflicts\ndescription: Resolve git merge conflicts.\n---\n"
           "Conflicts\n=======\n\nA conflict looks like this:\n\n```text\n<<<<<<< HEAD\nours\n"
           "=======\ntheirs\n>>>>>>> feature\n```\n\n~~~~\n<<<<<<< HEAD\n=======\n>>>>>>> x\n~~~~\n"
           "\n<<<<<<< is how it starts; then\n=======\n\n<<<<<<<<<<\n=======\n>>>>>>>>>>\n")


def test_validate_names_the_conflict_and_nothing_a_skill_teaches(cli_root, tmp_path):
    from skillbank.cli import app

    folder = tmp_path / "skills"
    body = write_skill(folder, "release-notes", "Write release notes.", "# Steps\n\n" + CONFLICT)
    for name, text in (("fenced-sides", FENCED_SIDES), ("in-frontmatter", IN_FRONTMATTER),
                       ("resolve-conflicts", TEACHES)):
        (folder / name).mkdir()
        (folder / name / "SKILL.md").write_text(text)
    runner = CliRunner()
    checked = runner.invoke(app, ["--json", "skills", "validate", str(folder)])
    assert checked.exit_code == 2, (checked.stdout, checked.stderr)
    files = {Path(e["path"]).parent.name: e for e in json.loads(checked.stdout)["files"]}
    assert files["resolve-conflicts"]["valid"], files["resolve-conflicts"]
    lines = {"release-notes": 7, "fenced-sides": 7, "in-frontmatter": 3}
    for name, line in lines.items():
        assert not files[name]["valid"]
        errors = [f for f in files[name]["findings"] if f["severity"] == "error"]
        assert [f["code"] for f in errors] == ["merge-conflict"], errors
        assert f"unresolved merge conflict (line {line})" in errors[0]["message"]
    plain = runner.invoke(app, ["skills", "validate", str(body)])
    assert plain.exit_code == 2 and "unresolved merge conflict (line 7)" in plain.stdout


def _skill_md(root: Path) -> Path:
    return root / "skills" / NAME / "SKILL.md"


@pytest.mark.parametrize("remote", [False, True], ids=["in-process", "client-of-owner"])
def test_the_banks_own_skill_mid_merge_serves_its_last_good_version(tmp_path, remote):
    with bank_for(tmp_path, remote) as bank:
        bank.skills.save(NAME, "Scale a cooking recipe to a different number of servings.",
                         "# Steps\n" + GOOD_STEP)
        good = _skill_md(bank.root).read_text()
        conflicted = good.replace(GOOD_STEP, CONFLICT)
        _skill_md(bank.root).write_text(conflicted)
        report = bank.skills.sync()
        codes = {f.code for f in report.findings if f.path == str(_skill_md(bank.root))}
        assert {"merge-conflict", "kept-last-good"} <= codes, report.findings
        served = bank.skills.load(NAME)  # an agent's read: never both sides
        assert "<<<<<<<" not in served.body and "Divide" not in served.body
        assert "Multiply every quantity" in served.body
        assert any("unresolved merge conflict" in n for n in served.notes), served.notes
        assert bank.skills.read_resource(NAME, "SKILL.md") == good
        person = bank.skills.load(NAME, include_held=True)  # the file as it is, the problem named
        assert person.body == conflicted and person.frontmatter == {}
        assert person.description.startswith("Scale a cooking recipe")
        note = " ".join(person.notes)
        line = conflicted.split("\n").index("<<<<<<< HEAD") + 1
        assert f"unresolved merge conflict (line {line})" in note, person.notes
        assert "agents are served its last good version" in note and "try again" not in note
        with pytest.raises(InvalidInputError, match="unresolved merge conflict"):
            bank.skills.save("half-merged", "Half merged.", "# Steps\n" + CONFLICT)
        assert not (bank.root / "skills" / "half-merged").exists()  # nothing written


@pytest.mark.parametrize("remote", [False, True], ids=["in-process", "client-of-owner"])
def test_a_vendor_skill_mid_merge_is_refused_to_agents_and_shown_to_a_person(tmp_path, remote):
    vendor = tmp_path / "vendor"
    skill_md = write_skill(vendor, "csv-report", "Summarise a CSV file into a short report.",
                           "# Steps\n" + GOOD_STEP)
    conflicted = skill_md.read_text().replace(GOOD_STEP, CONFLICT)
    with vendor_bank(tmp_path / "root", vendor, remote) as bank:
        assert "Multiply" in bank.skills.load("csv-report").body
        skill_md.write_text(conflicted)
        bank.skills.sync()
        assert "csv-report" in bank.skills.names()  # still routed, as a half-saved one
        with pytest.raises(InvalidInputError, match="unresolved merge conflict") as refused:
            bank.skills.load("csv-report")
        assert "try again" not in str(refused.value)  # it will not fix itself
        person = bank.skills.load("csv-report", include_held=True)
        assert person.body == conflicted
        note = " ".join(person.notes)
        assert "unresolved merge conflict (line 6)" in note and "agents are refused it" in note
        assert "try again" not in note
        with pytest.raises(InvalidInputError, match="cannot be taken over"):  # author unknown
            bank.skills.save("csv-report", "Summarise a CSV.", "# Steps\nMine.\n")


@pytest.mark.parametrize("remote", [False, True], ids=["in-process", "client-of-owner"])
def test_the_browser_shows_a_conflicted_vendor_skill_as_it_is(tmp_path, remote):
    from starlette.testclient import TestClient

    from skillbank.ui import Guard, create_app

    vendor = tmp_path / "vendor"
    skill_md = write_skill(vendor, "csv-report", "Summarise a CSV file into a short report.",
                           "# Steps\n" + GOOD_STEP)
    description = "description: Summarise a CSV file into a short report.\n"
    in_frontmatter = f"<<<<<<< HEAD\n{description}=======\ndescription: Totals.\n>>>>>>> side\n"
    with vendor_bank(tmp_path / "root", vendor, remote) as bank:  # indexed while it parses
        skill_md.write_text(skill_md.read_text().replace(description, in_frontmatter))
        bank.skills.sync()
        browser = TestClient(create_app(bank, Guard()), base_url="http://127.0.0.1:8765")
        page = browser.get("/skills/csv-report")  # the repro's case: the YAML breaks too
        assert page.status_code == 200, page.text[:2000]
        assert "<pre class=\"block\">---\nname: csv-report" in page.text  # verbatim
        assert "&lt;&lt;&lt;&lt;&lt;&lt;&lt; HEAD\ndescription: Summarise" in page.text
        assert "unresolved merge conflict (line 3)" in page.text
        assert "try again" not in page.text


def test_the_cli_shows_a_conflicted_vendor_skill_as_it_is(cli_root, tmp_path, monkeypatch):
    from skillbank.cli import app

    vendor = tmp_path / "vendor"
    skill_md = write_skill(vendor, "csv-report", "Summarise a CSV file into a short report.",
                           "# Steps\n" + GOOD_STEP)
    monkeypatch.setenv("SKILLBANK_SKILL_ROOTS", str(vendor))
    runner = CliRunner()
    first = runner.invoke(app, ["skills", "show", "csv-report"])  # indexed while it parses
    assert first.exit_code == 0, (first.stdout, first.stderr)
    conflicted = skill_md.read_text().replace(GOOD_STEP, CONFLICT)
    skill_md.write_text(conflicted)
    shown = runner.invoke(app, ["skills", "show", "csv-report"])
    assert shown.exit_code == 0, (shown.stdout, shown.stderr)
    assert "unresolved merge conflict (line 6)" in shown.stdout
    assert CONFLICT in shown.stdout and "try again" not in shown.stdout + shown.stderr
    as_json = runner.invoke(app, ["--json", "skills", "show", "csv-report"])
    assert as_json.exit_code == 0 and json.loads(as_json.stdout)["body"] == conflicted


async def test_an_mcp_client_never_reads_both_sides(tmp_path):
    from mcp import Client

    from skillbank.mcp_server import build_server

    with bank_for(tmp_path, False) as bank:
        bank.skills.save(NAME, "Scale a cooking recipe to a different number of servings.",
                         "# Steps\n" + GOOD_STEP)
        good = _skill_md(bank.root).read_text()
        _skill_md(bank.root).write_text(good.replace(GOOD_STEP, CONFLICT))
        bank.skills.sync()
        async with Client(build_server(bank, trusted=True), mode="legacy") as client:
            read = await client.read_resource(f"skill://{NAME}/SKILL.md")
            assert read.contents[0].text == good
            loaded = await client.call_tool("load_skill", {"name": NAME})
            text = json.dumps(loaded.structured_content or {}) + str(loaded.content)
            assert "Multiply every quantity" in text and "Divide" not in text
            assert "unresolved merge conflict" in text
