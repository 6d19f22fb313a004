"""Third-party skill names and descriptions never drive the reviewer's terminal (hunt-routing
#12, session 28): `skills search`, `eval` and `list` printed a name's ESC sequences raw (clear
the screen, set the title, overwrite the eval's "missed" lines). Human output shows them as
escapes; `--json` keeps the exact text."""

from __future__ import annotations

import json

import pytest

from conftest import write_skill
from test_cli import Run

NAME = "knit\x1b]0;PWNED\x07\x1b[2J\x9b2J[bold red]X[/]"
DESCRIPTION = "Knit a wool sweater \x1b[31mRED\x1b[0m, rib the cuffs and bind off."
DRIVES_THE_TERMINAL = ("\x1b", "\x07", "\x9b")


@pytest.fixture
def library(cli_root, tmp_path):
    folder = tmp_path / "third-party"
    (folder / "knit").mkdir(parents=True)
    (folder / "knit" / "SKILL.md").write_text(
        f"---\nname: {json.dumps(NAME)}\ndescription: {json.dumps(DESCRIPTION)}\n"
        "allowed-tools: Bash\n---\n# Steps\n\nCast on.\n")
    git = write_skill(folder, "git-pushing", "Stage, commit, and push git changes.")
    (git.parent / "evals").mkdir()
    (git.parent / "evals" / "trigger_evals.json").write_text(json.dumps(
        [{"query": "knit a wool sweater", "should_trigger": True}]))
    return folder


def clean(output: str) -> None:
    leaked = [c for c in DRIVES_THE_TERMINAL if c in output]
    assert not leaked, output
    assert "\\x1b]0;PWNED\\x07\\x1b[2J\\x9b2J" in output, output  # shown, not hidden


def test_human_output_escapes_what_drives_a_terminal(library):
    """Fails before: each command printed the raw sequences."""
    run = Run()
    base = ["--no-bundled", "--skills-dir", library]
    found = run(*base, "skills", "search", "knit a wool sweater")
    clean(found.stdout)
    assert "\\x1b[31mRED" in found.stdout
    evaluated = run(*base, "skills", "eval", "git-pushing")
    clean(evaluated.stdout)
    assert "missed 'knit a wool sweater' -> knit\\x1b" in evaluated.stdout
    clean(run(*base, "skills", "list").stdout)
    gated = run(*base, "skills", "search", "knit a wool sweater", "--tool", "Read")
    clean(gated.stderr)  # "left out NAME: it needs bash"
    assert "[bold red]X[/]" in gated.stderr  # the name's brackets printed, never read as markup


def test_json_keeps_the_exact_text(library):
    run = Run()
    base = ["--no-bundled", "--skills-dir", library]
    [hit] = [h for h in run.json(*base, "skills", "search", "knit a wool sweater")
             if h["name"] == NAME]
    assert hit["description"] == DESCRIPTION
    report = run.json(*base, "skills", "eval", "git-pushing")
    assert report["skills"][0]["results"][0]["routed_to"][0] == NAME
    assert NAME in [s["name"] for s in run.json(*base, "skills", "list")]


def test_printable_keeps_tabs_newlines_and_every_other_character():
    from skillbank.cli.common import printable

    assert printable("a\tb\nc — ünï 漢字 🙂") == "a\tb\nc — ünï 漢字 🙂"
    assert printable("\x00\r\x1b\x7f\x85\x9f") == "\\x00\\x0d\\x1b\\x7f\\x85\\x9f"


def test_a_rule_holding_markup_is_printed_as_written(cli_root):
    """`guidelines approve` printed the superseded rule as rich markup: a rule holding `[/]`
    failed the command (exit 1) after the approval was made (review of session 28)."""
    from skillbank import Skillbank
    from skillbank.embeddings import HashEmbedding

    rule = "Close every BBCode tag you open, like [b] ... [/b] and [/]."
    with Skillbank.open(cli_root, embedding_function=HashEmbedding()) as bank:
        old = bank.guidelines.add(rule, topic="forums").guideline_id
        new = bank.guidelines.add("Prefer Markdown over BBCode in forum posts.", topic="forums",
                                  trusted=False, replaces=old).guideline_id
    approved = Run()("guidelines", "approve", new)
    assert f"{old} superseded (no longer served): {rule}" in " ".join(approved.stdout.split())


def test_a_body_on_a_terminal_is_escaped_and_piped_exact(library, monkeypatch):
    """`skills show` (Output.plain) printed a third-party body raw on a terminal. Fails before
    on the terminal half; piped output (a file of the body) stays exact."""
    (library / "knit" / "SKILL.md").write_text(
        f"---\nname: knit\ndescription: {json.dumps(DESCRIPTION)}\n---\n"
        "# Steps\n\nCast on \x1b]0;PWNED\x07\x1b[2J and purl.\n")
    run = Run()
    base = ["--no-bundled", "--skills-dir", library]
    piped = run(*base, "skills", "show", "knit")
    assert "\x1b]0;PWNED" in piped.stdout  # as written when not a terminal (rich drops BEL)
    monkeypatch.setenv("FORCE_COLOR", "1")  # rich says "terminal"; the OS does not: as written
    assert "\x1b]0;PWNED" in run(*base, "skills", "show", "knit").stdout
    from skillbank.cli import common

    monkeypatch.setattr(common, "stdout_is_terminal", lambda: True)
    shown = run(*base, "skills", "show", "knit")
    assert "\x1b]0;PWNED" not in shown.stdout and "\x07" not in shown.stdout, shown.stdout
    assert "\\x1b]0;PWNED\\x07\\x1b[2J" in shown.stdout, shown.stdout
    (library / "knit" / "SKILL.md").write_bytes(  # a file saved with Windows line endings
        b"---\r\nname: knit\r\ndescription: Knit a sweater.\r\n---\r\n# Steps\r\n\r\nCast on.\r\n")
    assert "\\x0d" not in run(*base, "skills", "show", "knit").stdout
