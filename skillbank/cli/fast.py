"""`skillbank serve` without the command line's start-up (#27 item 6).

Why: an MCP client starts `skillbank serve` (the README's configuration) and waits for its first
answer. Through typer, the command line imported typer, rich and every command module first
(~0.6 s on this machine): `skillbank serve` took 1.62x a bare `import mcp.server` to its first
`find_skills`, where `skillbank-mcp-server` (the same server) took 1.38x.

What: `serve_plan(args)` reads the command lines it fully understands (the global options
before or after `serve`, serve's own options, with their environment fallbacks and typer's
checks: existing `--skills-dir` folders, the transport and log-level choices, integer ports)
and returns what the typer command would have parsed; `serve(plan)` builds the server's argv
with the same function the typer command uses (`skillbank.cli.serve_args.command_argv`) and
starts it. Anything else (help, a typo, an unknown option, a value typer would refuse, `--`)
returns None and goes through typer as before, so every message and exit code stays typer's.
tests/test_cli_fast_serve.py holds both paths to the same argv over a table of command lines,
and the option tables below to the typer command's own parameters.
"""

from __future__ import annotations

import os
import sys
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, NoReturn, Sequence

#: The root callback's options (skillbank.cli.commands.root): value options and their
#: environment variable (typer's envvar=), then flags. --version, --help and the completion
#: options are left to typer.
ROOT_VALUES: dict[str, str | None] = {
    "--root": "SKILLBANK_ROOT", "--skills-dir": None, "--chroma-url": "SKILLBANK_CHROMA_URL",
    "--namespace": "SKILLBANK_NAMESPACE", "--model-dir": "SKILLBANK_MODEL_DIR"}
ROOT_FLAGS = frozenset({"--json", "--no-bundled", "--no-remember", "--debug"})
#: `skillbank serve`'s own options (skillbank.cli.serve.serve), likewise.
SERVE_VALUES: dict[str, str | None] = {
    "--transport": None, "--host": None, "--port": None, "--token": "SKILLBANK_TOKEN",
    "--tokens": None, "--root": None, "--skills-dir": None, "--chroma-url": None,
    "--namespace": None, "--model-dir": None, "--log-level": None, "--max-body-bytes": None}
SERVE_FLAGS = frozenset({"--trust", "--no-bundled", "--no-watch", "--http-sse"})
#: Options that may be given more than once (each value kept); the others keep the last.
REPEATED = frozenset({"--skills-dir"})
#: Completion scripts run the command with this variable set: typer answers them.
COMPLETE_ENV = "_SKILLBANK_COMPLETE"


@dataclass
class ServePlan:
    """What the typer path would have parsed: the root's state and serve's keyword options."""

    state: Any
    options: dict[str, Any] = field(default_factory=dict)

    def argv(self) -> list[str]:
        from skillbank.cli.serve_args import command_argv

        return command_argv(self.state, **self.options)


def _take(args: Sequence[str], i: int, values: dict[str, str | None], flags: frozenset[str],
          into: dict[str, Any]) -> int | None:
    """Read the option at args[i] into `into`; the index after it, or None if it is not one
    of `values`/`flags` or is malformed (click would refuse it: typer says how)."""
    token = args[i]
    name, inline = (token.split("=", 1) if token.startswith("--") and "=" in token
                    else (token, None))
    if name in flags:
        if inline is not None:
            return None  # "Option '--trust' does not take a value"
        into[name] = True
        return i + 1
    if name not in values:
        return None
    if inline is None:
        if i + 1 >= len(args):
            return None  # "Option '--root' requires an argument"
        inline, i = args[i + 1], i + 1  # click takes the next word, whatever it looks like
    if inline == "":
        return None  # typer's conversions of empty values are left to typer
    if name in REPEATED:
        into.setdefault(name, []).append(inline)
    else:
        into[name] = inline
    return i + 1


def _folders(values: list[str] | None) -> list[Path] | None:
    """`--skills-dir` values as typer checks them (exists, not a file, readable); None if any
    is not a readable folder (typer then says which, as before)."""
    if values is None:
        return []
    if not all(os.path.isdir(v) and os.access(v, os.R_OK) for v in values):
        return None
    return [Path(v) for v in values]


def _integer(value: str | None, minimum: int | None = None) -> tuple[bool, int | None]:
    if value is None:
        return True, None
    if not value.isascii():  # int() takes other scripts' digits ("١٢"); typer refuses them
        return False, None
    try:
        number = int(value)
    except ValueError:
        return False, None
    return (minimum is None or number >= minimum), number


def serve_plan(args: Sequence[Any], environ: Any = None) -> ServePlan | None:
    """The parsed `skillbank ... serve ...` command line, or None to leave it to typer."""
    env = os.environ if environ is None else environ
    if not args or COMPLETE_ENV in env or not all(isinstance(a, str) for a in args):
        return None
    if any(a in ("--help", "-h", "--") for a in args):
        return None
    root: dict[str, Any] = {}
    own: dict[str, Any] = {}
    i = 0
    while i < len(args) and args[i].startswith("-"):
        step = _take(args, i, ROOT_VALUES, ROOT_FLAGS, root)
        if step is None:
            return None
        i = step
    if i >= len(args) or args[i] != "serve":
        return None
    i += 1
    while i < len(args):
        # serve's own options first (--root, --no-bundled... are serve's after `serve`); the
        # root's flags it does not define are moved before it (skillbank.cli.parsing).
        token = args[i]
        name = token.split("=", 1)[0] if token.startswith("--") else token
        if name in SERVE_VALUES or name in SERVE_FLAGS:
            step = _take(args, i, SERVE_VALUES, SERVE_FLAGS, own)
        elif name in ROOT_FLAGS:
            step = _take(args, i, {}, ROOT_FLAGS, root)
        else:
            return None  # a positional word or an unknown option: typer passes or refuses it
        if step is None:
            return None
        i = step
    return _plan(root, own, env)


def _plan(root: dict[str, Any], own: dict[str, Any], env: Any) -> ServePlan | None:
    from skillbank.cli.serve_args import LogLevel, Transport

    for options, table in ((root, ROOT_VALUES), (own, SERVE_VALUES)):
        for name, variable in table.items():
            if variable and name not in options and env.get(variable):
                options[name] = env[variable]  # click: the command line, else a non-empty variable
    root_folders, own_folders = _folders(root.get("--skills-dir")), _folders(own.get("--skills-dir"))
    port_ok, port = _integer(own.get("--port"))
    body_ok, max_body = _integer(own.get("--max-body-bytes"), minimum=1)
    transport = own.get("--transport", Transport.stdio.value)
    level = own.get("--log-level")
    if (root_folders is None or own_folders is None or not port_ok or not body_ok
            or transport not in {t.value for t in Transport}
            or (level is not None and level not in {v.value for v in LogLevel})):
        return None
    from skillbank.cli.common import State

    def path(value: str | None) -> Path | None:
        return None if value is None else Path(value)

    state = State(root=path(root.get("--root")), skills_dirs=root_folders,
                  chroma_url=root.get("--chroma-url"), namespace=root.get("--namespace"),
                  model_dir=path(root.get("--model-dir")), json="--json" in root,
                  include_bundled="--no-bundled" not in root,
                  remember="--no-remember" not in root, debug="--debug" in root)
    return ServePlan(state, {
        "transport": transport, "host": own.get("--host"), "port": port,
        "token": own.get("--token"), "trust": "--trust" in own, "tokens": path(own.get("--tokens")),
        "root": path(own.get("--root")), "skills_dirs": own_folders or None,
        "chroma_url": own.get("--chroma-url"), "namespace": own.get("--namespace"),
        "model_dir": path(own.get("--model-dir")), "no_bundled": "--no-bundled" in own,
        "no_watch": "--no-watch" in own, "log_level": level, "max_body_bytes": max_body,
        "http_sse": "--http-sse" in own})


def serve(plan: ServePlan) -> NoReturn:
    """Run the server as the typer command would, errors and exit codes included (see
    `skillbank.cli.commands.SkillbankGroup.invoke`)."""
    from skillbank import scope as scopes

    scopes.set_process_face("cli")  # as skillbank.cli.main does (the server sets its own)
    state = plan.state
    if state.debug:
        from skillbank.cli.common import debug_logging

        debug_logging()
    try:
        from skillbank.cli.serve_args import run_server

        code = run_server(plan.argv())
    except BrokenPipeError:
        try:
            devnull = os.open(os.devnull, os.O_WRONLY)
            os.dup2(devnull, sys.stdout.fileno())
        except (OSError, ValueError, AttributeError):
            pass
        code = 1
    except Exception as exc:
        if state.debug:
            raise
        from skillbank.cli.reporting import report_error

        code = report_error(exc, state.json, state.root)
    raise SystemExit(code if isinstance(code, int) else 0)
