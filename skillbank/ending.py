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
    """Run the atexit callbacks, flush logs and stdio, and exit with `code` at once."""
    try:
        atexit._run_exitfuncs()  # noqa: SLF001 - what a normal exit runs first; kept, in order
        logging.shutdown()
        for stream in (sys.stdout, sys.stderr):
            try:
                if stream is not None:
                    stream.flush()
            except (OSError, ValueError):  # closed or gone (the client hung up): nothing to keep
                pass
    finally:
        os._exit(code)
