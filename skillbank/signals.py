"""Ctrl-C stops a long-running command however it was started.

A program started in the background by a non-interactive shell (`cmd &` in a script, a CI job
run that way, a supervisor's shell) inherits SIGINT as *ignored*, and Python then installs no
KeyboardInterrupt for it: the interrupt a script, a supervisor or a test sends is dropped, and a
command that runs until Ctrl-C (`skills watch`, the stdio MCP server, `skillbank server`,
`skillbank ui`) runs on for good. `ctrl_c_stops` gives such a command Python's own handler while
it runs, so it stops the way it does when started at a terminal.

A handler is not enough while the main thread waits inside a blocking call (the first request
to a Chroma server or PostgreSQL that never answers): the kernel may hand a process's SIGINT to
any thread that does not block it (numpy's OpenBLAS workers, onnxruntime's pool, a Python
thread), and Python only runs the handler once the main thread executes bytecode again, which
a recv() without a timeout never lets it do. `skillbank ui` ran on after Ctrl-C that way (about
one CI-like run in six; the same hang on demand by sending SIGINT to another thread).
`interruptible` runs such a call on a helper thread that blocks SIGINT and waits for it in
short slices, so the handler runs within `SLICE` s wherever the signal landed.
"""

from __future__ import annotations

import contextlib
import contextvars
import signal
import threading
from typing import Callable, Iterator, TypeVar

T = TypeVar("T")

#: How often the main thread looks up from a wait in `interruptible` (its Ctrl-C latency).
SLICE = 0.2


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


def interruptible(call: Callable[[], T]) -> T:
    """`call()`, run so that Ctrl-C interrupts it wherever the signal lands (see the module's
    docstring): on a daemon thread that blocks SIGINT, in this thread's context (scope), while
    the main thread waits in `SLICE` s steps. Its result or exception comes back here; on
    KeyboardInterrupt the helper is left to the process's exit. Off the main thread, or with
    no signal masks on this platform, it is just `call()`."""
    if threading.current_thread() is not threading.main_thread() or \
            not hasattr(signal, "pthread_sigmask"):
        return call()
    context = contextvars.copy_context()
    outcome: dict[str, object] = {}

    def run() -> None:
        signal.pthread_sigmask(signal.SIG_BLOCK, {signal.SIGINT})
        try:
            outcome["value"] = context.run(call)
        except BaseException as exc:  # noqa: BLE001 - handed back to the caller
            outcome["error"] = exc

    helper = threading.Thread(target=run, name="skillbank-interruptible", daemon=True)
    helper.start()
    while helper.is_alive():
        helper.join(SLICE)
    if "error" in outcome:
        raise outcome["error"]  # type: ignore[misc]
    return outcome["value"]  # type: ignore[return-value]
