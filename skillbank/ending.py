"""End a server process without the interpreter's teardown.

The MCP server opens its bank on daemon threads (Chroma's import and its Rust client, the
embedding model's session, the first index fill). When it stops while one of them is still
inside native code (a Ctrl-C right after `tools/list`, a client that hangs up at once), the
interpreter's finalization tears modules and C++ statics down under that thread: the process
died with SIGSEGV (exit -11) instead of 0, seen once in ~50 interrupted starts at CI load, and
logged "can't register atexit after shutdown" from the import still running. `end_process`
does the part of an exit that matters (the atexit callbacks that flush usage events and queued
background writes, the logs, stdout and stderr) and then leaves with `os._exit`, so no daemon
thread can race the teardown.
"""

from __future__ import annotations

import atexit
import logging
import os
import sys
from typing import NoReturn


def end_process(code: int) -> NoReturn:
    """Run the atexit callbacks, flush logs and stdio, and exit with `code` at once.

    A normal exit would first join non-daemon threads (`threading._shutdown`); the servers that
    end here have none that hold data (the context pool only searches). Each step is tried on
    its own, so one that fails (an atexit callback raises on Python 3.10) skips no other."""
    steps = [atexit._run_exitfuncs, logging.shutdown]  # noqa: SLF001 - a normal exit's own
    steps += [stream.flush for stream in (sys.stdout, sys.stderr) if stream is not None]
    try:
        for step in steps:
            try:
                step()
            except Exception:  # noqa: BLE001 - closed or gone (the client hung up): go on
                pass
    finally:
        os._exit(code)


def exit_code(exc: SystemExit) -> int:
    """The code `raise SystemExit(x)` asks for, as the interpreter would turn it into one
    (a message is printed to stderr and means 1)."""
    if exc.code is None:
        return 0
    if isinstance(exc.code, int):
        return exc.code
    print(exc.code, file=sys.stderr, flush=True)
    return 1
