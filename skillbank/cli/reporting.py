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

        from skillbank import storage_errors

        # The wording is shared with the MCP tools and the adapters (hunt-disk #3, session 29);
        # through a client the errno is read from the text (`storage_errors.error_number`).
        number = storage_errors.error_number(exc)
        if number == errno.EROFS:  # exit 5, as for any read-only place (crash hunt, s18)
            return 5, storage_errors.read_only_message(exc, _root(root)), []
        if isinstance(exc, PermissionError) and _under_root(exc, root):  # exit 5, as EROFS
            return 5, storage_errors.permission_message(exc), []
        if number in (errno.ENOSPC, errno.EFBIG):
            return 1, storage_errors.storage_message(exc) or str(exc), []
        return 1, str(exc), []
    from skillbank.storage_errors import storage_message

    full = storage_message(exc)  # SQLite's (Chroma's) "database or disk is full"
    if full is not None:
        return 1, full, []
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


def _root(root: Any = None) -> Any:
    """The command's memory root: its --root, else SKILLBANK_ROOT or the default."""
    import os

    from skillbank.settings import DEFAULT_ROOT, ENV_PREFIX

    return root or os.environ.get(f"{ENV_PREFIX}ROOT") or DEFAULT_ROOT


def _under_root(exc: PermissionError, root: Any = None) -> bool:
    """Whether the denied path is in the memory root (`root`: the command's --root, else
    SKILLBANK_ROOT or the default), or names none: only then is it the root's trouble. An
    `experiences export` to a folder outside it exited 5 with "copy the root somewhere
    writable" (review, session 21): that is the target's, exit 1 with its errno."""
    from skillbank.storage_errors import under_root

    return under_root(exc, _root(root))


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
