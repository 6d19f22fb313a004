"""Open time of a long-lived root whose usage log holds ~600k recall hits (hunt-exp #4).

    python benchmarks/usage_log_open.py                 # build a root, open it 4 times
    python benchmarks/usage_log_open.py --root DIR --opens 3

A memory counts a use of every record it shows: one line per record per recall in
`usage/experiences.jsonl`. The root is built as the hunt built it: 20 experiences, 300 real
recalls of k=3 (900 lines), then those lines repeated to 599,400 (~200k agent turns at three
experiences a block; 47 MB). Each open is a fresh process (`Skillbank.open`, then the usage
counts read); its wall time, peak RSS, the uses it counts and the log's size after it are
printed. With a skillbank that folds the log, the first open folds it and the later ones read
the folded log; run it with an older skillbank first on PYTHONPATH for the before figures.
Timings are printed, never asserted; the machine load is printed next to them.
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
import tempfile
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from _synthetic import load_note  # noqa: E402

OPEN = """
import resource, sys, time
started = time.perf_counter()
from skillbank import Skillbank
bank = Skillbank.open(sys.argv[1])
opened = time.perf_counter() - started
uses = sum(u.uses for u in bank.experiences.usage.all().values())
bank.close()
print(f"{opened:.2f} {resource.getrusage(resource.RUSAGE_SELF).ru_maxrss // 1024} {uses}")
"""


def build(root: Path, repeat: int) -> None:
    from skillbank import Skillbank

    with Skillbank.open(root) as bank:
        for i in range(20):
            bank.experiences.record(task=f"Back up the wiki server {i}", outcome="success")
        for _ in range(300):
            bank.experiences.recall("back up the wiki", k=3)
    path = root / "usage" / "experiences.jsonl"
    lines = path.read_bytes()
    with path.open("ab") as handle:
        for _ in range(repeat - 1):
            handle.write(lines)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--root", type=Path, help="an existing root (else one is built)")
    parser.add_argument("--opens", type=int, default=4)
    parser.add_argument("--repeat", type=int, default=666,
                        help="how many times the 900 lines of 300 recalls are in the log")
    args = parser.parse_args()
    root = args.root or Path(tempfile.mkdtemp(prefix="usage-open-")) / "root"
    if args.root is None:
        build(root, args.repeat)
    path = root / "usage" / "experiences.jsonl"
    lines = path.read_bytes().count(b"\n")
    print(f"{load_note()}; usage log {path.stat().st_size:,} bytes, {lines:,} lines")
    for number in range(1, args.opens + 1):
        out = subprocess.run([sys.executable, "-c", OPEN, str(root)], capture_output=True,
                             text=True, env=dict(os.environ), check=True).stdout.split()
        print(f"open {number}: {out[0]} s, peak RSS {out[1]} MB, {int(out[2]):,} uses counted, "
              f"usage log now {path.stat().st_size:,} bytes")


if __name__ == "__main__":
    main()
