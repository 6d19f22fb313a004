"""The three commands docs/mcp.md calls the same server refuse a `--skills-dir` that is not a
folder (what users met: `skillbank serve` exited 2, while `skillbank-mcp-server`, which the
plugin launcher runs, and `python -m skillbank.mcp_server` started, answered a real session and
never served the folder a client config named with a typo)."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from test_mcp_transports import BIN, base_env

COMMANDS = {
    "skillbank serve": [str(BIN / "skillbank"), "serve"],
    "skillbank-mcp-server": [str(BIN / "skillbank-mcp-server")],
    "python -m": [sys.executable, "-m", "skillbank.mcp_server"],
}


@pytest.mark.parametrize("command", COMMANDS)
@pytest.mark.parametrize("kind", ["missing", "file"])
def test_a_skills_dir_that_is_not_a_folder_is_refused(tmp_path, command, kind):
    folder = tmp_path / "no-such-folder"
    if kind == "file":
        folder.write_text("not a folder\n")
    root = tmp_path / "root"
    done = subprocess.run([*COMMANDS[command], "--root", str(root), "--skills-dir", str(folder)],
                          capture_output=True, text=True, timeout=120, stdin=subprocess.DEVNULL,
                          env=base_env(SKILLBANK_CLI_OWNER="0"), cwd=tmp_path)
    assert done.returncode == 2, (done.stdout, done.stderr)
    assert "--skills-dir" in done.stderr and "Traceback" not in done.stderr
    assert not root.exists()  # refused before touching anything


def test_an_existing_folder_named_with_a_tilde_is_accepted(tmp_path, monkeypatch):
    """A client's `args` reach the server without a shell: `~/.claude/skills` stays as typed
    (the bank expands it), so the check expands it too."""
    from skillbank.mcp_server.options import parse_args

    monkeypatch.setenv("HOME", str(tmp_path))
    (tmp_path / ".claude" / "skills").mkdir(parents=True)
    assert parse_args(["--skills-dir", "~/.claude/skills"]).skills_dirs == ["~/.claude/skills"]
    with pytest.raises(SystemExit):
        parse_args(["--skills-dir", "~/.claude/nope"])


@pytest.mark.parametrize("command", COMMANDS)
def test_a_start_up_error_names_the_command_that_was_run(tmp_path, command):
    """`skillbank-mcp-server` and `python -m skillbank.mcp_server` headed their start-up errors
    "skillbank serve:" while their argparse errors named them (hunt-docs #4, session 23)."""
    name = "python -m skillbank.mcp_server" if command == "python -m" else command
    refused = subprocess.run([*COMMANDS[command], "--root", str(tmp_path / "root"),
                              "--model-dir", str(tmp_path)],  # a folder with no model in it
                             capture_output=True, text=True, timeout=120,
                             stdin=subprocess.DEVNULL, env=base_env(SKILLBANK_CLI_OWNER="0"),
                             cwd=tmp_path)
    assert refused.returncode == 2, (refused.stdout, refused.stderr)
    assert refused.stderr.startswith(f"{name}: --model-dir "), refused.stderr
    others = {"skillbank serve", "skillbank-mcp-server", "python -m skillbank.mcp_server"} - {name}
    assert not any(refused.stderr.startswith(f"{other}:") for other in others), refused.stderr


def test_an_invalid_setting_past_the_start_up_checks_names_the_command_too(tmp_path):
    """`runner.main` headed an `InvalidInputError` that `run` let through "skillbank:", whichever
    command was run (last read of session 23). Driven through `main` itself, with `run` made to
    raise as a setting read while starting would."""
    script = ("import sys\n"
              "from skillbank.errors import InvalidInputError\n"
              "from skillbank.mcp_server import runner\n"
              "def run(*_args):\n"
              "    raise InvalidInputError('namespace \"../x\" is not a namespace')\n"
              "runner.run = run\n"
              "sys.argv = ['/usr/local/bin/skillbank-mcp-server']\n"
              "runner.main([])\n")
    done = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True,
                          timeout=120, stdin=subprocess.DEVNULL, cwd=tmp_path,
                          env=base_env(SKILLBANK_CLI_OWNER="0"))
    assert done.returncode == 2, (done.stdout, done.stderr)
    assert done.stderr.startswith('skillbank-mcp-server: namespace "../x"'), done.stderr
