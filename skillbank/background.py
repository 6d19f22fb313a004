"""A background writer: memory writes that must not hold up an agent's turn.

Recording a run, learning from feedback and distilling lessons take tens of milliseconds to a
second (embedding, a journal fsync, an index upsert). An agent should not wait for them between
the user's request and its answer, so the faces hand them to one writer thread per bank.

What it promises:

* **Nothing is lost silently.** A job that raises is logged (with its traceback unless it is a
  `SkillbankError`), counted in `failed` and kept in `last_error`; its `Future` carries the
  exception. `flush()` waits until every job handed over so far has run; `Skillbank.close()`
  flushes before it lets go of the root, and so does interpreter exit for a bank never closed.
  At exit a model distiller waiting for a reply gives up at once (`skillbank.distill.llm.hurry`),
  so the queued runs are written with the model-free distiller; what still cannot finish in
  the exit's time is logged (how many writes, and which), never dropped without a word.
* **Bounded.** At most `maxsize` jobs wait; a caller that submits more waits for room
  (back-pressure), never drops a job. After `close()` (or from the writer thread itself, which
  would wait on itself) a job runs inline in the caller, so it still happens.
* **In order.** One thread runs jobs first in, first out, so a run's experience is written
  before the guideline learned from its feedback, as it would be inline.
* **As the caller.** A job runs in a copy of the context it was submitted from
  (`contextvars.copy_context`), so the caller's `skillbank.scope` travels with it: a write
  queued by user A's run lands in A's namespace, as A, even when user B's job runs next.
"""

from __future__ import annotations

import atexit
import contextvars
import logging
import sys
import threading
import time
import weakref
from collections import deque
from concurrent.futures import Future
from typing import Any, Callable

log = logging.getLogger("skillbank.background")

__all__ = ["BackgroundWriter"]


class BackgroundWriter:
    """One daemon thread that runs submitted write jobs in order (see the module docstring)."""

    def __init__(self, name: str = "skillbank-writer", maxsize: int = 1024) -> None:
        if maxsize < 1:
            raise ValueError("maxsize must be at least 1")
        self.name = name
        self.maxsize = maxsize
        self.submitted = 0
        self.done = 0
        self.failed = 0
        self.last_error: BaseException | None = None
        self._jobs: deque[tuple[Future, Callable[..., Any], tuple, dict, str,
                                contextvars.Context]] = deque()
        self._running = 0  # jobs taken off the queue and not finished yet
        self._current = ""  # what the job running on the thread is (for the exit's log line)
        self._cond = threading.Condition()
        self._thread: threading.Thread | None = None
        self._closed = False

    # Submitting -----------------------------------------------------------------------------------
    def submit(self, fn: Callable[..., Any], *args: Any, what: str = "", **kwargs: Any) -> Future:
        """Run `fn(*args, **kwargs)` on the writer thread; returns its `Future`.

        `what` names the job in log lines ("recording a run"). Waits for room when `maxsize`
        jobs are already waiting.
        """
        future: Future = Future()
        what = what or getattr(fn, "__name__", "a write")
        context = contextvars.copy_context()  # the caller's scope goes with the job
        with self._cond:
            inline = self._closed or threading.current_thread() is self._thread
            if not inline:
                self._start()
                while len(self._jobs) >= self.maxsize and not self._closed:
                    self._cond.wait()
                inline = self._closed
            self.submitted += 1
            if not inline:
                self._jobs.append((future, fn, args, kwargs, what, context))
                self._cond.notify_all()
                return future
            self._running += 1
        self._run(future, fn, args, kwargs, what, context)
        return future

    def _start(self) -> None:
        if self._thread is None or not self._thread.is_alive():
            self._thread = threading.Thread(target=self._loop, name=self.name, daemon=True)
            self._thread.start()
            _live.add(self)

    # The thread -------------------------------------------------------------------------------------
    def _loop(self) -> None:
        while True:
            with self._cond:
                while not self._jobs and not self._closed:
                    self._cond.wait()
                if not self._jobs:
                    return  # closed and drained
                job = self._jobs.popleft()
                self._running += 1
                self._current = job[4]
                self._cond.notify_all()  # room for a waiting submitter
            self._run(*job)

    def _run(self, future: Future, fn: Callable[..., Any], args: tuple, kwargs: dict,
             what: str, context: contextvars.Context) -> None:
        error: BaseException | None = None
        if future.set_running_or_notify_cancel():
            try:
                future.set_result(context.run(fn, *args, **kwargs))
            except BaseException as exc:  # noqa: BLE001 - kept on the future and logged
                error = exc
                future.set_exception(exc)
        with self._cond:
            self._running -= 1
            self.done += 1
            if error is not None:
                self.failed += 1
                self.last_error = error
            self._cond.notify_all()
        if error is not None:
            from skillbank.errors import SkillbankError

            log.warning("skillbank background job failed (%s): %s", what, error,
                        exc_info=(type(error), error, error.__traceback__)
                        if not isinstance(error, SkillbankError) else None)

    # Waiting and closing ------------------------------------------------------------------------------
    @property
    def pending(self) -> int:
        """Jobs handed over and not finished yet (waiting or running)."""
        with self._cond:
            return len(self._jobs) + self._running

    def flush(self, timeout: float | None = None) -> bool:
        """Wait until every job submitted so far has run; False if `timeout` ran out first."""
        if threading.current_thread() is self._thread:
            return False  # the writer cannot wait for itself
        deadline = None if timeout is None else time.monotonic() + timeout
        with self._cond:
            target = self.submitted
            while self.done < target:
                remaining = None if deadline is None else deadline - time.monotonic()
                if remaining is not None and remaining <= 0:
                    return False
                self._cond.wait(remaining)
        return True

    def close(self, timeout: float | None = None) -> bool:
        """Run what is queued, stop the thread; later jobs run inline. False on a timeout."""
        flushed = self.flush(timeout)
        with self._cond:
            self._closed = True
            self._cond.notify_all()
            thread = self._thread
        if thread is not None and thread is not threading.current_thread():
            thread.join(timeout)
        _live.discard(self)
        return flushed

    def __repr__(self) -> str:
        return (f"BackgroundWriter(pending={self.pending}, done={self.done}, "
                f"failed={self.failed})")


_live: "weakref.WeakSet[BackgroundWriter]" = weakref.WeakSet()
#: Seconds interpreter exit waits for a writer's queue (and as long again for its thread).
EXIT_TIMEOUT = 60.0


@atexit.register
def _flush_at_exit() -> None:
    """A bank that was never closed still gets its queued writes on a normal exit; what
    cannot be written in time is said (a hung chat model's queued runs died with the thread
    without a word)."""
    llm = sys.modules.get("skillbank.distill.llm")
    if llm is not None:
        llm.hurry()  # a model that does not answer must not hold the queued runs
    for writer in list(_live):
        try:
            if not writer.close(timeout=EXIT_TIMEOUT):
                with writer._cond:
                    waiting = [job[4] for job in writer._jobs]
                    running = writer._running
                if not waiting and not running:
                    continue  # finished while the thread was joined
                log.error("skillbank: %s: %d background write(s) did not finish before the "
                          "interpreter exited and are lost (%s%s)", writer.name,
                          len(waiting) + running,
                          f"still running: {writer._current}" if running else "",
                          (", " if running else "") + f"queued: {', '.join(waiting)}"
                          if waiting else "")
        except Exception:  # noqa: BLE001 - exiting anyway
            log.exception("skillbank: flushing background writes at exit failed")
