"""Guideline records in the store: the files column against the PostgreSQL column, same run.

    python benchmarks/team_guidelines.py [--rounds 20]

Starts a private PostgreSQL cluster (tests/pg_cluster.py) and a `chroma run` server, then:
- the baseline: one embedded bank on its own root (the files column), and
- team mode: two banks of one deployment, each on its OWN root, over PostgreSQL and the server;
and prints, per operation, the median and p95 latency of each column and their ratio, plus how
long worker B took to see each of worker A's writes (learn, vote, approve, retire). The machine
load is printed with the figures: on a shared machine treat them as upper bounds.
"""

from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import sys
import tempfile
import time
import urllib.request
import uuid
from pathlib import Path
from typing import Any, Callable

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent / "tests"))
sys.path.insert(0, str(HERE.parent))

from skillbank import Skillbank  # noqa: E402
from skillbank.embeddings import HashEmbedding  # noqa: E402
from skillbank.scope import Scope  # noqa: E402

AGENT = Scope(principal="agent", namespace="default", role="contributor", trusted=False,
              face="bench")
WORDS = ("amber cobalt jade onyx pearl ruby slate topaz umber violet willow xenon yarrow zinc "
         "birch cedar dune ember fjord grove").split()


def _rule(n: int) -> str:
    return f"Always check the {WORDS[n % len(WORDS)]} {WORDS[(n * 7 + 3) % len(WORDS)]} " \
           f"service log number {n} before a release."


def _chroma(folder: Path) -> tuple[subprocess.Popen, str]:
    import socket

    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port = sock.getsockname()[1]
    proc = subprocess.Popen([str(Path(sys.executable).parent / "chroma"), "run", "--path",
                             str(folder), "--host", "127.0.0.1", "--port", str(port)],
                            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
                            env={**os.environ, "ANONYMIZED_TELEMETRY": "False"})
    url = f"http://127.0.0.1:{port}"
    deadline = time.time() + 300
    while time.time() < deadline:
        try:
            urllib.request.urlopen(f"{url}/api/v2/heartbeat", timeout=1)
            return proc, url
        except OSError:
            time.sleep(0.3)
    proc.kill()
    raise SystemExit("chroma run did not start")


def _timed(call: Callable[[], Any]) -> float:
    started = time.perf_counter()
    call()
    return time.perf_counter() - started


def _until(check: Callable[[], bool], limit: float = 10.0) -> float:
    started = time.perf_counter()
    while not check():
        if time.perf_counter() - started > limit:
            return float("inf")
        time.sleep(0.005)
    return time.perf_counter() - started


def _ops(bank: Skillbank, rounds: int, offset: int) -> dict[str, list[float]]:
    times: dict[str, list[float]] = {"add": [], "vote": [], "list": [], "get": [], "search": []}
    ids = []
    for n in range(rounds):
        out: list[str] = []
        times["add"].append(_timed(lambda: out.append(
            bank.guidelines.add(_rule(offset + n)).guideline_id)))
        ids.append(out[0])
    for gid in ids:
        times["vote"].append(_timed(lambda: bank.guidelines.vote(gid, helpful=True)))
        times["get"].append(_timed(lambda: bank.guidelines.get(gid)))
        times["list"].append(_timed(lambda: bank.guidelines.list(namespace="*")))
        times["search"].append(_timed(lambda: bank.guidelines.search("check the service log")))
    return times


def _stat(values: list[float]) -> tuple[float, float]:
    ordered = sorted(values)
    return statistics.median(ordered), ordered[min(len(ordered) - 1, int(0.95 * len(ordered)))]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=20)
    args = parser.parse_args()
    import pg_cluster

    why = pg_cluster.missing()
    if why:
        raise SystemExit(why)
    work = Path(tempfile.mkdtemp(prefix="bench-team-gl-"))
    cluster = pg_cluster.Cluster().init()
    chroma, chroma_url = _chroma(work / "chroma")
    try:
        print(f"load before: {os.getloadavg()}  rounds: {args.rounds}")
        files = Skillbank.open(work / "files", embedding_function=HashEmbedding(),
                               include_bundled=False, chroma_url=chroma_url)
        deployment = uuid.uuid4().hex[:12]
        a, b = (Skillbank.open(work / name, embedding_function=HashEmbedding(),
                               include_bundled=False, chroma_url=chroma_url,
                               database_url=cluster.url, deployment=deployment)
                for name in ("team-a", "team-b"))
        try:
            base = _ops(files, args.rounds, 0)
            team = _ops(a, args.rounds, 1000)
            print(f"{'operation':<8} {'files p50/p95 ms':>18} {'postgres p50/p95 ms':>21} "
                  f"{'ratio p50':>9}")
            for op in base:
                f50, f95 = _stat(base[op])
                p50, p95 = _stat(team[op])
                print(f"{op:<8} {f50 * 1e3:8.1f} /{f95 * 1e3:7.1f} {p50 * 1e3:10.1f} /"
                      f"{p95 * 1e3:8.1f} {p50 / f50:9.2f}x")
            seen: dict[str, list[float]] = {"learn": [], "vote": [], "approve": [], "retire": []}

            def status(gid: str) -> str | None:
                found = {g.id: g for g in b.guidelines.list(namespace="*")}
                return found[gid].status if gid in found else None

            for n in range(args.rounds):
                gid = a.guidelines.learn(_rule(5000 + n)).ids()[0]
                seen["learn"].append(_until(lambda: status(gid) == "active"))
                a.guidelines.vote(gid, helpful=False)
                seen["vote"].append(_until(lambda: b.guidelines.get(gid).harmful == 1))
                a.guidelines.retire(gid)
                seen["retire"].append(_until(lambda: status(gid) == "retired"))
                pid = a.scoped(AGENT).guidelines.add(_rule(9000 + n)).guideline_id
                _until(lambda: status(pid) == "pending")
                a.guidelines.approve(pid)
                seen["approve"].append(_until(lambda: status(pid) == "active"))
            print("seen by worker B (own root) after worker A's write, ms:")
            for op, values in seen.items():
                p50, p95 = _stat(values)
                print(f"  {op:<8} p50 {p50 * 1e3:7.1f}  p95 {p95 * 1e3:7.1f}  "
                      f"max {max(values) * 1e3:7.1f}  (>1 s: {sum(v > 1.0 for v in values)})")
        finally:
            for bank in (b, a, files):
                bank.close()
        print(f"load after: {os.getloadavg()}")
    finally:
        chroma.kill()
        cluster.destroy()


if __name__ == "__main__":
    main()
