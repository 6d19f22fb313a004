"""Server options and their command line, kept free of heavy imports.

`python -m skillbank.mcp_server` and `skillbank serve` share these: the CLI builds a
`ServeOptions` (or any object/mapping with the same names) and hands it to `run()`.
"""

from __future__ import annotations

import argparse
import ipaddress
import os
import sys
from dataclasses import dataclass, field, fields
from typing import Any, Mapping, Sequence

TOKEN_ENV = "SKILLBANK_TOKEN"
#: `SKILLBANK_EMBEDDING=hash` opens the bank with the hashing embedding (tests, benchmarks);
#: the same variable the CLI reads.
EMBEDDING_ENV = "SKILLBANK_EMBEDDING"
DEFAULT_MAX_BODY = 1 << 20  # 1 MiB: a tool call with a long critique is a few KiB


@dataclass
class ServeOptions:
    """Everything `run()` needs. Unset values fall back to `SKILLBANK_*` settings."""

    root: str | None = None
    skills_dirs: list[str] = field(default_factory=list)  # extra read-only skill roots
    chroma_url: str | None = None
    namespace: str | None = None
    model_dir: str | None = None
    transport: str = "stdio"  # "stdio" | "http"
    host: str = "127.0.0.1"
    port: int = 8765
    token: str | None = None  # bearer token for HTTP; SKILLBANK_TOKEN when unset
    tokens: str | None = None  # HTTP tokens file: each token a principal (mcp_server.identity)
    trust: bool = False  # HTTP critiques become active guidelines, not pending ones
    include_bundled: bool = True
    watch: bool = True  # re-sync skills when files change
    log_level: str = "WARNING"
    max_body_bytes: int = DEFAULT_MAX_BODY
    http_sse: bool = False  # answer HTTP POSTs with SSE streams instead of single JSON bodies

    @classmethod
    def coerce(cls, value: Any) -> "ServeOptions":
        """Accept a ServeOptions, a mapping or any object with matching attributes."""
        if isinstance(value, cls):
            return value
        if value is None:
            return cls()
        names = {f.name for f in fields(cls)}
        if isinstance(value, Mapping):
            data = {k: v for k, v in value.items() if k in names}
        else:
            data = {n: getattr(value, n) for n in names if hasattr(value, n)}
        if "skills_dirs" in data:
            data["skills_dirs"] = [str(p) for p in (data["skills_dirs"] or [])]
        for key in ("root", "model_dir", "tokens"):
            if data.get(key) is not None:
                data[key] = str(data[key])
        return cls(**{k: v for k, v in data.items() if v is not None})

    def resolved_token(self) -> str | None:
        token = self.token if self.token is not None else os.environ.get(TOKEN_ENV)
        return token or None


def is_loopback(host: str) -> bool:
    """True for addresses only this machine can reach (127.0.0.0/8, ::1, localhost)."""
    if host.lower() in ("localhost", "localhost."):
        return True
    try:
        return ipaddress.ip_address(host.strip("[]")).is_loopback
    except ValueError:
        return False


def skills_folder(value: str) -> str:
    """A `--skills-dir` value, refused unless it names a readable folder, as `skillbank serve`
    refuses it: `skillbank-mcp-server` (what the plugin launcher runs) and `python -m` started
    on a typo in a client's config and never served the project's skills, saying nothing.
    `~` is expanded for the check only (the bank expands it, and a client's `args` reach us
    without a shell); a relative folder is the working folder's, as in a shell."""
    folder = os.path.expanduser(value)
    if not os.path.exists(folder):
        raise argparse.ArgumentTypeError(f"folder {value!r} does not exist")
    if not os.path.isdir(folder):
        raise argparse.ArgumentTypeError(f"{value!r} is a file, not a folder of skills")
    if not os.access(folder, os.R_OK | os.X_OK):
        raise argparse.ArgumentTypeError(f"folder {value!r} is not readable")
    return value


def build_parser(prog: str = "python -m skillbank.mcp_server") -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog=prog,
        description="Serve a skillbank memory root over MCP (stdio by default, or streamable HTTP).",
    )
    parser.add_argument("--root", help="memory root (default: SKILLBANK_ROOT or ~/.skillbank)")
    parser.add_argument("--skills-dir", dest="skills_dirs", action="append", default=[],
                        type=skills_folder, metavar="DIR",
                        help="extra read-only skill root (a folder that exists); repeatable")
    parser.add_argument("--chroma-url", help="use a Chroma server, e.g. http://127.0.0.1:8000")
    parser.add_argument("--namespace", help="namespace for experiences and guidelines")
    parser.add_argument("--model-dir", help="folder with the all-MiniLM-L6-v2 ONNX model")
    parser.add_argument("--transport", choices=("stdio", "http"), default="stdio")
    parser.add_argument("--host", default="127.0.0.1",
                        help="HTTP bind address (default 127.0.0.1; others require a token)")
    parser.add_argument("--port", type=int, default=8765, help="HTTP port (default 8765)")
    parser.add_argument("--token", default=None,
                        help=f"bearer token HTTP clients must send (default: ${TOKEN_ENV})")
    parser.add_argument("--tokens", default=None, metavar="FILE",
                        help="HTTP tokens file mapping each bearer token (stored as sha256) to "
                             "a principal, its namespaces and role (skillbank tokens add)")
    parser.add_argument("--trust", action="store_true",
                        help="treat HTTP clients as trusted: their critiques become active guidelines")
    parser.add_argument("--no-bundled", dest="include_bundled", action="store_false",
                        help="do not serve the skills that ship with skillbank")
    parser.add_argument("--no-watch", dest="watch", action="store_false",
                        help="do not re-sync skills when their files change")
    parser.add_argument("--log-level", default="WARNING",
                        choices=("DEBUG", "INFO", "WARNING", "ERROR"), help="stderr log level")
    parser.add_argument("--max-body-bytes", type=int, default=DEFAULT_MAX_BODY,
                        help="largest HTTP request body accepted (default 1 MiB)")
    parser.add_argument("--http-sse", action="store_true",
                        help="answer HTTP requests with SSE streams (lets pre-2026 clients be "
                             "sampled mid-call) instead of plain JSON bodies")
    return parser


def program() -> str:
    """The command the person ran, for the server's errors: `skillbank-mcp-server` (what the
    plugin launcher runs), `python -m skillbank.mcp_server`, else `skillbank serve` (the CLI,
    or a program embedding the server). Start-up errors said "skillbank serve:" whichever was
    run, while argparse's named the command (hunt-docs #4, session 23)."""
    script = sys.argv[0] if sys.argv and sys.argv[0] else ""
    if os.path.basename(script) == "skillbank-mcp-server":
        return "skillbank-mcp-server"
    if os.path.basename(script) == "__main__.py" and \
            os.path.basename(os.path.dirname(os.path.abspath(script))) == "mcp_server":
        return "python -m skillbank.mcp_server"
    return "skillbank serve"


def parse_args(argv: Sequence[str] | None = None, prog: str | None = None) -> ServeOptions:
    # Errors name the command the person typed (the plugin launcher runs skillbank-mcp-server).
    parser = build_parser(prog or program())
    return ServeOptions.coerce(vars(parser.parse_args(argv)))
