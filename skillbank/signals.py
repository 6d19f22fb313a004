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
`interruptible` runs such a call on a helper thread and waits for it in short slices, so the
handler runs within `SLICE` s wherever the signal landed. A helper left running by Ctrl-C may
be inside native code (the model, Chroma's Rust client): the command then ends with
`skillbank.ending.end_process`, as the MCP server does, not through the interpreter's teardown.
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


class Terminated(KeyboardInterrupt):
    """SIGTERM, raised where Ctrl-C's KeyboardInterrupt is (`sigterm_stops`)."""


def _terminated(signum: int, frame: object) -> None:
    raise Terminated("SIGTERM")


def sigterm_stops() -> Callable[[], None]:
    """Make SIGTERM stop the process as Ctrl-C does (`Terminated`, a KeyboardInterrupt) from
    now on; returns what puts the previous handler back. Off the main thread nothing changes.

    SIGTERM is what `systemctl stop`, `docker stop`, a supervisor and MCP clients send, and
    Python's default for it ends the process with no clean-up: `skillbank serve` and the team
    worker exited 143 with the bank never closed, so buffered use counts, the background
    writer's queue and the keyword snapshot were lost and `.owner.json` was left (hunt-ops #2).
    uvicorn catches SIGTERM itself while it serves, then raises it again once it has stopped;
    this handler is what that raise reaches."""
    if threading.current_thread() is not threading.main_thread():
        return lambda: None
    previous = signal.getsignal(signal.SIGTERM)
    signal.signal(signal.SIGTERM, _terminated)

    def restore() -> None:
        signal.signal(signal.SIGTERM, previous if previous is not None else signal.SIG_DFL)

    return restore


@contextlib.contextmanager
def ctrl_c_stopping() -> Iterator[None]:
    """`ctrl_c_stops` for the length of a `with` block."""
    restore = ctrl_c_stops()
    try:
        yield
    finally:
        restore()


#: Helpers `interruptible` left running when Ctrl-C came, as their "finished" events.
_left: list[threading.Event] = []


def interruptible(call: Callable[[], T]) -> T:
    """`call()`, run so that Ctrl-C interrupts it wherever the signal lands (see the module's
    docstring): on a daemon thread, in this thread's context (scope), while the main thread
    waits in `SLICE` s steps. Its result or exception comes back here; on KeyboardInterrupt
    the helper is left running (`abandoned()` says so). Off the main thread it is `call()`.

    The wait is on an event, not `Thread.join`: a KeyboardInterrupt inside `join` makes
    Python 3.11 mark the still-running thread as stopped (its bpo-45274 clean-up)."""
    if threading.current_thread() is not threading.main_thread():
        return call()
    context = contextvars.copy_context()
    outcome: dict[str, object] = {}
    finished = threading.Event()

    def run() -> None:
        try:
            outcome["value"] = context.run(call)
        except BaseException as exc:  # noqa: BLE001 - handed back to the caller
            outcome["error"] = exc
        finally:
            finished.set()

    try:
        threading.Thread(target=run, name="skillbank-interruptible", daemon=True).start()
        while not finished.wait(SLICE):
            pass
    except KeyboardInterrupt:
        _left.append(finished)
        raise
    if "error" in outcome:
        raise outcome["error"]  # type: ignore[misc]
    return outcome["value"]  # type: ignore[return-value]


def abandoned() -> bool:
    """Whether a helper that Ctrl-C left is still running."""
    return any(not finished.is_set() for finished in _left)


def end_if_abandoned(code: int = 0) -> None:
    """After a Ctrl-C: when a helper is still running (it may be inside native code, the model
    or Chroma's client), end the process now with `skillbank.ending.end_process`, since a
    normal exit's teardown could crash under it; otherwise return."""
    if abandoned():
        from skillbank.ending import end_process

        end_process(code)
