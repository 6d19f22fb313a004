"""A fork while another thread appends to a usage log never leaves the log locked (review of
fix-disk, session 29). Appends take the log's exclusive flock; a forked child shares the open
file that holds it, so closing the descriptor in the parent did not let it go: the child's own
first rating, and the parent's later appends, waited until the child exited (199 of 200
children hung). The lock is now released before the descriptor is closed.

What forks and keeps running: multiprocessing's fork start method, gunicorn --preload, celery
prefork. POSIX only (fork, flock)."""

from __future__ import annotations

import os
import signal
import sys
import threading

import pytest

from skillbank import usage

pytestmark = pytest.mark.skipif(not hasattr(os, "fork") or sys.platform == "win32",
                                reason="fork and flock are POSIX")

CHILDREN = 20
#: A child whose own rating has not been written by then is stuck (generous: a loaded CI).
STUCK_AFTER_SECONDS = 30


def test_children_forked_while_the_parent_appends_can_write_their_own_ratings(tmp_path,
                                                                               monkeypatch):
    """Fails before: nearly every child waits on the lock its inherited copy holds."""
    monkeypatch.setattr(usage, "FOLD_BYTES", 1 << 40)  # appends alone, no fold
    log = usage.UsageLog(tmp_path / "usage" / "skills.jsonl")
    stop = threading.Event()

    def writer() -> None:
        n = 0
        while not stop.is_set():
            log.record(f"s{n % 7}", ok=True)  # a rating: written through (append + fsync)
            n += 1

    thread = threading.Thread(target=writer, daemon=True)
    thread.start()
    hung = 0
    try:
        for _ in range(CHILDREN):
            pid = os.fork()
            if pid == 0:  # pragma: no cover - the child
                signal.alarm(STUCK_AFTER_SECONDS)
                try:
                    log.record("child", ok=True)
                finally:
                    os._exit(0)
            _, status = os.waitpid(pid, 0)
            hung += os.WIFSIGNALED(status) and os.WTERMSIG(status) == signal.SIGALRM
    finally:
        stop.set()
        thread.join(timeout=60)
    assert hung == 0
    log.record("parent", ok=True)  # and the parent still writes
    assert log.get("parent").successes == 1
