"""`skillbank server`: the CLI's door to a team worker (`skillbank.team.server`).

A thin face: options after `server` go to the worker as they are; the CLI's global `--root`
and `--chroma-url` (taken before the subcommand) are passed on when the command does not name
them itself. Nothing heavy is imported until the command runs.
"""

from __future__ import annotations

import typer

SETTINGS = {"allow_extra_args": True, "ignore_unknown_options": True,
            "help_option_names": []}


def server(ctx: typer.Context) -> None:
    """Run a team-mode worker: MCP over HTTP, /healthz and /readyz, over PostgreSQL and a
    Chroma server (see docs/team.md; `skillbank server --help` lists its options)."""
    from skillbank.team.server import main

    argv = list(ctx.args)
    state = ctx.obj
    for flag, name in (("--root", "root"), ("--chroma-url", "chroma_url")):
        value = getattr(state, name, None)
        if value is not None and flag not in argv:
            argv = [flag, str(value), *argv]
    raise typer.Exit(main(argv))
