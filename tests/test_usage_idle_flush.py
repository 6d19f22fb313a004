"""Use counts buffered by a process that then sits idle reach the disk without another use.

hunt-procs #1 (session 28): the buffer was written only when the next use came; an owner that
counted 20 recalls, went idle and was then killed (`kill -9`) lost all 20, although other
processes had already been shown them. A real child process counts, idles and is killed; no
timing is asserted beyond a generous bound.
"""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from pathlib import Path

from skillbank.usage import UsageLog

COUNT_THEN_IDLE = """
import sys, time
from pathlib import Path
from skillbank.usage import UsageLog
log = UsageLog(Path(sys.argv[1]))
for _ in range(20):
    log.record("exp-0123456789ab")
print("counted", log.buffered, flush=True)
time.sleep(600)
"""


def test_counts_left_buffered_by_an_idle_process_survive_its_kill(tmp_path: Path):
    path = tmp_path / "usage" / "experiences.jsonl"
    path.parent.mkdir()
    child = subprocess.Popen([sys.executable, "-c", COUNT_THEN_IDLE, str(path)],
                             stdout=subprocess.PIPE, text=True, env=os.environ.copy())
    try:
        assert child.stdout.readline().split() == ["counted", "20"]  # buffered, not written
        deadline = time.monotonic() + 120
        while time.monotonic() < deadline and UsageLog(path).get("exp-0123456789ab").uses < 20:
            time.sleep(0.5)
    finally:
        child.send_signal(signal.SIGKILL)
        child.wait(30)
    assert UsageLog(path).get("exp-0123456789ab").uses == 20


FORK_WITH_A_BUFFER = """
import os, sys, time
from pathlib import Path
from skillbank.usage import UsageLog
log = UsageLog(Path(sys.argv[1]))
for _ in range(3):
    log.record("exp-parent000000")  # buffered in the parent when it forks
pid = os.fork()
if pid == 0:
    for _ in range(2):
        log.record("exp-child0000000")
    print("child", os.getpid(), flush=True)
    time.sleep(600)
print("parent", flush=True)
time.sleep(600)
"""


def test_a_forked_child_writes_its_own_counts_and_never_the_parents_again(tmp_path: Path):
    """Review of session 28: a child forked with buffered counts never started a flusher (its
    counts were lost at kill -9 while idle) and wrote the parent's buffer a second time; a fork
    while the flusher held the log's lock left the child's first count blocked."""
    path = tmp_path / "usage" / "experiences.jsonl"
    proc = subprocess.Popen([sys.executable, "-c", FORK_WITH_A_BUFFER, str(path)],
                            stdout=subprocess.PIPE, text=True, env=os.environ.copy())
    child = None
    try:
        for _ in range(2):
            words = proc.stdout.readline().split()
            if words and words[0] == "child":
                child = int(words[1])
        assert child is not None
        deadline = time.monotonic() + 120
        while time.monotonic() < deadline and (
                UsageLog(path).get("exp-child0000000").uses < 2
                or UsageLog(path).get("exp-parent000000").uses < 3):
            time.sleep(0.5)
        time.sleep(1)  # a second write of the parent's buffer would land by now
    finally:
        if child is not None:
            os.kill(child, signal.SIGKILL)
        proc.send_signal(signal.SIGKILL)
        proc.wait(30)
    counts = UsageLog(path)
    assert counts.get("exp-child0000000").uses == 2
    assert counts.get("exp-parent000000").uses == 3
