"""`skillbank serve`: the MCP server, with every option `python -m skillbank.mcp_server` takes.

The options are declared here (not only passed through) so `skillbank serve --help` documents
each one docs/mcp.md lists; the server's own parser (`skillbank.mcp_server.options`) still does
the parsing, and anything not declared here is passed through to it.
"""

from __future__ import annotations

from enum import Enum
from pathlib import Path
from typing import Annotated, Any, Optional

import typer

from skillbank.cli.common import State, state

SERVE_SETTINGS = {"allow_extra_args": True, "ignore_unknown_options": True}


class Transport(str, Enum):
    stdio = "stdio"
    http = "http"


class LogLevel(str, Enum):
    DEBUG = "DEBUG"
    INFO = "INFO"
    WARNING = "WARNING"
    ERROR = "ERROR"


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
    st = state(ctx)
    extra = list(ctx.args)
    if no_bundled:
        extra.append("--no-bundled")
    if no_watch:
        extra.append("--no-watch")
    if log_level is not None:
        extra += ["--log-level", log_level.value]
    if max_body_bytes is not None:
        extra += ["--max-body-bytes", str(max_body_bytes)]
    if http_sse:
        extra.append("--http-sse")
    if tokens is not None:
        extra += ["--tokens", str(tokens)]
    argv = serve_argv(st, transport=transport.value, host=host, port=port, token=token, trust=trust,
                      root=root_dir, skills_dirs=skills_dir, chroma_url=chroma_url,
                      namespace=namespace, model_dir=model_dir, extra=extra)
    from skillbank.errors import SkillbankError

    try:
        from skillbank import mcp_server
    except ImportError as exc:
        raise SkillbankError(f"the MCP server cannot be imported: {exc}") from None
    server_main = getattr(mcp_server, "main", None)
    if server_main is None:
        raise SkillbankError("this install's skillbank.mcp_server has no main(); "
                             "reinstall skillbank")
    code = server_main(argv)
    if isinstance(code, int) and code:
        raise typer.Exit(code)


def serve_argv(st: State, *, transport: str, host: str | None, port: int | None,
               token: str | None, trust: bool, root: Path | None, skills_dirs: list[Path] | None,
               chroma_url: str | None, namespace: str | None, model_dir: Path | None,
               extra: list[str]) -> list[str]:
    """The MCP server's argv: the command's options, falling back to the global ones."""
    argv = ["--transport", transport]
    for flag, value in (("--root", root or st.root), ("--chroma-url", chroma_url or st.chroma_url),
                        ("--namespace", namespace or st.namespace),
                        ("--model-dir", model_dir or st.model_dir),
                        ("--host", host), ("--port", port), ("--token", token)):
        if value is not None:
            argv += [flag, str(value)]
    for folder in (skills_dirs or []) or st.skills_dirs:
        argv += ["--skills-dir", str(folder)]
    if trust:
        argv.append("--trust")
    if not st.include_bundled and "--no-bundled" not in extra:
        argv.append("--no-bundled")
    return argv + extra


__all__: list[Any] = ["SERVE_SETTINGS", "serve", "serve_argv"]
