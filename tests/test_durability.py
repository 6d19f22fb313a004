"""Crash tests: SIGKILL a writer at random moments and at exact points of a write; every write
that was acknowledged survives, nothing half-written is ever visible, and the next open repairs
the index from the files. Plus: deleting chroma/ and running `skillbank reindex` (the CLI, in
another process) restores the same search results.

Each root is opened in this process at most once, after every writer process has ended: Chroma's
PersistentClient caches its system per path inside a process (see tests/workers/).
"""

from __future__ import annotations

import json
import os
import random
import shutil
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from workers.checks import Ack, check_acks, check_files_match_index, parse_acks
from workers.common import open_bank, subprocess_env, worker_cmd

pytestmark = pytest.mark.slow

#: SKILLBANK_CRASH_SEED=<n> replays one run of the random kill test.
BASE_SEED = int(os.environ.get("SKILLBANK_CRASH_SEED") or random.SystemRandom().randrange(10**6))
ROUNDS = 4


class Writer:
    """A `tests/workers/writer.py` process whose stdout is read line by line."""

    def __init__(self, root: Path, *args: object) -> None:
        self.proc = subprocess.Popen(worker_cmd("writer.py", root, *args), env=subprocess_env(),
                                     stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        self.lines: list[str] = []

    def wait_for(self, word: str, timeout: float = 60) -> str:
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            line = self.proc.stdout.readline()
            if not line:
                break
            self.lines.append(line)
            if line.startswith(word):
                return line
        self.proc.kill()
        raise AssertionError(f"writer never said {word}: {''.join(self.lines)[-2000:]}"
                             f"\nstderr: {self.proc.stderr.read()[-3000:]}")

    def kill_after(self, seconds: float) -> str:
        time.sleep(seconds)
        self.proc.send_signal(signal.SIGKILL)
        out, err = self.proc.communicate(timeout=30)
        self.lines.append(out)
        return "".join(self.lines)

    def finish(self, timeout: float = 60) -> tuple[int, str, str]:
        out, err = self.proc.communicate(timeout=timeout)
        self.lines.append(out)
        return self.proc.returncode, "".join(self.lines), err


def sync_report(stdout: str) -> dict:
    line = next(l for l in stdout.splitlines() if l.startswith("SYNC "))
    return json.loads(line[5:])


# Random kills ------------------------------------------------------------------------------------
def test_acknowledged_writes_survive_random_sigkills(tmp_path):
    """Rounds of write-until-SIGKILL on one root; the next round's open repairs what the kill left
    half done; at the end every ACKed experience, guideline and skill is in the files and found
    by get and by a search for its exact text."""
    root = tmp_path / "root"
    rng = random.Random(BASE_SEED)
    acks: list[Ack] = []
    rounds = []
    for number in range(ROUNDS):
        seed = BASE_SEED * 10 + number
        writer = Writer(root, "--seed", seed)
        writer.wait_for("READY")
        stdout = writer.kill_after(rng.uniform(0.8, 2.5))
        assert writer.proc.returncode == -signal.SIGKILL, stdout[-2000:]
        got = parse_acks(stdout)
        rounds.append((seed, len(got), sync_report(stdout)))
        acks += got
    print(f"\ncrash seed {BASE_SEED}: rounds (seed, acks, opening sync) {rounds}")
    assert sum(n for _, n, _ in rounds) >= ROUNDS, "the writers acknowledged almost nothing"

    bank = open_bank(root, sync=False)
    try:
        repaired = bank.sync()  # what the last kill left half done
        for kind, report in repaired.items():
            assert not report.skipped, (kind, report.findings)
        state = check_files_match_index(bank, root)
        assert not state["bad_lines"], state["bad_lines"]
        check_acks(bank, acks)
        assert len({a.id for a in acks if a.kind == "exp"}) <= state["experiences"]
    finally:
        bank.close()


# Exact crash points ------------------------------------------------------------------------------
CRASH_POINTS = {
    # point: (kind, the write is in the files and must be indexed after the next open)
    "exp-index": ("exp", True),
    "exp-torn": ("exp", False),
    "gl-index": ("gl", True),
    "gl-replace": ("gl", False),
    "skill-index": ("skill", True),
    "skill-replace": ("skill", False),
}


@pytest.mark.parametrize("point", list(CRASH_POINTS))
def test_a_kill_at_each_point_of_a_write_is_repaired_on_the_next_open(tmp_path, point):
    """A write killed after its file is durable but before the index knows is indexed by the
    next open (the files are the truth); one killed before its file was complete (torn journal
    line, temp file not yet renamed) is not visible at all, and breaks nothing after it."""
    kind, durable = CRASH_POINTS[point]
    root = tmp_path / "root"
    seed = 7
    # Some acknowledged history first, so the crash lands in a journal / library with content.
    code, out, err = Writer(root, "--seed", seed, "--limit", 3).finish()
    assert code == 0, err[-3000:]
    acks = parse_acks(out)

    writer = Writer(root, "--seed", seed + 1, "--crash-at", point)
    code, out, err = writer.finish()
    assert code == -signal.SIGKILL, f"{point} was not reached: {out[-1000:]} {err[-2000:]}"
    pending = next(l for l in out.splitlines() if l.startswith("PENDING "))
    _, _, name, text = pending.split(" ", 3)
    text = json.loads(text)

    # Another process opens the crashed root first (as an agent restarting would) and writes on.
    code, out, err = Writer(root, "--seed", seed + 2, "--limit", 3).finish()
    assert code == 0, err[-3000:]
    opening = sync_report(out)
    acks += parse_acks(out)
    repaired = {"exp": "experiences", "gl": "guidelines", "skill": "skills"}[kind]
    assert opening[repaired]["added"] == (1 if durable else 0), opening
    assert all(r["skipped"] == 0 for r in opening.values()), opening

    bank = open_bank(root)
    try:
        state = check_files_match_index(bank, root)
        check_acks(bank, acks)
        if kind == "exp":
            hits = bank.experiences.recall(text, k=3, count_use=False)
            found = [h for h in hits if h.record.task == text]
            assert bool(found) == durable, (point, hits)
            if point == "exp-torn":
                assert state["bad_lines"] and len(state["bad_lines"]) == 1, state
                assert not state["torn_bytes"]  # the next append ended the torn line first
        elif kind == "gl":
            texts = [g.text for g in bank.guidelines.list()]
            assert (text in texts) == durable
            if durable:
                assert text in [h.record.text for h in bank.guidelines.search(text, k=3)]
        else:
            assert (name in bank.skills) == durable
            if durable:
                assert bank.skills.load(name).description == text
                assert name in [h.name for h in bank.skills.search(text, k=3)]
            else:
                # The skill library's own leftovers: the killed process may also have been
                # writing its sharing endpoint (<root>/.owner.json), which is not this write.
                leftovers = [p.name for p in state["temp_files"]
                             if p.relative_to(root).parts[0] == "skills"]
                assert leftovers and all(p.startswith(".SKILL.md.") for p in leftovers)
                # the half-made folder does not block creating the skill again
                bank.skills.create(name, text, "# Steps\n\nAgain.\n")
                assert bank.skills.load(name).description == text
        if point == "gl-replace":
            assert [p.name for p in state["temp_files"]], "the kill left no temp file?"
    finally:
        bank.close()


# Reindex after losing chroma/ ----------------------------------------------------------------------
def _normalised(results: dict) -> dict:
    """Search results with exact ties put in id order (their relative order is arbitrary)."""
    out = {}
    for query, kinds in results["queries"].items():
        out[query] = {kind: sorted(((item, round(score, 5)) for item, score in hits),
                                   key=lambda pair: (-pair[1], pair[0]))
                      for kind, hits in kinds.items()}
    return {"queries": out, "counts": results["counts"]}


def test_reindex_after_deleting_chroma_restores_identical_search_results(tmp_path):
    """Process A writes and records search results; chroma/ is deleted; process B runs
    `skillbank reindex` (the CLI); process C searches again and gets the same results."""
    root = tmp_path / "root"
    env = subprocess_env()
    run = lambda *args: subprocess.run(worker_cmd("snapshot.py", *args), env=env,  # noqa: E731
                                       capture_output=True, text=True, timeout=120)
    for step in (("write", root), ("query", root, tmp_path / "a.json")):
        done = run(*step)
        assert done.returncode == 0, done.stderr[-3000:]
    shutil.rmtree(root / "chroma")
    cli = Path(sys.executable).parent / "skillbank"
    done = subprocess.run([str(cli), "--root", str(root), "--no-bundled", "--json", "reindex"],
                          env=subprocess_env(SKILLBANK_EMBEDDING="hash"), capture_output=True,
                          text=True, timeout=120)
    assert done.returncode == 0, done.stderr[-3000:]
    rebuilt = json.loads(done.stdout)
    assert len(rebuilt["skills"]["added"]) == 8 and len(rebuilt["guidelines"]["added"]) == 26
    done = run("query", root, tmp_path / "c.json")
    assert done.returncode == 0, done.stderr[-3000:]
    before = _normalised(json.loads((tmp_path / "a.json").read_text()))
    after = _normalised(json.loads((tmp_path / "c.json").read_text()))
    assert after["counts"] == before["counts"]
    differ = {q: {k: (before["queries"][q][k], after["queries"][q][k])
                  for k in before["queries"][q] if before["queries"][q][k] != after["queries"][q][k]}
              for q in before["queries"]}
    differ = {q: d for q, d in differ.items() if d}
    assert not differ, json.dumps(differ, indent=1)
