"""The background owner warms up after the command that started it is answered (#27): warming
beside that command's call made the call compete with the same work on 2 cores."""

from __future__ import annotations

import os
import threading
import time

from skillbank.cli import owner


class Recorder:
    """A bank stand-in: records when warm() first reaches it."""

    def __init__(self) -> None:
        self.first: float | None = None

    def embedding_function(self, texts):
        self.first = self.first or time.monotonic()

    def __getattr__(self, name):  # skills, stats, guidelines, experiences: anything is fine
        return self

    def __call__(self, *args, **kwargs):
        return None

    def search(self, *args, **kwargs):
        return None

    def recall(self, *args, **kwargs):
        return None


def test_warm_waits_for_the_starting_command_then_runs(tmp_path):
    touched = tmp_path / owner.TOUCH
    touched.touch()
    mark = touched.stat().st_mtime_ns
    bank = Recorder()
    started = time.monotonic()
    thread = threading.Thread(target=owner.warm, args=(bank, touched, mark, 30.0))
    thread.start()
    time.sleep(0.5)
    assert bank.first is None  # still waiting: the command has not closed
    os.utime(touched, ns=(mark + 10**9, mark + 10**9))  # the command closes (owner.touch)
    thread.join(10)
    assert bank.first is not None and bank.first - started >= 0.5


def test_warm_gives_up_waiting_after_its_limit(tmp_path):
    touched = tmp_path / owner.TOUCH
    touched.touch()
    bank = Recorder()
    owner.warm(bank, touched, touched.stat().st_mtime_ns, 0.3)
    assert bank.first is not None
    owner.warm(Recorder(), None, None)  # no mark: warms at once
