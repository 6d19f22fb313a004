"""`skillbank.signals.interruptible`: the call's result, error and scope come back unchanged;
Ctrl-C while it waits leaves the helper and says so (`abandoned`), so the command ends without
the interpreter's teardown. The Ctrl-C paths themselves are tested on real servers in
tests/test_ctrl_c_servers.py."""

from __future__ import annotations

import contextvars
import subprocess
import sys
import textwrap
import threading

import pytest

from skillbank import signals

where = contextvars.ContextVar("where", default="unset")


def test_the_result_comes_back_from_the_helper():
    ran_on: list[str] = []

    def call() -> int:
        ran_on.append(threading.current_thread().name)
        return 42

    assert signals.interruptible(call) == 42
    assert ran_on == ["skillbank-interruptible"]


def test_the_error_comes_back_as_raised():
    class Refused(Exception):
        pass

    def call() -> None:
        raise Refused("the Chroma server said no")

    with pytest.raises(Refused, match="said no"):
        signals.interruptible(call)


def test_the_callers_context_goes_with_the_call():
    token = where.set("the caller's scope")
    try:
        assert signals.interruptible(where.get) == "the caller's scope"
    finally:
        where.reset(token)


def test_off_the_main_thread_it_is_a_plain_call():
    seen: list[str] = []
    thread = threading.Thread(target=lambda: seen.append(
        signals.interruptible(lambda: threading.current_thread().name)), name="worker")
    thread.start()
    thread.join()
    assert seen == ["worker"]


def test_ctrl_c_while_waiting_leaves_the_helper_and_says_so(tmp_path):
    """SIGINT to the process while the call blocks: KeyboardInterrupt within a slice, the call
    still running on its helper, `abandoned()` True."""
    script = textwrap.dedent("""
        import os, signal, threading, time
        from skillbank import signals

        signals.ctrl_c_stops()
        started = threading.Event()

        def blocked():
            started.set()
            time.sleep(600)

        threading.Timer(0, lambda: (started.wait(60), os.kill(os.getpid(), signal.SIGINT))).start()
        assert not signals.abandoned()
        try:
            signals.interruptible(blocked)
        except KeyboardInterrupt:
            print("interrupted", signals.abandoned(), flush=True)
            signals.end_if_abandoned(0)  # ends the process here: the helper still runs
            print("not ended")
    """)
    done = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True,
                          timeout=120)
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == "interrupted True"
