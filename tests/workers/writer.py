"""Durability worker: open a bank and write experiences, guidelines and skills until killed.

    python writer.py ROOT --seed N [--kinds exp,gl,skill] [--cycle] [--limit N]
                     [--crash-at POINT] [--chroma-url URL --prefix P]

Prints `SYNC <json>` (what the opening sync repaired) and `READY`, then, after each call has
returned, one flushed line `ACK <kind> <id> <json text>`; the test SIGKILLs it at a random moment
and checks that every ACKed write survived.

`--crash-at` kills the process itself (SIGKILL) at one exact point of the next write, after
printing `PENDING <kind> <id-or-name> <json text>`:

    exp-index    experience: journal line fsynced, index not yet written
    exp-torn     experience: half of the journal line written and fsynced
    gl-index     guideline: file written, index not yet written
    gl-replace   guideline: temp file written, not yet renamed over the target
    skill-index  skill: SKILL.md written, index not yet written
    skill-replace skill: temp SKILL.md written, not yet renamed
"""

from __future__ import annotations

import argparse
import json
import os
import random
import signal
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from common import open_bank, words  # noqa: E402


def say(*parts: object) -> None:
    sys.stdout.write(" ".join(str(p) for p in parts) + "\n")
    sys.stdout.flush()


def die() -> None:
    os.kill(os.getpid(), signal.SIGKILL)


def texts(seed: int, i: int, rng: random.Random) -> dict[str, str]:
    tag = f"r{seed}n{i}"
    return {
        "task": f"durability {tag} {words(rng, 5)}",
        "feedback": f"feedback {tag} {words(rng, 3)}",
        "rule": f"Always {words(rng, 4)} {tag} before {words(rng, 2)}.",
        "skill": f"dur-{seed}-{i}",
        "description": f"Handles {words(rng, 4)} {tag} work.",
    }


def arm(bank, point: str) -> None:
    """Patch the bank so that the next write of one kind dies at `point`."""
    import skillbank.fsutil as fsutil
    import skillbank.store.files.experiences as em  # the journal's files column appends

    if point == "exp-index":
        bank.experiences._apply = lambda *a, **k: die()
    elif point == "exp-torn":
        def torn(path, line):
            data = line.rstrip("\n").encode("utf-8")
            with open(path, "ab") as handle:
                handle.write(data[: len(data) // 2])
                handle.flush()
                os.fsync(handle.fileno())
            die()
        em.append_line = torn
    elif point in ("gl-index", "skill-index"):
        memory = bank.guidelines if point == "gl-index" else bank.skills
        memory.index.upsert = lambda *a, **k: die()
    elif point in ("gl-replace", "skill-replace"):
        real = os.replace

        def replace(src, dst, *a, **k):
            if str(dst).endswith(".md"):
                die()
            return real(src, dst, *a, **k)
        fsutil.os.replace = replace  # the module's `os` is the os module: patch its attribute
    else:
        raise SystemExit(f"unknown crash point {point}")


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("root")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--kinds", default="exp,gl,skill")
    parser.add_argument("--crash-at", default=None)
    parser.add_argument("--limit", type=int, default=100_000)
    parser.add_argument("--cycle", action="store_true", help="kinds in turn, not at random")
    parser.add_argument("--chroma-url", default=None)
    parser.add_argument("--prefix", default=None)
    args = parser.parse_args()

    bank = open_bank(args.root, chroma_url=args.chroma_url, prefix=args.prefix, sync=False)
    report = bank.sync()
    say("SYNC", json.dumps({kind: {"added": len(r.added), "changed": len(r.changed),
                                   "removed": len(r.removed), "skipped": len(r.skipped)}
                            for kind, r in report.items()}))
    rng = random.Random(args.seed)
    kinds = args.kinds.split(",")
    say("READY")
    if args.crash_at:
        kind = args.crash_at.split("-")[0]
        t = texts(args.seed, 0, rng)
        arm(bank, args.crash_at)
        if kind == "exp":
            say("PENDING exp -", json.dumps(t["task"]))
            bank.experiences.record(task=t["task"], outcome="failure", feedback=t["feedback"])
        elif kind == "gl":
            say("PENDING gl -", json.dumps(t["rule"]))
            bank.guidelines.add(t["rule"], topic="durability")
        else:
            say("PENDING skill", t["skill"], json.dumps(t["description"]))
            bank.skills.create(t["skill"], t["description"], "# Steps\n\nDo it.\n")
        say("SURVIVED")  # the crash point was not reached: the test fails on this
        return
    for i in range(args.limit):
        kind = kinds[i % len(kinds)] if args.cycle else rng.choice(kinds)
        t = texts(args.seed, i, rng)
        if kind == "exp":
            eid = bank.experiences.record(task=t["task"], outcome=rng.choice(["success", "failure"]),
                                          feedback=t["feedback"], tags=[f"r{args.seed}"])
            say("ACK exp", eid, json.dumps(t["task"]))
        elif kind == "gl":
            entry = bank.guidelines.add(t["rule"], topic="durability")
            say("ACK gl", entry.guideline_id, json.dumps(t["rule"]))
        else:
            bank.skills.create(t["skill"], t["description"], f"# Steps\n\nRun {t['skill']}.\n")
            say("ACK skill", t["skill"], json.dumps(t["description"]))
    bank.close()
    say("DONE")


if __name__ == "__main__":
    main()
