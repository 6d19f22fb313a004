"""`skillbank serve`: the MCP server, with every option `python -m skillbank.mcp_server` takes.

The options are declared here (not only passed through) so `skillbank serve --help` documents
each one docs/mcp.md lists; the server's own parser (`skillbank.mcp_server.options`) still does
the parsing, and anything not declared here is passed through to it. The argv is built in
`skillbank.cli.serve_args`, which `skillbank.cli.fast` shares: `skillbank serve` usually reaches
the server without this module (or typer) at all.
"""

from __future__ import annotations

from pathlib import Path
from typing import Annotated, Any, Optional

import typer

from skillbank.cli.common import state
from skillbank.cli.serve_args import LogLevel, Transport, command_argv, run_server, serve_argv

SERVE_SETTINGS = {"allow_extra_args": True, "ignore_unknown_options": True}


def serve(
    ctx: typer.Context,
    transport: Annotated[Transport, typer.Option(
        help="stdio (a local client starts the server) or http (streamable HTTP at /mcp).")
    ] = Transport.stdio,
    host: Annotated[Optional[str], typer.Option(
        metavar="ADDRESS", help="HTTP bind address (default 127.0.0.1; others need a token).")
    ] = None,
    port: Annotated[Optional[int], typer.Option(
        metavar="PORT", help="HTTP port (default 8765).")] = None,
    token: Annotated[Optional[str], typer.Option(
        envvar="SKILLBANK_TOKEN", metavar="TOKEN", help="Bearer token HTTP clients must send.")
    ] = None,
    trust: Annotated[bool, typer.Option(
        "--trust", help="HTTP clients are trusted: their critiques become active guidelines.")
    ] = False,
    tokens: Annotated[Optional[Path], typer.Option(
        "--tokens", metavar="FILE", help="HTTP: a tokens file mapping each bearer token to a "
        "principal, its namespaces and role (skillbank tokens add).")] = None,
    root_dir: Annotated[Optional[Path], typer.Option(
        "--root", metavar="DIR", help="Memory root (default: the global --root).")] = None,
    skills_dir: Annotated[Optional[list[Path]], typer.Option(
        "--skills-dir", metavar="DIR", exists=True, file_okay=False,
        help="Extra read-only skill folder (repeatable).")] = None,
    chroma_url: Annotated[Optional[str], typer.Option(
        metavar="URL", help="Share memory through a `chroma run` server.")] = None,
    namespace: Annotated[Optional[str], typer.Option(
        metavar="NAME", help="Namespace for experiences and guidelines.")] = None,
    model_dir: Annotated[Optional[Path], typer.Option(
        metavar="DIR", help="Folder with the all-MiniLM-L6-v2 ONNX model.")] = None,
    no_bundled: Annotated[bool, typer.Option(
        "--no-bundled", help="Do not serve the skills that ship with skillbank.")] = False,
    no_watch: Annotated[bool, typer.Option(
        "--no-watch", help="Do not re-sync skills when their files change.")] = False,
    log_level: Annotated[Optional[LogLevel], typer.Option(
        help="stderr log level (default WARNING).")] = None,
    max_body_bytes: Annotated[Optional[int], typer.Option(
        metavar="N", min=1, help="Largest HTTP request body accepted (default 1 MiB).")] = None,
    http_sse: Annotated[bool, typer.Option(
        "--http-sse", help="Answer HTTP requests with SSE streams instead of single JSON bodies.")
    ] = False,
) -> None:
    """Run the MCP server (stdio by default); see docs/mcp.md."""
    argv = command_argv(state(ctx), transport=transport.value, host=host, port=port, token=token,
                        trust=trust, tokens=tokens, root=root_dir, skills_dirs=skills_dir,
                        chroma_url=chroma_url, namespace=namespace, model_dir=model_dir,
                        no_bundled=no_bundled, no_watch=no_watch,
                        log_level=None if log_level is None else log_level.value,
                        max_body_bytes=max_body_bytes, http_sse=http_sse,
                        passthrough=list(ctx.args))
    code = run_server(argv)
    if isinstance(code, int) and code:
        raise typer.Exit(code)


__all__: list[Any] = ["SERVE_SETTINGS", "serve", "serve_argv", "Transport", "LogLevel"]
