"""The `skillbank` command line: every command's happy path and error path, tables and --json.

Banks open with the hash embedding (`SKILLBANK_EMBEDDING=hash`) so no model is loaded; one test
runs the real console script in a subprocess for `--help`, exit codes and the lazy imports.
"""

from __future__ import annotations

import io
import json
import os
import subprocess
import sys
import threading
import time
from pathlib import Path

import pytest
from typer.testing import CliRunner

from conftest import write_skill
from skillbank.cli import app, report_error

REPO = Path(__file__).resolve().parents[1]
BUNDLED = sorted(p.parent.name for p in (REPO / "skills").glob("*/SKILL.md"))


@pytest.fixture
def env(cli_root, tmp_path):
    """A clean environment (see conftest.cli_root); the test's temp folder."""
    return tmp_path


class Run:
    def __init__(self) -> None:
        self.runner = CliRunner()

    def __call__(self, *args: str, code: int = 0, input: str | None = None):
        result = self.runner.invoke(app, [str(a) for a in args], input=input)
        if result.exit_code != code:
            raise AssertionError(
                f"skillbank {' '.join(map(str, args))}: exit {result.exit_code}, wanted {code}\n"
                f"stdout: {result.stdout}\nstderr: {result.stderr}\nexception: {result.exception!r}")
        return result

    def json(self, *args: str, code: int = 0, input: str | None = None):
        result = self("--json", *args, code=code, input=input)
        return json.loads(result.stdout)


@pytest.fixture
def run(env) -> Run:
    return Run()


def error_line(result) -> dict:
    """The one JSON line --json writes to stderr on an error."""
    lines = [l for l in result.stderr.splitlines() if l.strip()]
    assert len(lines) == 1, result.stderr
    return json.loads(lines[0])


# ------------------------------------------------------------------------------------- basics


def test_help_lists_every_command_group(run):
    out = run("--help").stdout
    for name in ("skills", "guidelines", "experiences", "reindex", "stats", "context", "serve",
                 "demo"):
        assert name in out
    skills = run("skills", "--help").stdout
    for name in ("list", "show", "validate", "new", "search", "sync", "watch", "delete",
                 "rename"):
        assert name in skills
    assert run("--version").stdout.startswith("skillbank ")
    run("skills", "frobnicate", code=2)  # unknown command: a usage error


@pytest.mark.slow
def test_console_script_help_exit_codes_and_lazy_imports(env, tmp_path):
    """The installed `skillbank` script: fast help, clear errors, no Chroma for validate."""
    script = Path(sys.executable).parent / "skillbank"
    if not script.exists():
        pytest.skip("console script not installed")
    environ = {**os.environ}

    def call(*args: str) -> subprocess.CompletedProcess:
        return subprocess.run([str(script), *args], capture_output=True, text=True,
                              env=environ, timeout=120)

    help_run = call("--help")
    assert help_run.returncode == 0 and "experiences" in help_run.stdout

    bad = tmp_path / "bad" / "SKILL.md"
    bad.parent.mkdir()
    bad.write_text("---\nname: Not_Valid\ndescription: x\n---\nbody\n")
    invalid = call("skills", "validate", str(bad))
    assert invalid.returncode == 2 and "name-chars" in invalid.stdout
    assert not (tmp_path / "root").exists()  # validating opened no bank

    missing = call("--no-bundled", "skills", "show", "nope")
    assert missing.returncode == 3
    assert missing.stderr.strip().count("\n") == 0 and "Traceback" not in missing.stderr
    assert missing.stderr.startswith("Error: no skill named 'nope'")

    # `skills validate` and `--help` never import Chroma or open a bank.
    probe = ("import sys\nfrom skillbank.cli import main\n"
             "try:\n    main(['skills', 'validate', sys.argv[1]])\n"
             "except SystemExit as exc:\n    code = exc.code\n"
             "print('CHROMA' if 'chromadb' in sys.modules else 'LIGHT', code)\n")
    light = subprocess.run([sys.executable, "-c", probe, str(REPO / "skills")],
                           capture_output=True, text=True, env=environ, timeout=120)
    assert light.stdout.strip().splitlines()[-1] == "LIGHT 0", light.stderr


def test_error_codes_map_from_skillbank_errors():
    from pydantic import BaseModel, ValidationError

    from skillbank.errors import (AlreadyExistsError, BusyError, InvalidInputError,
                                  NotFoundError, ReadOnlyError, SkillbankError)

    class Model(BaseModel):
        n: int

    with pytest.raises(ValidationError) as caught:
        Model(n="x")
    cases = [(SkillbankError("x"), 1), (NotFoundError("x"), 3), (AlreadyExistsError("x"), 4),
             (ReadOnlyError("x"), 5), (InvalidInputError("x"), 2), (BusyError("x"), 6),
             (caught.value, 2), (RuntimeError("boom"), 1)]
    for exc, code in cases:
        assert report_error(exc, json_mode=False) == code, exc


def test_debug_shows_the_exception_instead_of_a_line(run):
    result = run.runner.invoke(app, ["--debug", "--no-bundled", "skills", "show", "nope"])
    from skillbank.errors import NotFoundError

    assert isinstance(result.exception, NotFoundError)


def test_unknown_embedding_env_is_invalid_input(run, monkeypatch):
    monkeypatch.setenv("SKILLBANK_EMBEDDING", "bogus")
    result = run("skills", "list", code=2)
    assert "SKILLBANK_EMBEDDING" in result.stderr


# ------------------------------------------------------------------------------------- skills


def test_skills_list_table_and_json(run):
    table = run("skills", "list").stdout
    for name in BUNDLED:
        assert name in table
    data = run.json("skills", "list")
    assert sorted(s["name"] for s in data) == BUNDLED
    assert all(s["writable"] is False and s["description"] for s in data)
    assert run.json("--no-bundled", "skills", "list") == []
    assert "No skills yet" in run("--no-bundled", "skills", "list").stdout


def test_skills_new_show_search_rename_delete(run, tmp_path):
    body = tmp_path / "body.md"
    body.write_text("# Steps\n\n1. Run `EXPLAIN ANALYZE` on the slow query.\n2. Add an index.\n")
    created = run.json("skills", "new", "sql-tuning", "--description",
                       "Tune slow SQL queries with indexes and EXPLAIN plans.",
                       "--body-file", body)
    assert created["name"] == "sql-tuning" and created["writable"] is True
    assert Path(created["path"]).is_file()

    shown = run("skills", "show", "sql-tuning").stdout
    assert "Tune slow SQL" in shown and "EXPLAIN ANALYZE" in shown
    data = run.json("skills", "show", "sql-tuning")
    assert "Add an index" in data["body"] and data["frontmatter"]["name"] == "sql-tuning"

    hits = run.json("skills", "search", "my SQL query is slow, tune it with an index", "-k", "3")
    assert hits[0]["name"] == "sql-tuning" and hits[0]["why"] in ("dense", "keyword", "both")
    assert "sql-tuning" in run("skills", "search", "tune a slow SQL query").stdout
    assert run.json("--no-bundled", "skills", "search", "zzzz qqqq xxxx") == []
    assert "No skill fits" in run("--no-bundled", "skills", "search", "zzzz qqqq xxxx").stdout

    renamed = run.json("skills", "rename", "sql-tuning", "query-tuning")
    assert renamed["name"] == "query-tuning"
    run("skills", "show", "sql-tuning", code=3)
    assert "renamed" in run("skills", "rename", "query-tuning", "sql-tuning").stdout

    deleted = run.json("skills", "delete", "sql-tuning")
    assert deleted["deleted"] == "sql-tuning" and ".trash" in deleted["trash"]
    run("skills", "show", "sql-tuning", code=3)


def test_skills_new_inline_body_and_its_errors(run):
    out = run("skills", "new", "hello-world", "-d", "Say hello to the world.", "-b", "Say hi.")
    assert "created hello-world" in out.stdout
    again = run("skills", "new", "hello-world", "-d", "Again.", code=4)
    assert "already exists" in again.stderr
    # A name that would leave the library is refused before anything is written.
    traversal = run("skills", "new", "../x", "-d", "escape", code=2)
    assert traversal.stderr.startswith("Error: invalid skill name '../x'")
    err = error_line(run("--json", "skills", "new", "../../etc", "-d", "escape", code=2))
    assert err["exit_code"] == 2 and err["type"] == "UnsafePathError"
    run("skills", "new", "Bad_Name", "-d", "x", code=2)
    empty = run("skills", "new", "no-description", "-d", "  ", code=2)
    assert empty.stderr.count("\n") == 1 and "description" in empty.stderr
    err = error_line(run("--json", "skills", "new", "no-description", "-d", "", code=2))
    assert any(f["code"] == "missing-description" for f in err["findings"])
    both = run("skills", "new", "two-bodies", "-d", "x", "-b", "a", "-f", "-", code=2)
    assert "not both" in both.stderr
    from_stdin = run.json("skills", "new", "from-stdin", "-d", "Body from stdin.", "-f", "-",
                          input="# Piped\n\nbody text\n")
    assert "body text" in from_stdin["body"]


def test_read_only_skills_cannot_be_changed(run):
    result = run("skills", "delete", BUNDLED[0], code=5)
    assert "read-only" in result.stderr
    run("skills", "rename", BUNDLED[0], "other-name", code=5)


def test_skills_show_resource(run, tmp_path):
    extra = tmp_path / "extra"
    folder = write_skill(extra, "pdf-report", "Build PDF reports.").parent
    (folder / "references").mkdir()
    (folder / "references" / "layout.md").write_text("# Layout\nUse A4 [bold]pages[/bold].\n")
    base = ["--no-bundled", "--skills-dir", extra]
    shown = run(*base, "skills", "show", "pdf-report").stdout
    assert "references/layout.md" in shown
    text = run(*base, "skills", "show", "pdf-report", "--resource", "references/layout.md").stdout
    assert "Use A4 [bold]pages[/bold]." in text  # printed verbatim, never as markup
    data = run.json(*base, "skills", "show", "pdf-report", "-r", "references/layout.md")
    assert data["text"].startswith("# Layout")
    run(*base, "skills", "show", "pdf-report", "-r", "references/none.md", code=3)
    escape = run(*base, "skills", "show", "pdf-report", "-r", "../../secret.txt", code=2)
    assert "Error:" in escape.stderr
    run(*base, "skills", "show", "nope", code=3)


def test_skills_validate_files_and_folders(run, tmp_path):
    ok = run("skills", "validate", REPO / "skills")
    assert f"{len(BUNDLED)} checked: {len(BUNDLED)} valid" in ok.stdout

    root = tmp_path / "lib"
    good = write_skill(root, "good-skill", "Does a good thing. Use when good things are needed.")
    bad = write_skill(root, "bad-skill", "A skill whose name does not match its folder.")
    bad.write_text(bad.read_text().replace("name: bad-skill", "name: other-name"))
    broken = root / "broken" / "SKILL.md"
    broken.parent.mkdir()
    broken.write_text("no frontmatter here\n")

    result = run("skills", "validate", root, code=2)
    assert "name-mismatch" in result.stdout and "no-frontmatter" in result.stdout
    assert "3 checked: 1 valid, 2 invalid" in result.stdout
    data = run.json("skills", "validate", root, code=2)
    by_path = {Path(f["path"]).parent.name: f for f in data["files"]}
    assert by_path["good-skill"]["valid"] and by_path["good-skill"]["findings"] == []
    assert not by_path["bad-skill"]["valid"]
    assert [f["code"] for f in by_path["broken"]["findings"]] == ["no-frontmatter"]
    assert data["valid"] is False and data["errors"] >= 2

    assert run.json("skills", "validate", good)["valid"] is True
    missing = run.json("skills", "validate", tmp_path / "nowhere", code=2)
    assert missing["files"][0]["findings"][0]["code"] == "missing"
    empty = tmp_path / "empty"
    empty.mkdir()
    assert run.json("skills", "validate", empty, code=2)["files"][0]["findings"][0]["code"] \
        == "no-skills"
    # Spec violations the lenient loader only warns about are errors here.
    loose = write_skill(root, "loose-skill", "Fine.", extra="license: 42\n")
    loose_data = run.json("skills", "validate", loose, code=2)
    codes = {(f["severity"], f["code"]) for f in loose_data["files"][0]["findings"]}
    assert ("error", "license-type") in codes and ("warning", "license-type") not in codes


def test_skills_sync_reports_changes(run, tmp_path):
    extra = tmp_path / "extra"
    write_skill(extra, "alpha-skill", "First skill.")
    write_skill(extra, "beta-skill", "Second skill.")
    bad = extra / "gamma" / "SKILL.md"
    bad.parent.mkdir()
    bad.write_text("---\nname: gamma\n---\nno description\n")
    base = ["--no-bundled", "--skills-dir", extra]
    first = run.json(*base, "skills", "sync")
    assert sorted(first["added"]) == ["alpha-skill", "beta-skill"]
    assert first["skipped"] and any(f["code"] == "missing-description" for f in first["findings"])
    again = run(*base, "skills", "sync").stdout
    assert "0 added" in again and "2 unchanged" in again and "skipped" in again
    write_skill(extra, "beta-skill", "Second skill, now changed.")
    (extra / "alpha-skill" / "SKILL.md").unlink()
    third = run.json(*base, "skills", "sync")
    assert third["changed"] == ["beta-skill"] and third["removed"] == ["alpha-skill"]


def test_sync_progress_bar_draws_on_a_terminal():
    from rich.console import Console

    from skillbank.cli.common import Output
    from skillbank.cli.skills import SyncProgress

    out = Output(json_mode=False)
    buffer = io.StringIO()
    out._err = Console(file=buffer, force_terminal=True, width=100)
    with SyncProgress(out) as progress:
        for done in (64, 128, 150):
            progress(done, 150)
        assert progress._progress is not None
    small = Output(json_mode=False)
    small._err = Console(file=io.StringIO(), force_terminal=True)
    with SyncProgress(small) as progress:
        progress(10, 10)  # one batch: no bar
        assert progress._progress is None


def test_sync_with_many_skills_passes_progress(run, tmp_path, monkeypatch):
    extra = tmp_path / "many"
    for i in range(70):
        write_skill(extra, f"skill-{i:03d}", f"Skill number {i} for task {i}.")
    calls = []
    from skillbank.cli.skills import SyncProgress

    original = SyncProgress.__call__
    monkeypatch.setattr(SyncProgress, "__call__",
                        lambda self, done, total: (calls.append((done, total)),
                                                   original(self, done, total)))
    data = run.json("--no-bundled", "--skills-dir", extra, "skills", "sync")
    assert len(data["added"]) == 70
    # Progress in batches up to the whole: totals fixed, counts rising, the last one complete.
    assert len(calls) >= 2 and {total for _, total in calls} == {70}
    assert [done for done, _ in calls] == sorted(done for done, _ in calls)
    assert calls[-1] == (70, 70)


@pytest.mark.slow
def test_skills_watch_reports_changes_until_interrupted(env, tmp_path):
    """`skills watch` in a real process: it reports a skill added while it watches, and Ctrl-C
    stops it cleanly. No sleeps: the test rewrites the new skill until the watcher reports it
    (the watcher may start after the first write), within a generous ceiling."""
    import queue
    import signal

    script = Path(sys.executable).parent / "skillbank"
    command = [str(script)] if script.exists() else [sys.executable, "-m", "skillbank.cli"]
    extra = tmp_path / "watched"
    write_skill(extra, "first-skill", "The first skill.")
    proc = subprocess.Popen([*command, "--json", "--no-bundled", "--skills-dir", str(extra),
                             "skills", "watch"], stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                            text=True, env={**os.environ, "PYTHONUNBUFFERED": "1"})
    events: queue.Queue = queue.Queue()
    threading.Thread(target=lambda: [events.put(json.loads(l)) for l in proc.stdout],
                     daemon=True).start()
    try:
        first = events.get(timeout=300)
        assert first["event"] == "start" and first["report"]["added"] == ["first-skill"]
        deadline = time.monotonic() + 300
        seen: list[dict] = []
        version = 0
        while not any("second-skill" in e["report"]["added"] + e["report"]["changed"]
                      for e in seen):
            assert time.monotonic() < deadline, f"no change reported: {seen}"
            version += 1
            write_skill(extra, "second-skill", f"A skill added while watching, version {version}.")
            try:
                seen.append(events.get(timeout=5))  # a bounded wait for the next event
            except queue.Empty:
                pass
        assert all(e["event"] == "sync" for e in seen)
        proc.send_signal(signal.SIGINT)
        assert proc.wait(timeout=120) == 0, proc.stderr.read()[-3000:]
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
        for stream in (proc.stdout, proc.stderr):
            stream.close()


def test_skills_watch_timeout_stops_it(run, tmp_path):
    extra = tmp_path / "watched"
    write_skill(extra, "first-skill", "The first skill.")
    result = run("--no-bundled", "--skills-dir", extra, "skills", "watch", "--timeout", "0.2")
    assert "watching 2 roots" in result.stdout and "1 added" in result.stdout


# --------------------------------------------------------------------------------- whole bank


def test_reindex_stats_and_context(run):
    rebuilt = run.json("reindex")
    assert set(rebuilt) == {"skills", "guidelines", "experiences"}
    assert sorted(rebuilt["skills"]["added"]) == BUNDLED
    assert "skills:" in run("reindex").stdout

    stats = run.json("stats")
    assert stats["skills"] == len(BUNDLED) and stats["embedding"] == "skillbank-hash"
    assert "guidelines" in stats and "experiences" in stats
    assert "skill roots" in run("stats").stdout

    run("guidelines", "learn", "Always add a regression test when you fix a bug.",
        "--task", "Fix the login bug")
    ctx = run.json("context", "fix a bug in the login form", "--budget", "400")
    assert ctx["tokens"] <= 400 and ctx["text"].startswith("<skillbank-memory>")
    assert any(i.startswith("gl-") for i in ctx["ids"])
    human = run("context", "fix a bug in the login form")
    assert "<skillbank-memory>" in human.stdout and "tokens" in human.stderr
    empty = run.json("context", "anything at all", "--budget", "0")
    assert empty["text"] == "" and empty["tokens"] == 0
    run("context", "x", "--budget", "-1", code=2)


# --------------------------------------------------------------------------------- guidelines


def test_guidelines_learn_list_show_search_vote(run):
    report = run.json("guidelines", "learn",
                      "Use British spelling in user-facing docs. Great job otherwise!",
                      "--task", "Write the README", "--score", "3")
    actions = [e["action"] for e in report["entries"]]
    assert "added" in actions and "ignored" in actions
    gid = next(e["guideline_id"] for e in report["entries"] if e["action"] == "added")
    human = run("guidelines", "learn", "-", input="Use British spelling in user-facing docs.\n")
    assert "merged" in human.stdout

    listed = run.json("guidelines", "list")
    assert any(g["id"] == gid for g in listed)
    assert gid in run("guidelines", "list", "--status", "active").stdout
    assert run.json("guidelines", "list", "--status", "retired") == []
    run("guidelines", "list", "--status", "bogus", code=2)

    shown = run.json("guidelines", "show", gid)
    assert shown["id"] == gid and shown["sources"][0]["critique"].startswith("Use British")
    assert "British" in run("guidelines", "show", gid).stdout
    playbook = run.json("guidelines", "show", "--topic", shown["topic"])
    assert gid in playbook["playbook"]
    assert gid in run("guidelines", "show", "--topic", shown["topic"]).stdout
    run("guidelines", "show", code=2)
    run("guidelines", "show", gid, "--topic", "x", code=2)
    run("guidelines", "show", "gl-000000000000", code=3)

    hits = run.json("guidelines", "search", "write the user docs with British spelling")
    assert hits and hits[0]["id"] == gid
    assert gid in run("guidelines", "search", "British spelling docs").stdout

    voted = run.json("guidelines", "vote", gid, "--harmful")
    assert voted["harmful"] == 1
    assert "helpful" in run("guidelines", "vote", gid, "--helpful").stdout
    run("guidelines", "vote", gid, code=2)  # must say which
    run("guidelines", "vote", "gl-000000000000", "--helpful", code=3)



def test_guidelines_list_is_an_inventory_of_every_namespace_unless_one_is_given(run):
    a = run.json("--namespace", "team-a", "guidelines", "learn", "Use British spelling in docs.")
    b = run.json("--namespace", "team-b", "guidelines", "learn", "Keep slides to five bullets.")
    ids = {e["guideline_id"] for r in (a, b) for e in r["entries"] if e["action"] == "added"}
    assert len(ids) == 2
    assert {g["id"] for g in run.json("guidelines", "list")} == ids
    only_a = run.json("--namespace", "team-a", "guidelines", "list")
    assert [g["namespace"] for g in only_a] == ["team-a"]

def test_guidelines_review_pending_approve_reject_retire(run):
    first = run.json("guidelines", "learn", "Never push directly to the main branch.",
                     "--untrusted")
    pending = [e for e in first["entries"] if e["action"] == "pending"]
    assert pending, first
    gid = pending[0]["guideline_id"]
    assert run.json("guidelines", "approve", gid)["status"] == "active"
    assert "retired" in run("guidelines", "retire", gid).stdout

    second = run.json("guidelines", "learn", "Always write commit messages in the imperative mood.",
                      "--untrusted")
    other = next(e["guideline_id"] for e in second["entries"] if e["action"] == "pending")
    assert run.json("guidelines", "reject", other)["status"] == "retired"
    run("guidelines", "approve", other, code=2)  # only pending guidelines can be approved
    run("guidelines", "approve", "gl-000000000000", code=3)
    run("guidelines", "retire", "not-an-id", code=2)


# -------------------------------------------------------------------------------- experiences


def test_experiences_record_list_show_search(run, tmp_path):
    steps = tmp_path / "steps.json"
    steps.write_text(json.dumps([
        {"action": "alembic upgrade head", "observation": "column already exists",
         "action_input": {"revision": "b7e1f2"}},
        "restore the database"]))
    recorded = run.json("experiences", "record", "--task", "Deploy billing with migrations",
                        "--outcome", "failure", "--feedback", "No backup before migrating.",
                        "--tag", "deploy", "--tag", "database",
                        "--lesson", "Back up the database before running migrations.",
                        "--when-to-use", "Before deploys that migrate a database",
                        "--steps-file", steps, "--score", "0.2")
    eid = recorded["id"]
    assert eid.startswith("exp-")
    assert "recorded exp-" in run("experiences", "record", "--task", "Write the weekly report",
                                  "--outcome", "success").stdout

    listed = run.json("experiences", "list")
    assert any(e["id"] == eid for e in listed)
    assert any(e["kind"] == "lesson" for e in listed)
    assert eid in run("experiences", "list").stdout
    assert all(e["kind"] == "lesson" for e in run.json("experiences", "list", "--kind", "lesson"))

    shown = run.json("experiences", "show", eid)
    assert shown["outcome"] == "failure" and shown["tags"] == ["deploy", "database"]
    assert shown["steps"][1]["action"] == "restore the database"
    human = run("experiences", "show", eid).stdout
    assert "Back up the database" in human and "alembic upgrade head" in human
    assert "b7e1f2" in human  # what the agent ran is shown, not only the step's name
    run("experiences", "show", "exp-000000000000", code=3)

    hits = run.json("experiences", "search", "deploy a service with database migrations")
    assert any(h["id"] == eid for h in hits)
    failures = run.json("experiences", "search", "deploy database migrations",
                        "--outcome", "failure", "--tag", "deploy")
    assert failures and all(h["record"]["outcome"] == "failure" for h in failures)
    assert all(h["record"]["outcome"] == "success" for h in run.json(
        "experiences", "search", "deploy database migrations", "--outcome", "success"))
    assert "Deploy billing" in run("experiences", "search", "deploy billing").stdout


def test_experiences_record_errors(run, tmp_path):
    run("experiences", "record", "--task", "x", "--outcome", "great", code=2)
    run("experiences", "record", "--outcome", "success", code=2)  # --task is required
    broken = tmp_path / "steps.json"
    broken.write_text("{not json")
    result = run("experiences", "record", "--task", "x", "--outcome", "success",
                 "--steps-file", broken, code=2)
    assert "--steps-file" in result.stderr
    broken.write_text('{"steps": 3}')
    run("experiences", "record", "--task", "x", "--outcome", "success", "--steps-file", broken,
        code=2)
    too_long = "x" * 30_000
    err = error_line(run("--json", "experiences", "record", "--task", too_long,
                         "--outcome", "success", code=2))
    assert err["exit_code"] == 2


def test_experiences_distill_prune_export_import(run, tmp_path):
    eid = run.json("experiences", "record", "--task", "Migrate the orders database",
                   "--outcome", "failure",
                   "--feedback", "The migration locked the table for ten minutes.")["id"]
    distilled = run.json("experiences", "distill", eid)
    assert distilled["source"] == eid
    assert all(i.startswith("lsn-") for i in distilled["lessons"])
    run("experiences", "distill", eid)
    run("experiences", "distill", "exp-000000000000", code=3)

    dry = run.json("experiences", "prune")
    assert dry["dry_run"] is True and dry["retired"] == []
    assert "Nothing to prune" in run("experiences", "prune", "--apply").stdout

    target = tmp_path / "backup" / "experiences.jsonl"
    exported = run.json("experiences", "export", target)
    lines = target.read_text().splitlines()
    assert exported["result"] == len(lines) >= 1
    assert "exported" in run("experiences", "export", target).stdout

    other_root = tmp_path / "other-root"
    imported = run.json("--root", other_root, "experiences", "import", target)
    assert imported["result"]["added"]
    again = run("--root", other_root, "experiences", "import", target).stdout
    assert "imported" in again
    assert any(e["id"] == eid for e in run.json("--root", other_root, "experiences", "list"))
    run("experiences", "import", tmp_path / "nope.jsonl", code=2)


# -------------------------------------------------------------------------------- serve, demo


def test_serve_passes_options_through(run, monkeypatch, tmp_path):
    import skillbank.mcp_server as mcp_server

    seen = {}

    def fake_main(argv):
        seen["argv"] = list(argv)
        return 0

    monkeypatch.setattr(mcp_server, "main", fake_main, raising=False)
    (tmp_path / "a").mkdir()
    run("--root", tmp_path / "r", "--skills-dir", tmp_path / "a", "--no-bundled", "serve",
        "--transport", "http", "--host", "127.0.0.1", "--port", "9001", "--token", "s3cret",
        "--trust", "--namespace", "team", "--model-dir", tmp_path / "m", "--no-watch")
    argv = seen["argv"]
    pairs = dict(zip(argv, argv[1:]))
    assert pairs["--transport"] == "http" and pairs["--port"] == "9001"
    assert pairs["--root"] == str(tmp_path / "r") and pairs["--skills-dir"] == str(tmp_path / "a")
    assert pairs["--namespace"] == "team" and pairs["--token"] == "s3cret"
    assert pairs["--model-dir"] == str(tmp_path / "m")
    assert "--trust" in argv and "--no-bundled" in argv and "--no-watch" in argv

    monkeypatch.setattr(mcp_server, "main", lambda argv: 2, raising=False)
    run("serve", code=2)
    run("serve", "--transport", "sse", code=2)


def test_serve_argv_parses_with_the_real_server_parser(run, tmp_path):
    from skillbank.cli import serve_argv
    from skillbank.cli.common import State
    from skillbank.mcp_server.options import parse_args

    for folder in ("a", "b"):  # the server refuses a --skills-dir that is not a folder
        (tmp_path / folder).mkdir()
    st = State(root=tmp_path, skills_dirs=[tmp_path / "a", tmp_path / "b"], namespace="ns",
               include_bundled=False)
    argv = serve_argv(st, transport="http", host="127.0.0.1", port=8000, token="t", trust=True,
                      root=None, skills_dirs=None, chroma_url=None, namespace=None,
                      model_dir=None, extra=[])
    options = parse_args(argv)
    assert options.root == str(tmp_path) and options.transport == "http"
    assert options.skills_dirs == [str(tmp_path / "a"), str(tmp_path / "b")]
    assert options.namespace == "ns" and options.trust and not options.include_bundled


def test_demo_smoke_with_hash_embedding(run, tmp_path):
    summary = run.json("demo")
    assert summary["temporary"] is True and not Path(summary["root"]).exists()
    assert [a["action"] for a in summary["learn"]].count("ignored") >= 1
    assert summary["context"]["tokens"] <= 600
    kept = tmp_path / "kept"
    out = run("demo", "--root", kept).stdout
    assert "Critiques become guidelines" in out and (kept / "guidelines").is_dir()


def test_demo_ignores_memory_settings_from_environment(run, tmp_path, monkeypatch):
    real = tmp_path / "real-memory"
    monkeypatch.setenv("SKILLBANK_ROOT", str(real))
    monkeypatch.setenv("SKILLBANK_CHROMA_URL", "http://127.0.0.1:9")  # nothing listens there
    summary = run.json("demo")
    assert summary["temporary"] is True and not real.exists()


@pytest.mark.slow
def test_serve_starts_the_real_mcp_server_over_stdio(env, tmp_path):
    """`skillbank serve` end to end: the console script answers an MCP initialize on stdout."""
    script = Path(sys.executable).parent / "skillbank"
    if not script.exists():
        pytest.skip("console script not installed")
    request = {"jsonrpc": "2.0", "id": 1, "method": "initialize",
               "params": {"protocolVersion": "2025-06-18", "capabilities": {},
                          "clientInfo": {"name": "test", "version": "1"}}}
    done = subprocess.run([str(script), "--root", str(tmp_path / "served"), "serve", "--no-watch"],
                          input=json.dumps(request) + "\n", capture_output=True, text=True,
                          env={**os.environ}, timeout=120)
    assert done.returncode == 0, done.stderr[-2000:]
    reply = json.loads(done.stdout.strip().splitlines()[0])
    assert reply["id"] == 1 and reply["result"]["serverInfo"]["name"] == "skillbank"


def test_forget_deletes_an_item_for_good_after_asking(run):
    """The CLI could not forget anything though `experiences reject` told users to "forget it
    by id instead" (docs hunt, session 18)."""
    eid = run.json("experiences", "record", "--task", "Rotate the keys", "--outcome",
                   "success")["id"]
    refused = run("experiences", "reject", eid, code=2).stderr
    assert "skillbank forget ID" in refused
    run("forget", eid, input="n\n", code=1)  # asked, declined: nothing happens
    assert run.json("experiences", "show", eid)["id"] == eid
    assert run.json("forget", eid, "--yes")["id"] == eid
    run("experiences", "show", eid, code=3)
    gid = run.json("guidelines", "learn", "Always pin the Python version in CI.")["entries"][0][
        "guideline_id"]
    assert "forgot " + gid in run("forget", gid, input="y\n").stdout
    run("forget", "nonsense", "--yes", code=2)


def test_forget_from_a_script_asks_on_stderr_and_names_yes(run):
    """`skillbank --json forget ID` in a script wrote its prompt to stdout (not one JSON
    document), and with no answer on stdin exited 130, "interrupted" (hunt-docs #1, session 38):
    the prompt goes to stderr, no answer is invalid input naming --yes, nothing is forgotten."""
    eid = run.json("experiences", "record", "--task", "Backfill the ledger", "--outcome",
                   "failure")["id"]
    refused = run("--json", "forget", eid, input="", code=2)
    assert refused.stdout == ""
    prompt, error = refused.stderr.strip().splitlines()
    assert prompt.startswith(f"Forget {eid} for good?") and "--yes" in json.loads(error)["error"]
    assert run.json("experiences", "show", eid)["id"] == eid  # nothing forgotten
    assert run.json("forget", eid, input="y\n")["id"] == eid  # stdout: the JSON alone
    run("experiences", "show", eid, code=3)


@pytest.mark.skipif(sys.platform == "win32", reason="a pseudo-terminal")
def test_ctrl_d_at_the_forget_prompt_is_no(run, cli_root):
    """Ctrl-D at a terminal's `[y/N]` is no (exit 1, nothing forgotten), not "Aborted." as an
    interruption (review 1, session 38)."""
    import pty

    eid = run.json("experiences", "record", "--task", "Backfill the ledger", "--outcome",
                   "failure")["id"]
    main, tty = pty.openpty()
    script = Path(sys.executable).with_name("skillbank")
    env = {**os.environ, "SKILLBANK_CLI_OWNER": "0"}
    done = subprocess.Popen([str(script), "forget", eid], stdin=tty, stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, env=env)
    os.close(tty)
    try:
        prompt = b""
        while b"[y/N]" not in prompt:
            chunk = done.stderr.read1(256)
            assert chunk, prompt
            prompt += chunk
        os.write(main, b"\x04")  # Ctrl-D at the start of a line: end of input
        out, err = done.communicate(timeout=120)
    finally:
        os.close(main)
    assert done.returncode == 1, (out, prompt + err)
    assert b"Aborted" not in err and out == b""
    assert run.json("experiences", "show", eid)["id"] == eid


def test_export_to_stdout_with_a_dash(run, env):
    """`experiences export -` wrote a file named "-" (docs hunt, session 18)."""
    import os

    eid = run.json("experiences", "record", "--task", "Rotate the keys", "--outcome",
                   "success")["id"]
    done = run("experiences", "export", "-")
    lines = [json.loads(line) for line in done.stdout.splitlines()]
    assert [line["id"] for line in lines] == [eid]
    assert "exported 1" in done.stderr and not os.path.exists("-")
    assert json.loads(run("--json", "experiences", "export", "-").stdout.splitlines()[0])["id"] == eid


def test_skills_search_takes_a_score_bar_and_the_agents_tools(run, tmp_path):
    """The API and MCP had `min_score` and the tool gate; the CLI had neither (docs hunt, s18)."""
    skills = tmp_path / "skills"
    write_skill(skills, "git-release", "Tag and push a git release with signed tags.",
                extra="allowed-tools: Bash(git:*)\n")
    run("--no-bundled", "--skills-dir", skills, "skills", "sync")
    task = "tag and push a signed git release"
    assert [h["name"] for h in run.json("--no-bundled", "--skills-dir", skills, "skills",
                                        "search", task)] == ["git-release"]
    gated = run("--no-bundled", "--skills-dir", skills, "skills", "search", task, "--tool", "Read")
    # The fitting skill is gated, not absent (hunt-routing #2, session 28): said so.
    assert "No skill you can use fits" in gated.stdout and "left out git-release" in gated.stderr
    assert [h["name"] for h in run.json("--no-bundled", "--skills-dir", skills, "skills",
                                        "search", task, "--tool", "Bash")["skills"]] == \
        ["git-release"]
    score = run.json("--no-bundled", "--skills-dir", skills, "skills", "search", task)[0]["score"]
    assert run.json("--no-bundled", "--skills-dir", skills, "skills", "search", task,
                    "--min-score", str(min(1.0, score + 0.001))) == []


def test_lists_cut_at_their_limit_say_so(run):
    """`experiences list` printed "50 experiences" of 12,948 and `audit` "Audit log (200)",
    with nothing saying more were left out (scale hunt, session 18)."""
    for n in range(3):
        run("experiences", "record", "--task", f"Rotate key {n}", "--outcome", "success")
    assert "the newest 2; --limit N for more" in run("experiences", "list", "--limit", "2").stdout
    assert "--limit" not in run("experiences", "list", "--limit", "50").stdout
    assert "the newest 2, --limit N for more" in run("audit", "--limit", "2").stdout


def test_skills_a_python_process_indexed_from_another_folder_are_named_when_dropped(run,
                                                                                   cli_root,
                                                                                   tmp_path):
    """`Skillbank.open(skill_roots=[corpus])` indexed the corpus; the next CLI command (which
    serves the root's own folders) dropped it silently and answered "No skill fits" (scale
    hunt, session 18). It says which folder left the index and how to keep it."""
    from skillbank import Skillbank
    from skillbank.embeddings import HashEmbedding

    corpus = tmp_path / "corpus"
    write_skill(corpus, "git-release", "Tag and push a git release with signed tags.")
    with Skillbank.open(cli_root, skill_roots=[corpus], embedding_function=HashEmbedding(),
                        include_bundled=False) as bank:
        assert bank.skills.names() == ["git-release"]
    done = run("--no-bundled", "skills", "search", "tag a git release")
    assert "No skill fits" in done.stdout
    assert f"1 skills indexed from {corpus}" in " ".join(done.stderr.split())
    assert "--skills-dir" in done.stderr


def test_a_learn_that_supersedes_says_so_once(run):
    """The learn table's detail read "supersedes gl-X; supersedes gl-X "Use 'shall' f…", the
    reason cut off at 80 columns (hunt-learnfaces #4, session 38)."""
    old = run.json("guidelines", "learn", "Use 'shall' for obligations in contracts.")[
        "entries"][0]["guideline_id"]
    shown = " ".join(run("guidelines", "learn",
                         "Use 'must' instead of 'shall' for obligations.").stdout.split())
    assert "superseded" in shown and old in shown, shown
    assert shown.count("supersedes") == 1, shown
    assert run.json("guidelines", "show", old)["status"] == "superseded"
