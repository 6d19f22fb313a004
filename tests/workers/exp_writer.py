"""Concurrency worker: open a root (embedded or through a Chroma server), write experiences, close.

    python exp_writer.py ROOT --worker W --count N [--chroma-url URL --prefix P] [--lock-timeout T]

Prints `OPENED <unix time>` once the bank is open (embedded: once it owns the root), then
`ACK <id> <json task>` after each record, then `CLOSED <unix time>`. Tasks carry a unique token
`w<W>x<i>q` so that recall by the exact task must find the record.
"""

from __future__ import annotations

import argparse
import json
import random
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from common import open_bank, words  # noqa: E402


def task_text(worker: int, i: int, rng: random.Random) -> str:
    return f"stress w{worker}x{i}q {words(rng, 4)}"


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("root")
    parser.add_argument("--worker", type=int, required=True)
    parser.add_argument("--count", type=int, default=20)
    parser.add_argument("--chroma-url", default=None)
    parser.add_argument("--prefix", default=None)
    parser.add_argument("--lock-timeout", type=float, default=None)
    parser.add_argument("--write-lock-timeout", type=float, default=None,
                        help="how long a write waits for another process's (default: the bank's)")
    parser.add_argument("--hold", type=float, default=0.0, help="seconds to keep the root open")
    args = parser.parse_args()

    rng = random.Random(args.worker)
    bank = open_bank(args.root, chroma_url=args.chroma_url, prefix=args.prefix,
                     lock_timeout=args.lock_timeout, write_lock_timeout=args.write_lock_timeout)
    print("OPENED", time.time(), flush=True)
    out = []
    for i in range(args.count):
        task = task_text(args.worker, i, rng)
        eid = bank.experiences.record(task=task, outcome=rng.choice(["success", "failure"]),
                                      feedback=f"feedback w{args.worker}x{i}q",
                                      tags=[f"w{args.worker}"])
        out.append(f"ACK {eid} {json.dumps(task)}")
        if len(out) >= 50:
            print("\n".join(out), flush=True)
            out.clear()
    if out:
        print("\n".join(out), flush=True)
    time.sleep(args.hold)
    print("CLOSING", time.time(), flush=True)
    bank.close()
    print("CLOSED", time.time(), flush=True)


if __name__ == "__main__":
    main()
