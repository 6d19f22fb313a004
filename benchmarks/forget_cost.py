"""What "forget means gone" costs, and what the audit log adds to a write (issue 22).

Two arms on one bank of N experiences, alternating forget by forget so machine load falls on
both alike:

* baseline — `bank.forget(id)` with the erasing switched off (the journal's forget event and the
  index delete only: what a forget cost before, when the text stayed on disk);
* erasing  — the real `bank.forget(id)`: journal lines overwritten, Chroma's log rows cleared,
  FTS merged and VACUUM (by a child process since session 24), hnswlib's unused capacity
  zeroed (between Chroma's calls), snapshots dropped.

Then `experiences.record` with and without the audit log (the memory's `audit` set to None), also
alternating. Hash embedding (no model): the figures are the memory's own work. Wall times
(the VACUUM is I/O); the machine load is printed before and after.

    nice -n 10 .venv/bin/python benchmarks/forget_cost.py [--records 5000] [--forgets 6]
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

import skillbank.forgetting as forgetting  # noqa: E402
from skillbank import Skillbank  # noqa: E402
from skillbank.embeddings import HashEmbedding  # noqa: E402


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--records", type=int, default=5000)
    parser.add_argument("--forgets", type=int, default=6, help="forgets per arm")
    parser.add_argument("--writes", type=int, default=100, help="records per audit arm")
    args = parser.parse_args()
    print(f"load before: {os.getloadavg()}")
    root = Path(tempfile.mkdtemp()) / "root"
    bank = Skillbank.open(root, embedding_function=HashEmbedding(), include_bundled=False)
    try:
        ids = bank.experiences.record_many([
            {"task": f"Task {i} about topic {i % 37} " + "word " * 40, "outcome": "success",
             "feedback": f"Feedback {i} " + "more " * 30} for i in range(args.records)])
        size = (root / "chroma" / "chroma.sqlite3").stat().st_size / 1e6
        print(f"{args.records} experiences, chroma.sqlite3 {size:.1f} MB")
        real_chroma, real_journal = forgetting.erase_from_chroma, forgetting.erase_journal_lines
        times: dict[str, list[float]] = {"baseline": [], "erasing": []}
        victims = iter(ids)
        for _ in range(args.forgets):
            for arm in ("baseline", "erasing"):
                if arm == "baseline":
                    forgetting.erase_from_chroma = lambda *a, **k: False  # type: ignore[assignment]
                    forgetting.erase_journal_lines = lambda *a, **k: []  # type: ignore[assignment]
                try:
                    started = time.perf_counter()
                    bank.forget(next(victims))
                    times[arm].append(time.perf_counter() - started)
                finally:
                    forgetting.erase_from_chroma = real_chroma  # type: ignore[assignment]
                    forgetting.erase_journal_lines = real_journal  # type: ignore[assignment]
        base, real = (statistics.median(times[a]) for a in ("baseline", "erasing"))
        print(f"forget: baseline {base * 1000:.0f} ms, erasing {real * 1000:.0f} ms median "
              f"(x{real / base:.1f}; +{(real - base) * 1000:.0f} ms)")
        memory = bank.experiences
        audit = memory.audit
        writes: dict[str, list[float]] = {"no audit": [], "audit": []}
        for i in range(args.writes):
            for arm in ("no audit", "audit"):
                memory.audit = None if arm == "no audit" else audit
                started = time.perf_counter()
                bank.experiences.record(task=f"Audit cost write {arm} {i}", outcome="success")
                writes[arm].append(time.perf_counter() - started)
        memory.audit = audit
        off, on = (statistics.median(writes[a]) for a in ("no audit", "audit"))
        print(f"record: no audit {off * 1000:.2f} ms, audit {on * 1000:.2f} ms median "
              f"(+{(on - off) * 1000:.2f} ms)")
    finally:
        bank.close()
    print(f"load after: {os.getloadavg()}")


if __name__ == "__main__":
    main()
