"""A long-lived client gets ready to take the root over while it has nothing else to do.

Why: a client process loads neither Chroma nor the model (a CLI command on a served root
answers in a fraction of a second). But when the owner goes away, the client that calls next
becomes the owner, and that call then paid for `import chromadb` and the rest of what an owner
needs: 4.5-5.8 s of a 5-6 s takeover at load (docs/benchmarks.md). A process that lives on
after its first calls — an MCP server, an agent, a notebook — imports those modules in a
background thread once it has been idle for `PREPARE_IDLE` seconds, so a takeover later finds
them loaded. A one-shot CLI command exits before that and pays nothing.

`SKILLBANK_PREPARE_TAKEOVER=0` turns it off (the imports cost ~100 MB of memory per process).

The preparation belongs to the process, not to one client: every client registers, the one
thread prepares once all of them have been idle for `PREPARE_IDLE` s, and it stops only when no
open client is left (a process with several clients keeps preparing when the first closes).

Threads and imports, kept safe (each import of `MODULES` runs under `_importing`):
- fork: `os.register_at_fork` takes `_importing` before a fork and gives it back after it, so
  a child is never born while the background holds a module's import lock (a lock Python does
  not reset in the child: importing that module there hung for good). A fork waits for at most
  the one module under way (bounded by `FORK_WAIT`); the child prepares nothing by itself.
- takeover: `wait_for_import` lets a takeover wait (bounded) for the import under way instead
  of importing the same modules on a second thread at once.
- exit: the thread is a daemon and exit does not wait for it; it starts no import once the
  interpreter exits.
"""

from __future__ import annotations

import atexit
import importlib
import logging
import os
import threading
import time
from typing import Callable

log = logging.getLogger("skillbank.sharing")

#: Seconds without a call before a client imports what a takeover needs.
PREPARE_IDLE = 2.0
#: The longest a fork waits for the module import under way (then it forks regardless).
FORK_WAIT = 30.0
#: What an owner needs that a client does not load (the slowest first).
MODULES = ("chromadb", "onnxruntime", "tokenizers", "skillbank.bank", "skillbank.index",
           "skillbank.embeddings", "uvicorn", "starlette.applications",
           "skillbank.sharing.owner")

#: Set once this process has imported `MODULES` (per process: modules are).
prepared = threading.Event()
_guard = threading.Lock()
_clients: list[tuple[Callable[[], float | None], Callable[[], bool]]] = []
_thread: threading.Thread | None = None
_exiting = threading.Event()
#: Held around each background import; taken by a fork (see the module's docstring).
_importing = threading.RLock()
_held_for_fork = False
#: Set while the background thread imports `MODULES` (a takeover waits for it to clear).
_busy = threading.Event()


def enabled() -> bool:
    return os.environ.get("SKILLBANK_PREPARE_TAKEOVER", "1").strip().lower() not in (
        "0", "false", "no", "off")


def start(idle_since: Callable[[], float | None], done: Callable[[], bool]) -> None:
    """Register a client: `idle_since()` is the monotonic time its last call ended (None while
    one runs), `done()` is True once it closed or became the owner. The process's one daemon
    thread imports `MODULES` once every registered client has been idle `PREPARE_IDLE` s."""
    global _thread
    if not enabled() or prepared.is_set():
        return
    with _guard:
        _clients.append((idle_since, done))
        if _thread is not None and _thread.is_alive():
            return
        _thread = threading.Thread(target=_prepare, daemon=True,
                                   name="skillbank-prepare-takeover")
        _thread.start()


def _idle_wait() -> float | None:
    """Seconds until the process counts as idle (<= 0: it is); None: no open client is left."""
    with _guard:
        _clients[:] = [client for client in _clients if not client[1]()]
        if not _clients:
            return None
        ends = [client[0]() for client in _clients]
    if any(end is None for end in ends):
        return PREPARE_IDLE
    return max(ends) + PREPARE_IDLE - time.monotonic()  # type: ignore[type-var]


def _prepare() -> None:
    global _thread
    while True:
        wait = None if _exiting.is_set() else _idle_wait()
        if wait is None:
            with _guard:
                if _clients and not _exiting.is_set():  # registered just now: keep going
                    continue
                _thread = None  # a client opened later starts a new thread
            return
        if wait <= 0:
            break
        time.sleep(min(max(wait, 0.05), PREPARE_IDLE))
    started = time.monotonic()
    _busy.set()
    try:
        for name in MODULES:
            with _importing:
                if _exiting.is_set():
                    return
                try:
                    importlib.import_module(name)
                except Exception:  # noqa: BLE001 - an optional part missing: the takeover says so
                    log.debug("preparing a takeover: could not import %s", name, exc_info=True)
        prepared.set()
        log.debug("prepared a takeover in %.2f s", time.monotonic() - started)
    finally:
        _busy.clear()
        with _guard:
            _clients.clear()
            _thread = None


def wait_for_import(timeout: float) -> bool:
    """A takeover: wait (at most `timeout` s) for the background imports under way, so the
    same modules are not imported on two threads at once. True if none is under way now."""
    deadline = time.monotonic() + timeout
    while _busy.is_set() and time.monotonic() < deadline:
        time.sleep(0.05)
    return not _busy.is_set()


def _before_fork() -> None:
    global _held_for_fork
    _held_for_fork = _importing.acquire(timeout=FORK_WAIT)


def _after_fork_in_parent() -> None:
    global _held_for_fork
    if _held_for_fork:
        _held_for_fork = False
        _importing.release()


def _after_fork_in_child() -> None:
    """The child has no preparing thread: fresh locks, no clients; a client opened in the
    child starts its own."""
    global _guard, _importing, _held_for_fork, _thread, _busy
    _guard, _importing, _held_for_fork, _thread = threading.Lock(), threading.RLock(), False, None
    _busy = threading.Event()
    _clients.clear()


os.register_at_fork(before=_before_fork, after_in_parent=_after_fork_in_parent,
                     after_in_child=_after_fork_in_child)


@atexit.register
def _at_exit() -> None:
    """Interpreter exit: start no more imports. It does not wait for the one under way (up to
    several seconds for chromadb): the thread is a daemon."""
    _exiting.set()
