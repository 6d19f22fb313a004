"""How a command's error reaches a person or a script: one line on stderr and an exit code.

Kept apart from the typer app (`skillbank.cli.commands`) so `skillbank serve`'s fast path
(`skillbank.cli.fast`) reports a failure exactly as the typer path does, without importing typer.
"""

from __future__ import annotations

import json
import sys
from typing import Any

INTERRUPTED = 130


def _error_details(exc: BaseException, root: Any = None) -> tuple[int, str, list[Any]]:
    """Exit code, one-line message and findings for an exception a command raised."""
    from pydantic import ValidationError

    from skillbank.errors import SkillbankError

    if isinstance(exc, SkillbankError):
        return exc.exit_code, str(exc), list(getattr(exc, "findings", []) or [])
    if isinstance(exc, ValidationError):
        problems = "; ".join(
            f"{'.'.join(str(p) for p in err.get('loc', ())) or 'input'}: {err.get('msg')}"
            for err in exc.errors()[:5])
        return 2, f"invalid input: {problems}", []
    if type(exc).__module__.split(".")[0] in ("httpx", "httpcore"):
        return 1, (f"network error: {exc}. The Chroma server (--chroma-url) or the embedding "
                   "model download could not be reached; offline, point --model-dir or "
                   "SKILLBANK_MODEL_DIR at a local all-MiniLM-L6-v2 folder"), []
    if isinstance(exc, OSError):
        import errno

        if exc.errno == errno.EROFS:  # exit 5, as for any read-only place (crash hunt, s18)
            return 5, (f"{exc}: the memory root is on a read-only file system, and skillbank "
                       "writes its lock and index files there even to read; copy the root "
                       "somewhere writable (cp -a) and pass that as --root"), []
        if isinstance(exc, PermissionError) and _under_root(exc, root):  # exit 5, as EROFS
            return 5, _permission_message(exc), []
        if exc.errno == errno.ENOSPC:
            return 1, f"{exc}: the disk under the memory root is full; free space and retry", []
        return 1, str(exc), []
    message = " ".join(str(exc).split()) or type(exc).__name__
    from skillbank.index_repair import damaged_message
    from skillbank.index_reopen import stale_handle

    damaged = damaged_message(exc)  # Chroma's words alone sent users to delete chroma/ by hand
    if damaged is not None:
        return 1, damaged, []
    if stale_handle(exc):  # chroma/ deleted under a server: SQLite's words pointed nowhere
        return 1, (f"{message} ({type(exc).__name__}): the memory root's index (its chroma/ "
                   "folder) was deleted or replaced while a process had it open; "
                   "`skillbank reindex` opens it again and rebuilds it from the files"), []
    return 1, f"{message} ({type(exc).__name__}; run with --debug for a traceback)", []


def _denied_path(exc: PermissionError) -> str | None:
    """The path a PermissionError names (through a client only its text carries it)."""
    import os
    import re

    if exc.filename is not None:
        return os.fspath(exc.filename)
    quoted = re.search(r"'([^']+)'", str(exc))
    return quoted.group(1) if quoted else None


def _under_root(exc: PermissionError, root: Any = None) -> bool:
    """Whether the denied path is in the memory root (`root`: the command's --root, else
    SKILLBANK_ROOT or the default), or names none: only then is it the root's trouble. An
    `experiences export` to a folder outside it exited 5 with "copy the root somewhere
    writable" (review, session 21): that is the target's, exit 1 with its errno."""
    import os

    from skillbank.settings import DEFAULT_ROOT, ENV_PREFIX

    path = _denied_path(exc)
    if path is None:
        return True
    chosen = root or os.environ.get(f"{ENV_PREFIX}ROOT") or DEFAULT_ROOT
    base = os.path.realpath(os.path.expanduser(os.fspath(chosen)))
    target = os.path.realpath(path)
    return target == base or target.startswith(base + os.sep)


def _permission_message(exc: PermissionError) -> str:
    """What a PermissionError under the root means and how to fix it. It exited 1 with a raw
    errno (hunt-ops #5), while a read-only file system, the same trouble, exits 5 with a fix;
    through a client the error carries its text alone, so the path is read from it then."""
    import os

    path = _denied_path(exc)
    folder = os.path.dirname(path) if path else "a folder of the memory root"
    return (f"{exc}: the user running skillbank may not write in {folder}; give it write "
            "access there (chown/chmod), or copy the root somewhere writable (cp -a) and pass "
            "that as --root")


def echo_err(line: str) -> None:
    """One line on stderr (what `typer.echo(..., err=True)` writes, without importing typer)."""
    stream = sys.stderr
    stream.write(line + "\n")
    stream.flush()


def report_error(exc: BaseException, json_mode: bool, root: Any = None) -> int:
    from skillbank.cli.hints import cli_terms

    code, message, findings = _error_details(exc, root)
    message = cli_terms(message)
    if json_mode:
        payload = {"error": message, "type": type(exc).__name__, "exit_code": code}
        if findings:
            payload["findings"] = [f.model_dump(mode="json") if hasattr(f, "model_dump") else str(f)
                                   for f in findings]
        echo_err(json.dumps(payload, ensure_ascii=False))
    else:
        # One line: a message with findings already names them (--json lists them one by one).
        echo_err(f"Error: {message}")
    return code
