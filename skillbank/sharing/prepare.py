"""A long-lived client gets ready to take the root over while it has nothing else to do.

Why: a client process loads neither Chroma nor the model (a CLI command on a served root
answers in a fraction of a second). But when the owner goes away, the client that calls next
becomes the owner, and that call then paid for `import chromadb` and the rest of what an owner
needs: 4.5-5.8 s of a 5-6 s takeover at load (docs/benchmarks.md). A process that lives on
after its first calls — an MCP server, an agent, a notebook — imports those modules in a
background thread once it has been idle for `PREPARE_IDLE` seconds, so a takeover later finds
them loaded. A one-shot CLI command exits before that and pays nothing.

`SKILLBANK_PREPARE_TAKEOVER=0` turns it off (the imports cost ~100 MB of memory per process).
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
#: What an owner needs that a client does not load (the slowest first).
MODULES = ("chromadb", "onnxruntime", "tokenizers", "skillbank.bank", "skillbank.index",
           "skillbank.embeddings", "uvicorn", "starlette.applications",
           "skillbank.sharing.owner")

#: Set once this process has imported `MODULES` (per process: modules are).
prepared = threading.Event()
_started = False
_guard = threading.Lock()
_exiting = threading.Event()
_importing = threading.Lock()


def enabled() -> bool:
    return os.environ.get("SKILLBANK_PREPARE_TAKEOVER", "1").strip().lower() not in (
        "0", "false", "no", "off")


def start(idle_since: Callable[[], float | None], done: Callable[[], bool]) -> None:
    """Once per process: import `MODULES` in a daemon thread after `idle_since()` (the
    monotonic time the last call ended; None while one runs) lies `PREPARE_IDLE` s back.
    Gives up when `done()` (the client closed or became the owner)."""
    global _started
    with _guard:
        if _started or not enabled():
            return
        _started = True
    threading.Thread(target=_prepare, args=(idle_since, done), daemon=True,
                     name="skillbank-prepare-takeover").start()


def _prepare(idle_since: Callable[[], float | None], done: Callable[[], bool]) -> None:
    global _started
    while True:
        if done() or _exiting.is_set():
            with _guard:  # that client closed (or owns the root): a later one may start again
                _started = False
            return
        since = idle_since()
        wait = PREPARE_IDLE if since is None else since + PREPARE_IDLE - time.monotonic()
        if wait <= 0:
            break
        time.sleep(min(max(wait, 0.05), PREPARE_IDLE))
    started = time.monotonic()
    with _importing:  # the exit hook waits for this: never die half-way through an import
        for name in MODULES:
            if _exiting.is_set():
                return
            try:
                importlib.import_module(name)
            except Exception:  # noqa: BLE001 - an optional part missing: the takeover says so
                log.debug("preparing a takeover: could not import %s", name, exc_info=True)
    prepared.set()
    log.debug("prepared a takeover in %.2f s", time.monotonic() - started)


@atexit.register
def _at_exit() -> None:
    """Interpreter exit: start no more imports, and let one under way finish (a daemon thread
    frozen while holding an import lock could hang the exit)."""
    _exiting.set()
    if _importing.acquire(timeout=30):
        _importing.release()
