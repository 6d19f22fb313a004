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
