"""The CLI as a newcomer meets it (issue #16): options where people type them, clean help,
completion, messages in CLI terms, exit codes that tell the truth, and a reindex that switches
embeddings. Banks use the hash embedding except where the switch to the real model is the point.
"""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

from conftest import write_skill
from test_cli import BUNDLED, Run, error_line

REPO = Path(__file__).resolve().parents[1]


@pytest.fixture
def run(cli_root) -> Run:
    return Run()


def script() -> list[str]:
    found = Path(sys.executable).parent / "skillbank"
    return [str(found)] if found.exists() else [sys.executable, "-m", "skillbank.cli"]


# ------------------------------------------------------------------- global options, anywhere


def test_global_options_are_accepted_after_the_subcommand(run, tmp_path):
    other = tmp_path / "other-root"
    stats = json.loads(run("stats", "--json", "--root", other, "--no-bundled").stdout)
    assert stats["root"] == str(other) and stats["skills"] == 0
    assert json.loads(run("stats", f"--root={other}", "--json").stdout)["root"] == str(other)
    listed = json.loads(run("skills", "list", "--json").stdout)
    assert sorted(s["name"] for s in listed) == BUNDLED
    assert json.loads(run("skills", "list", "--no-bundled", "--json").stdout) == []
    # Same meaning before and after: the namespace lands on the record either way.
    eid = json.loads(run("experiences", "record", "--task", "Ship it", "--outcome", "success",
                         "--namespace", "team-a", "--json").stdout)["id"]
    assert json.loads(run("--json", "experiences", "show", eid).stdout)["namespace"] == "team-a"
    # A subcommand's own value is never taken for a global option.
    odd = json.loads(run("experiences", "record", "--task", "--json", "--outcome", "success",
                         "--json").stdout)["id"]
    assert json.loads(run("experiences", "show", odd, "--json").stdout)["task"] == "--json"
    # Errors after the subcommand are reported the --json way too.
    err = error_line(run("skills", "show", "nope", "--no-bundled", "--json", code=3))
    assert err["exit_code"] == 3 and err["type"] == "NotFoundError"


def test_options_a_subcommand_defines_itself_stay_its_own(run, tmp_path, monkeypatch):
    import skillbank.mcp_server as mcp_server

    seen = {}
    monkeypatch.setattr(mcp_server, "main", lambda argv: seen.setdefault("argv", argv) and 0,
                        raising=False)
    run("serve", "--root", tmp_path / "served")
    assert seen["argv"][seen["argv"].index("--root") + 1] == str(tmp_path / "served")
    kept = tmp_path / "kept"
    summary = json.loads(run("demo", "--root", kept, "--json").stdout)
    assert summary["temporary"] is False and summary["root"] == str(kept)


# ----------------------------------------------------------------------------- help, completion

PLACEHOLDER = re.compile(r"<(bool|str|int|float|path|list\[[^\]]*\]|[a-z]+(\|[a-z]+)+)>")


def all_commands(group, path=()):
    yield path
    for name, sub in getattr(group, "commands", {}).items():
        yield from all_commands(sub, path + (name,))


def test_help_has_no_type_placeholders_anywhere(run):
    import typer.main

    from skillbank.cli import app

    paths = list(all_commands(typer.main.get_command(app)))
    assert ("skills", "update") in paths and len(paths) > 30
    for path in paths:
        out = run(*path, "--help").stdout
        assert not PLACEHOLDER.search(out), (path, PLACEHOLDER.search(out).group(0), out)
    record = run("experiences", "record", "--help").stdout
    assert "TASK" in record and "success|failure|partial|unknown" in record


def test_shell_completion_completes_commands_and_prints_a_script(cli_root):
    env = {**os.environ, "_SKILLBANK_COMPLETE": "complete_bash", "COMP_WORDS": "skillbank sk",
           "COMP_CWORD": "1"}
    done = subprocess.run(script(), env=env, capture_output=True, text=True, timeout=120)
    assert done.returncode == 0 and done.stdout.split() == ["skills"], done.stderr
    env.update(COMP_WORDS="skillbank skills up", COMP_CWORD="2")
    done = subprocess.run(script(), env=env, capture_output=True, text=True, timeout=120)
    assert done.stdout.split() == ["update"], done.stderr
    shown = subprocess.run([*script(), "--show-completion", "bash"], capture_output=True,
                           text=True, timeout=120, env={**os.environ})
    assert shown.returncode == 0 and "_SKILLBANK_COMPLETE" in shown.stdout


def test_serve_help_lists_every_option_docs_mcp_lists_and_the_server_parses(run, monkeypatch,
                                                                             tmp_path):
    from skillbank.mcp_server.options import build_parser, parse_args

    documented = set(re.findall(r"`(--[a-z][a-z-]*)", (REPO / "docs" / "mcp.md").read_text()))
    parsed = {o for a in build_parser()._actions for o in a.option_strings if o.startswith("--")}
    wanted = (parsed | {o for o in documented if o in parsed}) - {"--help"}
    assert {"--log-level", "--max-body-bytes", "--http-sse", "--no-watch"} <= wanted
    help_text = run("serve", "--help").stdout
    missing = sorted(o for o in wanted if o not in help_text)
    assert not missing, missing

    import skillbank.mcp_server as mcp_server

    seen = {}
    monkeypatch.setattr(mcp_server, "main", lambda argv: seen.setdefault("argv", argv) and 0,
                        raising=False)
    run("serve", "--transport", "http", "--log-level", "DEBUG", "--max-body-bytes", "2048",
        "--http-sse", "--no-watch", "--no-bundled")
    options = parse_args(seen["argv"])
    assert options.log_level == "DEBUG" and options.max_body_bytes == 2048
    assert options.http_sse and not options.watch and not options.include_bundled
    run("serve", "--log-level", "LOUD", code=2)


# ------------------------------------------------------------------------------------- messages


def test_messages_name_cli_commands_not_python_calls(run):
    from skillbank.cli.hints import HINTS, PYTHON_CALL

    for _, replacement in HINTS:
        if callable(replacement):  # a function of the match: what it writes for one
            match = re.match(r"(skill '(Excel Automation)') lives", "skill 'Excel Automation' lives")
            replacement = replacement(match)
        assert not PYTHON_CALL.search(replacement), replacement

    def no_python(text: str) -> None:
        assert not PYTHON_CALL.search(text), text

    missing = run("guidelines", "show", "gl-000000000000", code=3).stderr
    no_python(missing)
    assert "`skillbank guidelines list`" in missing
    no_python(run("guidelines", "vote", "gl-000000000000", "--helpful", code=3).stderr)

    gid = json.loads(run("--json", "guidelines", "learn",
                         "Always add a regression test when you fix a bug.").stdout)
    gid = next(e["guideline_id"] for e in gid["entries"] if e["action"] == "added")
    reject = run("guidelines", "reject", gid, code=2).stderr
    no_python(reject)
    assert "skillbank guidelines retire" in reject

    pending = run("guidelines", "learn", "Never push directly to the main branch.",
                  "--untrusted").stdout
    no_python(pending)

    run("skills", "new", "hello-world", "-d", "Say hello.")
    exists = run("skills", "new", "hello-world", "-d", "Again.", code=4).stderr
    no_python(exists)
    assert "skillbank skills update hello-world" in exists

    no_draft = run("skills", "adopt", "no-such-draft", code=3).stderr
    no_python(no_draft)
    assert "`skillbank skills drafts`" in no_draft
    no_version = run("skills", "history", "hello-world", "--restore", "20260101T000000Z",
                     code=3).stderr
    no_python(no_version)
    assert "`skillbank skills history hello-world`" in no_version


def test_skills_update_changes_description_and_body(run, tmp_path):
    run("skills", "new", "release-notes", "-d", "Write release notes.", "-b", "Old body.")
    body = tmp_path / "body.md"
    body.write_text("# Steps\n\nGroup changes by kind.\n")
    updated = json.loads(run("--json", "skills", "update", "release-notes", "-d",
                             "Write release notes grouped by kind.", "-f", body).stdout)
    assert updated["description"] == "Write release notes grouped by kind."
    assert "Group changes by kind." in updated["body"]
    assert "updated release-notes" in run("skills", "update", "release-notes", "-b", "New.").stdout
    assert "New." in json.loads(run("--json", "skills", "show", "release-notes").stdout)["body"]
    assert "nothing to change" in run("skills", "update", "release-notes", code=2).stderr
    run("skills", "update", "no-such-skill", "-d", "x", code=3)
    run("skills", "update", BUNDLED[0], "-d", "x", code=5)


# ----------------------------------------------------------------------------------- exit codes


def test_importing_a_file_that_is_not_an_export_fails(run, tmp_path):
    garbage = tmp_path / "notes.txt"
    garbage.write_text("hello\nthis is not json {\n")
    result = run("experiences", "import", garbage, code=2)
    assert "imported 0 new" in result.stdout and "2 lines could not be read" in result.stdout
    assert "nothing was imported" in result.stderr and "skillbank experiences export" in \
        result.stderr
    err = error_line(run("--json", "experiences", "import", garbage, code=2))
    assert err["type"] == "InvalidInputError"

    run("experiences", "record", "--task", "Migrate the orders table", "--outcome", "failure")
    good = tmp_path / "export.jsonl"
    run("experiences", "export", good)
    mixed = tmp_path / "mixed.jsonl"
    mixed.write_text(good.read_text() + "{broken\n")
    other = tmp_path / "other-root"
    partly = run("--root", other, "experiences", "import", mixed, code=2)
    assert "imported 1 new" in partly.stdout and "nothing was imported" not in partly.stderr
    assert len(json.loads(run("--root", other, "--json", "experiences", "list").stdout)) == 1
    assert "imported 0 new" in run("--root", other, "experiences", "import", good).stdout


def test_a_skills_dir_that_does_not_exist_is_an_error(run, tmp_path):
    nowhere = tmp_path / "nowhere"
    for args in (["--skills-dir", nowhere, "skills", "list"],
                 ["skills", "list", "--skills-dir", nowhere],
                 ["demo", "--skills-dir", nowhere], ["serve", "--skills-dir", nowhere]):
        result = run(*args, code=2)
        assert "--skills-dir" in result.stderr and "does not exist" in result.stderr
    a_file = tmp_path / "file.md"
    a_file.write_text("x")
    run("--skills-dir", a_file, "skills", "list", code=2)
    assert not (tmp_path / "root").exists()  # refused before a bank was opened


def test_context_says_when_memory_exists_but_does_not_fit(run, tmp_path):
    run("guidelines", "learn", "Always add a regression test when you fix a bug.",
        "--task", "Fix the login bug")
    tight = run("context", "fix a bug in the login form", "--budget", "10")
    assert tight.stdout == "" and "Nothing fits in 10 tokens" in tight.stderr
    assert "raise --budget" in tight.stderr
    data = json.loads(run("--json", "context", "fix a bug in the login form", "--budget", "10")
                      .stdout)
    assert data["text"] == "" and data["omitted"] >= 1
    unrelated = run("--root", tmp_path / "empty", "--no-bundled", "context", "anything",
                    "--budget", "10").stderr
    assert "No memory is relevant" in unrelated


# ------------------------------------------------------------------------------ skills list


def test_skills_list_filter_limit_and_path(run, tmp_path):
    extra = tmp_path / "extra"
    for name, description in (("pdf-report", "Build PDF reports from data."),
                              ("pdf-merge", "Merge several PDF files into one."),
                              ("slides", "Turn notes into a slide deck.")):
        write_skill(extra, name, description)
    base = ["--no-bundled", "--skills-dir", extra]
    everything = json.loads(run(*base, "--json", "skills", "list").stdout)
    assert [s["name"] for s in everything] == ["pdf-merge", "pdf-report", "slides"]
    assert [s["name"] for s in json.loads(run(*base, "--json", "skills", "list", "PDF").stdout)] \
        == ["pdf-merge", "pdf-report"]
    assert [s["name"] for s in json.loads(run(*base, "--json", "skills", "list", "deck")
                                          .stdout)] == ["slides"]
    assert len(json.loads(run(*base, "--json", "skills", "list", "--limit", "1").stdout)) == 1
    table = run(*base, "skills", "list", "pdf", "-n", "1").stdout
    assert "1 of 3 skills (--limit 1; 2 match)" in table and "path" in table
    assert "SKILL.md" in run(*base, "skills", "list").stdout
    assert "No skill name or description contains 'zzz'" in \
        run(*base, "skills", "list", "zzz").stdout
    run(*base, "skills", "list", "--limit", "0", code=2)


# --------------------------------------------------------------------------- switching embeddings


def test_reindex_switches_the_embedding_of_a_root(cli_root, minilm, monkeypatch):
    """A root built with one embedding refuses another with a clear error (not Chroma's raw
    ValueError); `skillbank reindex` rebuilds it with the new one, keeping every record."""
    run = Run()
    eid = json.loads(run("--json", "experiences", "record", "--task", "Migrate orders",
                         "--outcome", "failure").stdout)["id"]
    run("guidelines", "learn", "Always back up the database before migrating.")
    monkeypatch.setenv("SKILLBANK_EMBEDDING", "minilm")
    refused = error_line(run("--json", "stats", code=1))
    assert refused["type"] == "EmbeddingMismatchError"
    assert "skillbank reindex" in refused["error"] and "ValueError" not in refused["error"]
    rebuilt = json.loads(run("reindex", "--json").stdout)
    assert rebuilt["experiences"]["added"] == [eid] or eid in rebuilt["experiences"]["added"]
    stats = json.loads(run("stats", "--json").stdout)
    assert stats["embedding"] == "skillbank-minilm-l6-v2" and stats["experiences"] == 1
    assert sum(stats["guidelines"].values()) == 1
    hits = json.loads(run("experiences", "search", "migrate the orders table", "--json").stdout)
    assert hits and hits[0]["id"] == eid
    monkeypatch.setenv("SKILLBANK_EMBEDDING", "hash")
    assert "reindex" in run("stats", code=1).stderr  # and back again is refused too


def test_python_reindex_switches_embeddings(tmp_path, minilm):
    from skillbank import Skillbank
    from skillbank.embeddings import HashEmbedding
    from skillbank.errors import EmbeddingMismatchError, SkillbankError

    root = tmp_path / "root"
    with Skillbank.open(root, embedding_function=HashEmbedding()) as bank:
        bank.skills.create("tool", "A tool for slow SQL queries.")
    with pytest.raises(EmbeddingMismatchError, match="skillbank reindex") as caught:
        Skillbank.open(root, embedding_function=minilm)
    assert isinstance(caught.value, SkillbankError)
    with Skillbank.open(root, embedding_function=minilm, sync=False) as bank:
        assert bank.reindex()["skills"].added == ["tool"]
        assert bank.skills.search("my SQL query is slow")[0].name == "tool"
    with Skillbank.open(root, embedding_function=minilm) as bank:  # opens cleanly from now on
        assert bank.stats()["embedding"] == "skillbank-minilm-l6-v2"
