"""The MCP server's argv from `skillbank serve`'s options, and starting the server.

Shared by the typer command (`skillbank.cli.serve`) and the fast path that skips the command
line's start-up (`skillbank.cli.fast`): both hand the server the argv built here, so they cannot
drift apart. Light on purpose: no typer, no rich.
"""

from __future__ import annotations

from enum import Enum
from pathlib import Path
from typing import Any, Sequence

from skillbank.cli.common import State


class Transport(str, Enum):
    stdio = "stdio"
    http = "http"


class LogLevel(str, Enum):
    DEBUG = "DEBUG"
    INFO = "INFO"
    WARNING = "WARNING"
    ERROR = "ERROR"


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


def command_argv(st: State, *, transport: str = "stdio", host: str | None = None,
                 port: int | None = None, token: str | None = None, trust: bool = False,
                 tokens: Path | None = None, root: Path | None = None,
                 skills_dirs: list[Path] | None = None, chroma_url: str | None = None,
                 namespace: str | None = None, model_dir: Path | None = None,
                 no_bundled: bool = False, no_watch: bool = False, log_level: str | None = None,
                 max_body_bytes: int | None = None, http_sse: bool = False,
                 passthrough: Sequence[str] = ()) -> list[str]:
    """`skillbank serve`'s parsed options (and what it passes through) as the server's argv."""
    extra = list(passthrough)
    if no_bundled:
        extra.append("--no-bundled")
    if no_watch:
        extra.append("--no-watch")
    if log_level is not None:
        extra += ["--log-level", log_level]
    if max_body_bytes is not None:
        extra += ["--max-body-bytes", str(max_body_bytes)]
    if http_sse:
        extra.append("--http-sse")
    if tokens is not None:
        extra += ["--tokens", str(tokens)]
    return serve_argv(st, transport=transport, host=host, port=port, token=token, trust=trust,
                      root=root, skills_dirs=skills_dirs, chroma_url=chroma_url,
                      namespace=namespace, model_dir=model_dir, extra=extra)


def run_server(argv: list[str]) -> Any:
    """Start the MCP server with `argv` (`skillbank.mcp_server.main`), which ends the process
    once the server stops; a code comes back only from a Ctrl-C during its imports (0)."""
    from skillbank.errors import SkillbankError

    try:
        from skillbank import mcp_server
    except ImportError as exc:
        raise SkillbankError(f"the MCP server cannot be imported: {exc}") from None
    server_main = getattr(mcp_server, "main", None)
    if server_main is None:
        raise SkillbankError("this install's skillbank.mcp_server has no main(); "
                             "reinstall skillbank")
    try:
        return server_main(argv)
    except KeyboardInterrupt:
        # Ctrl-C before the server installed its own handler (during its imports): a clean stop,
        # exit 0, as the server answers a Ctrl-C once it runs (mcp_server/runner.py).
        return 0
