"""Ctrl-C stops a long-running command however it was started.

A program started in the background by a non-interactive shell (`cmd &` in a script, a CI job
run that way, a supervisor's shell) inherits SIGINT as *ignored*, and Python then installs no
KeyboardInterrupt for it: the interrupt a script, a supervisor or a test sends is dropped, and a
command that runs until Ctrl-C (`skills watch`, the stdio MCP server, `skillbank server`,
`skillbank ui`) runs on for good. `ctrl_c_stops` gives such a command Python's own handler while
it runs, so it stops the way it does when started at a terminal.
"""

from __future__ import annotations

import contextlib
import signal
import threading
from typing import Callable, Iterator


def ctrl_c_stops() -> Callable[[], None]:
    """Make SIGINT raise KeyboardInterrupt (Python's default handler) from now on, even in a
    process that inherited it ignored; returns what puts the previous handler back. Off the
    main thread nothing changes (only the main thread may set handlers, and gets the signal)."""
    if threading.current_thread() is not threading.main_thread():
        return lambda: None
    previous = signal.getsignal(signal.SIGINT)
    signal.signal(signal.SIGINT, signal.default_int_handler)

    def restore() -> None:
        signal.signal(signal.SIGINT, previous if previous is not None else signal.SIG_DFL)

    return restore


@contextlib.contextmanager
def ctrl_c_stopping() -> Iterator[None]:
    """`ctrl_c_stops` for the length of a `with` block."""
    restore = ctrl_c_stops()
    try:
        yield
    finally:
        restore()
