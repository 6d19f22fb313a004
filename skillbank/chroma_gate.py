"""A gate between this process's calls into an embedded Chroma and `forget`'s zeroing of
hnswlib's files: many calls at once, or the zeroing alone.

Why (hunt-mcpmany #1, session 24): hnswlib dumps uninitialised memory into the unused capacity
of `data_level0.bin` (seen holding the text of records the process had read), and `forget`
zeroes that tail (`skillbank.forgetting.scrub_vector_files`). But Chroma writes those files in
place whenever a call applies its log and the HNSW index persists — during a search too, on any
thread — and a tail zeroed while it wrote new elements there would wipe vectors it had just
written. Every call into the embedded bindings passes this gate (`install` wraps them, shared by
every client of the same folder in the process); the zeroing waits for the calls in flight and
holds new ones back for its few milliseconds, or gives up (left for the bank's close) when the
calls in flight do not end within its wait.
"""

from __future__ import annotations

import contextlib
import errno
import os
import threading
from typing import Any, Iterator

from skillbank import storage_errors

#: Seconds the zeroing waits for Chroma calls in flight before leaving it for the close.
WAIT = 10.0


class Gate:
    """Shared by calls, held alone by the zeroing; a waiting zeroing holds new calls back, so
    a steady stream of searches cannot keep it waiting for ever."""

    def __init__(self) -> None:
        self._cond = threading.Condition()
        self._calls = 0
        self._alone = False
        self._waiting = 0
        self._mine = threading.local()  # a call made inside a call goes through

    @contextlib.contextmanager
    def call(self) -> Iterator[None]:
        depth = getattr(self._mine, "depth", 0)
        if not depth:
            with self._cond:
                while self._alone or self._waiting:
                    self._cond.wait()
                self._calls += 1
        self._mine.depth = depth + 1
        try:
            yield
        finally:
            self._mine.depth = depth
            if not depth:
                with self._cond:
                    self._calls -= 1
                    if not self._calls:
                        self._cond.notify_all()

    @contextlib.contextmanager
    def alone(self, wait: float = WAIT) -> Iterator[bool]:
        """Hold the gate alone (True), or False when the calls in flight did not end within
        `wait` seconds (new calls went on meanwhile only after it gave up)."""
        with self._cond:
            self._waiting += 1
            try:
                got = self._cond.wait_for(lambda: not self._calls and not self._alone, wait)
            finally:
                self._waiting -= 1
                if not got:
                    self._cond.notify_all()
            if got:  # a wait that timed out must not clear another holder's hold (review F5)
                self._alone = True
        try:
            yield got
        finally:
            if got:
                with self._cond:
                    self._alone = False
                    self._cond.notify_all()


class _GatedBindings:
    """Chroma's Rust bindings, each method call passing the gate.

    A failure of a call that reads like a damaged index ("Error in compaction: Failed to
    apply logs to the metadata segment") on a disk with almost no room left, or SQLite's
    "database or disk is full", is raised as the full disk it is: OSError ENOSPC, which every
    face words as a full disk (`storage_errors`), and a write kept in the experience journal
    waits for a later sync as for any index failure. Here because every call of the embedded
    Chroma passes this place, and it knows the folder (hunt-disk #2, session 32: a skill save
    on a full disk was answered "the index looks damaged ... reindex --fresh").

    In a child forked from the process that made the client every call raises ForkedError:
    the engine's threads stayed in the parent and the call waited for ever."""

    def __init__(self, bindings: Any, gate: Gate, folder: Any = None) -> None:
        self._bindings = bindings
        self._gate = gate
        self._folder = folder
        self._pid = os.getpid()

    def __getattr__(self, name: str) -> Any:
        value = getattr(self._bindings, name)
        if not callable(value):
            return value
        gate, folder, pid = self._gate, self._folder, self._pid

        def gated(*args: Any, **kwargs: Any) -> Any:
            if os.getpid() != pid:  # a forked child: Chroma's engine would never answer
                from skillbank.errors import ForkedError

                raise ForkedError.for_pid(pid)
            with gate.call():
                try:
                    return value(*args, **kwargs)
                except Exception as exc:
                    if folder is None or not storage_errors.full_disk(exc, folder):
                        raise
                    said = " ".join(str(exc).split())
                    raise OSError(errno.ENOSPC, f"No space left on device ({type(exc).__name__}: "
                                                f"{said})", str(folder)) from exc

        return gated


def install(client: Any) -> Gate | None:
    """Put the gate in front of an embedded client's bindings (once per Chroma system: the
    clients of one folder share them); the gate, or None for a client without them (a Chroma
    server, another version of chromadb)."""
    api = getattr(client, "_server", None)
    bindings = getattr(api, "bindings", None)
    if bindings is None or getattr(client, "get_settings", None) is None:
        return None
    if isinstance(bindings, _GatedBindings):
        return bindings._gate
    if not getattr(client.get_settings(), "is_persistent", False):
        return None
    gate = Gate()
    api.bindings = _GatedBindings(bindings, gate,
                                  getattr(client.get_settings(), "persist_directory", None))
    return gate


def gate_of(client: Any) -> Gate | None:
    """The gate `install` put in front of `client`'s bindings, else None."""
    bindings = getattr(getattr(client, "_server", None), "bindings", None)
    return bindings._gate if isinstance(bindings, _GatedBindings) else None
