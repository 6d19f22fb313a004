"""skillbank over MCP: `python -m skillbank.mcp_server` or `skillbank serve`.

Importing this package is cheap: mcp (about a second to import) and the bank load only when a
server is built or run.

- `main(argv=None)` parses the command line, serves and ends the process (a process entry:
  it never returns; see `runner.main`);
- `run(options) -> int` serves (to embed: returns its exit code) a `ServeOptions` (or any object/mapping with its field names);
- `build_server(bank, *, trusted, ...) -> MCPServer` builds the server over an open `Skillbank`
  (or a `BankHandle` still opening one), for embedding and tests.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from skillbank.mcp_server.options import ServeOptions, build_parser, parse_args

__all__ = ["main", "run", "build_server", "ServeOptions", "build_parser", "parse_args"]

if TYPE_CHECKING:
    from skillbank.mcp_server.runner import main, run
    from skillbank.mcp_server.server import build_server


def __getattr__(name: str) -> Any:
    if name in ("main", "run"):
        from skillbank.mcp_server import runner

        return getattr(runner, name)
    if name == "build_server":
        from skillbank.mcp_server.server import build_server

        return build_server
    raise AttributeError(f"module 'skillbank.mcp_server' has no attribute {name!r}")
