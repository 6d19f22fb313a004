"""`skillbank serve` reaches the MCP server without typer (#27 item 6), with exactly the argv the
typer command builds, and the CLI imports a command's module only when it runs that command.

The fast path (`skillbank.cli.fast`) is held to the typer path over a table of command lines
(global options before and after `serve`, their environment fallbacks, repeated and `=` forms),
its option tables to the typer command's own parameters, and everything it does not fully
understand falls back to typer, whose errors and exit codes stay as they were.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
from typer.testing import CliRunner

from skillbank.cli import fast


@pytest.fixture
def captured(cli_root, monkeypatch):
    """mcp_server.main replaced by a recorder: (list of argvs it was called with)."""
    import skillbank.mcp_server as mcp_server

    calls: list[list[str]] = []

    def fake_main(argv):
        calls.append(list(argv))
        return 0

    monkeypatch.setattr(mcp_server, "main", fake_main, raising=False)
    return calls


def typer_argv(args: list[str], calls: list[list[str]]) -> list[str]:
    from skillbank.cli import app

    result = CliRunner().invoke(app, args)
    assert result.exit_code == 0, (args, result.stderr, result.exception)
    return calls.pop()


def fast_argv(args: list[str], calls: list[list[str]]) -> list[str]:
    from skillbank.cli import main

    assert fast.serve_plan(args) is not None, args
    with pytest.raises(SystemExit) as done:
        main(args)
    assert done.value.code == 0
    return calls.pop()


LINES = [
    ["serve"],
    ["--root", "{r}", "serve"],
    ["--root={r}", "serve", "--no-watch"],
    ["serve", "--root", "{r}", "--transport", "http", "--port", "9001", "--host", "127.0.0.1"],
    ["--skills-dir", "{a}", "--skills-dir", "{b}", "serve"],
    ["--skills-dir", "{a}", "serve", "--skills-dir", "{b}"],
    ["--no-bundled", "serve"],
    ["serve", "--no-bundled"],
    ["--no-bundled", "serve", "--no-bundled"],
    ["--json", "--debug", "--no-remember", "serve"],
    ["serve", "--json", "--no-remember"],
    ["--chroma-url", "http://127.0.0.1:1", "--namespace", "g", "--model-dir", "{m}", "serve"],
    ["--namespace", "g", "serve", "--namespace", "s", "--chroma-url=http://x:2"],
    ["serve", "--token", "-tok", "--trust", "--tokens", "{a}/t.toml", "--transport=http"],
    ["serve", "--log-level", "DEBUG", "--max-body-bytes", "2048", "--http-sse"],
    ["serve", "--port", "08080", "--port", "9000", "--model-dir", "{m}//x/"],
    ["--root", "serve", "serve"],  # a root folder named serve
]
ENVS = [{}, {"SKILLBANK_ROOT": "{r}env", "SKILLBANK_NAMESPACE": "envns",
             "SKILLBANK_CHROMA_URL": "http://env:1", "SKILLBANK_MODEL_DIR": "{m}env",
             "SKILLBANK_TOKEN": "envtoken"},
        {"SKILLBANK_NAMESPACE": "", "SKILLBANK_TOKEN": ""}]


@pytest.mark.parametrize("environment", ENVS, ids=["no-env", "env", "empty-env"])
def test_the_fast_path_gives_the_server_the_typer_paths_argv(captured, tmp_path, monkeypatch,
                                                             environment):
    (tmp_path / "a").mkdir()
    (tmp_path / "b").mkdir()
    fill = {"{r}": str(tmp_path / "r"), "{a}": str(tmp_path / "a"), "{b}": str(tmp_path / "b"),
            "{m}": str(tmp_path / "m")}

    def filled(text: str) -> str:
        for key, value in fill.items():
            text = text.replace(key, value)
        return text

    for name, value in environment.items():
        monkeypatch.setenv(name, filled(value))
    for line in LINES:
        args = [filled(a) for a in line]
        by_typer = typer_argv(args, captured)
        assert fast_argv(args, captured) == by_typer, args
        if environment.get("SKILLBANK_TOKEN"):
            assert "--token" in by_typer


@pytest.mark.parametrize("line", [
    ["serve", "--help"], ["--help"], ["-h", "serve"], ["--version"], ["stats"], ["serve", "extra"],
    ["serve", "--unknown"], ["serve", "--ro", "x"], ["serve", "--", "--root", "x"],
    ["serve", "--skills-dir", "{nowhere}"], ["--skills-dir", "{file}", "serve"],
    ["serve", "--transport", "sse"], ["serve", "--log-level", "LOUD"], ["serve", "--port", "x"],
    ["serve", "--max-body-bytes", "0"], ["serve", "--trust=yes"], ["serve", "--root"],
    ["serve", "--port", "\u0661\u0662"], ["serve", "--max-body-bytes", "\uff19"],
    ["serve", "--root", ""], ["--install-completion", "serve"], ["skills", "serve"],
])
def test_command_lines_it_does_not_fully_understand_go_through_typer(cli_root, tmp_path, line):
    (tmp_path / "file").write_text("x")
    args = [a.replace("{nowhere}", str(tmp_path / "nowhere")).replace("{file}",
            str(tmp_path / "file")) for a in line]
    assert fast.serve_plan(args) is None


def test_completion_goes_through_typer(cli_root, monkeypatch):
    monkeypatch.setenv("_SKILLBANK_COMPLETE", "complete_bash")
    assert fast.serve_plan(["serve"]) is None


def test_the_option_tables_are_the_typer_commands_own(cli_root):
    import typer.main

    from skillbank.cli import app

    group = typer.main.get_command(app)

    def table(command, skip=()):
        values, flags = {}, set()
        for param in command.params:
            if getattr(param, "param_type_name", "") != "option":
                continue
            names = [o for o in [*param.opts, *param.secondary_opts] if o not in skip]
            for name in names:
                if param.is_flag:
                    flags.add(name)
                else:
                    values[name] = param.envvar
                    assert param.multiple == (name in fast.REPEATED), name
        return values, flags

    root_only = {"--version", "--help", "-h", "--install-completion", "--show-completion"}
    assert table(group, root_only) == (fast.ROOT_VALUES, set(fast.ROOT_FLAGS))
    serve = group.commands["serve"]
    assert table(serve, {"--help", "-h"}) == (fast.SERVE_VALUES, set(fast.SERVE_FLAGS))


def test_errors_and_exit_codes_are_the_typer_paths(cli_root, monkeypatch):
    import skillbank.mcp_server as mcp_server
    from skillbank.cli import app, main
    from skillbank.errors import InvalidInputError

    for json_mode in ([], ["--json"]):
        def refuse(argv):
            raise InvalidInputError("bad --namespace 'x y'")

        monkeypatch.setattr(mcp_server, "main", refuse, raising=False)
        by_typer = CliRunner().invoke(app, [*json_mode, "serve"])
        with pytest.raises(SystemExit) as done:
            main([*json_mode, "serve"])
        assert done.value.code == by_typer.exit_code == 2
        monkeypatch.setattr(mcp_server, "main", lambda argv: 3, raising=False)
        assert CliRunner().invoke(app, [*json_mode, "serve"]).exit_code == 3
        with pytest.raises(SystemExit) as done:
            main([*json_mode, "serve"])
        assert done.value.code == 3


def test_other_scripts_digits_are_refused_as_typer_refuses_them(cli_root):
    """int() reads "١٢" as 12; typer refuses it (exit 2), so the fast path leaves it to typer."""
    from skillbank.cli import app

    assert fast.serve_plan(["serve", "--port", "\u0661\u0662"]) is None
    assert CliRunner().invoke(app, ["serve", "--port", "\u0661\u0662"]).exit_code == 2


def test_debug_through_the_fast_path_logs_and_shows_the_traceback(cli_root, monkeypatch):
    """`--debug serve`: the skillbank loggers at DEBUG, and an error raised as it is (the
    traceback), as the typer path does."""
    import logging

    import skillbank.mcp_server as mcp_server
    from skillbank.cli import main

    def broken(argv):
        raise RuntimeError("the server broke")

    monkeypatch.setattr(mcp_server, "main", broken, raising=False)
    logger = logging.getLogger("skillbank")
    monkeypatch.setattr(logger, "level", logger.level)
    with pytest.raises(RuntimeError, match="the server broke"):
        main(["--debug", "serve"])
    assert logger.level == logging.DEBUG
    with pytest.raises(SystemExit) as done:  # without --debug: one line and exit 1
        main(["serve"])
    assert done.value.code == 1


@pytest.mark.parametrize("via", ["fast", "typer"])
def test_ctrl_c_before_the_server_runs_is_a_clean_stop(cli_root, monkeypatch, via):
    """A Ctrl-C that lands before the server installed its own handler ends `serve` with 0, as
    one while it serves does (mcp_server/runner.py), whichever path started it."""
    import skillbank.mcp_server as mcp_server
    from skillbank.cli import app, main

    def interrupted(argv):
        raise KeyboardInterrupt

    monkeypatch.setattr(mcp_server, "main", interrupted, raising=False)
    if via == "typer":
        assert CliRunner().invoke(app, ["serve"]).exit_code == 0
        return
    with pytest.raises(SystemExit) as done:
        main(["serve"])
    assert done.value.code == 0


def test_errors_are_written_as_the_typer_path_writes_them(cli_root, capsys, monkeypatch):
    import skillbank.mcp_server as mcp_server
    from skillbank.cli import app, main
    from skillbank.errors import NotFoundError

    def missing(argv):
        raise NotFoundError("no such root")

    monkeypatch.setattr(mcp_server, "main", missing, raising=False)
    for args in (["serve"], ["serve", "--json"]):
        by_typer = CliRunner().invoke(app, args)
        with pytest.raises(SystemExit):
            main(args)
        assert capsys.readouterr().err == by_typer.stderr and by_typer.exit_code == 3


PROBE = """
import json, sys
import skillbank.mcp_server as mcp_server
mcp_server.main = lambda argv: print(json.dumps(argv)) or 0
from skillbank.cli import main
try:
    main(sys.argv[1:])
except SystemExit as exc:
    code = exc.code
heavy = sorted(m for m in ("typer", "rich", "click", "pydantic", "skillbank.cli.commands",
                           "skillbank.cli.skills", "skillbank.cli.serve") if m in sys.modules)
print(json.dumps({"code": code, "heavy": heavy}))
"""


def test_skillbank_serve_does_not_import_typer(cli_root, tmp_path):
    (tmp_path / "a").mkdir()
    done = subprocess.run([sys.executable, "-c", PROBE, "--root", str(tmp_path / "r"), "serve",
                           "--skills-dir", str(tmp_path / "a"), "--json"],
                          capture_output=True, text=True, timeout=120,
                          env={k: v for k, v in os.environ.items() if k != "SKILLBANK_MODEL_DIR"})
    argv, report = [json.loads(line) for line in done.stdout.splitlines()[-2:]]
    assert report == {"code": 0, "heavy": []}, done.stderr
    assert argv == ["--transport", "stdio", "--root", str(tmp_path / "r"),
                    "--skills-dir", str(tmp_path / "a")]


def _stats_then(report: str) -> subprocess.CompletedProcess:
    """`skillbank --no-bundled --json stats` in a fresh interpreter, then `report` (Python, with
    `code` the command's exit code) run in the same process."""
    probe = ("import sys\nfrom skillbank.cli import main\n"
             "try:\n    main(sys.argv[1:])\nexcept SystemExit as exc:\n    code = exc.code\n"
             + report)
    return subprocess.run([sys.executable, "-c", probe, "--no-bundled", "--json", "stats"],
                          capture_output=True, text=True, timeout=120, env={**os.environ})


def test_a_command_imports_only_its_own_module(cli_root):
    done = _stats_then("mods = sorted(m for m in sys.modules if m.startswith('skillbank.cli.'))\n"
                       "print(code, ' '.join(mods))\n")
    code, _, modules = done.stdout.strip().splitlines()[-1].partition(" ")
    assert code == "0", done.stderr
    for module in ("skills", "memory", "ui", "config", "tokens", "audit", "migrate"):
        assert f"skillbank.cli.{module}" not in modules.split(), modules


def test_a_cli_process_does_not_import_httpxs_own_command_line(cli_root):
    """httpx's CLI (click, rich.syntax, pygments) is kept out of a CLI process
    (`common.skip_httpx_cli`): ~0.1 s of every command's start."""
    done = _stats_then("print(code, 'httpx' in sys.modules, 'pygments' in sys.modules, "
                       "'rich.syntax' in sys.modules)\n")
    assert done.stdout.strip().splitlines()[-1] == "0 True False False", done.stderr


def test_a_lazily_loaded_group_runs_and_its_help_is_tidied(cli_root):
    from skillbank.cli import app

    runner = CliRunner()
    listed = runner.invoke(app, ["--no-bundled", "--json", "skills", "list"])
    assert listed.exit_code == 0 and json.loads(listed.stdout) == [], listed.stderr
    assert "<str>" not in runner.invoke(app, ["skills", "search", "--help"]).stdout
    assert Path(os.environ["SKILLBANK_ROOT"]).exists()
