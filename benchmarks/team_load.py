"""Team mode under load: 8 MCP clients against one and then two `skillbank server` workers.

    python benchmarks/team_load.py                       # 60 s per round, hash embedding
    python benchmarks/team_load.py --seconds 20 --embedding minilm

Each round starts from a fresh root and deployment over the same private PostgreSQL cluster
(tests/pg_cluster.py: Debian's PostgreSQL 15 on a loopback port) and a `chroma run` server, with
N worker processes (`python -m skillbank.team.server`). The clients are spread over the workers
round-robin (what a load balancer does) and each calls, for the whole round, a mix of tools:
40% find_skills, 20% memory_context, 25% record_experience, 15% learn_from_critique (seeded,
so both rounds ask the same). Printed per round: calls, throughput, p50/p95 latency, errors, and
lost writes — experiences a worker acknowledged that are not in the journal afterwards (must be
0). Then the throughput of two workers against one. Timings are printed, never asserted; the
machine load is printed with them (on a shared 2-core machine two workers cannot show their
scaling: they compete for the same cores as the clients, PostgreSQL and Chroma).
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import random
import subprocess
import sys
import tempfile
import time
import urllib.request
import uuid
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO / "tests"))
MIX = [("find_skills", 40), ("memory_context", 20), ("record_experience", 25),
       ("learn_from_critique", 15)]
TOKEN = "team-load"
WORDS = ("report invoice deploy migrate schema backup restore rotate secret release notes "
         "slide deck query index cache latency test flaky retry queue worker config").split()


def free_port() -> int:
    import socket

    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def start_chroma(folder: Path) -> tuple[subprocess.Popen, str]:
    port = free_port()
    proc = subprocess.Popen([str(Path(sys.executable).parent / "chroma"), "run", "--path",
                             str(folder), "--host", "127.0.0.1", "--port", str(port)],
                            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
                            env={**os.environ, "ANONYMIZED_TELEMETRY": "False"})
    url = f"http://127.0.0.1:{port}"
    for _ in range(1500):
        try:
            urllib.request.urlopen(url + "/api/v2/heartbeat", timeout=1)
            return proc, url
        except OSError:
            time.sleep(0.2)
    raise SystemExit("chroma run did not start")


def seed_skills(root: Path, n: int = 30) -> None:
    rng = random.Random(7)
    for i in range(n):
        folder = root / "skills" / f"skill-{i:02d}"
        folder.mkdir(parents=True, exist_ok=True)
        words = " ".join(rng.sample(WORDS, 5))
        (folder / "SKILL.md").write_text(f"---\nname: skill-{i:02d}\ndescription: How to {words}."
                                         f"\n---\n# Steps\n\n1. {words}\n")


def start_workers(n: int, root: Path, chroma: str, database: str, embedding: str,
                  logs: Path) -> list[tuple[subprocess.Popen, str]]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("SKILLBANK_")
           or k == "SKILLBANK_MODEL_DIR"}
    env.update(ANONYMIZED_TELEMETRY="False", SKILLBANK_EMBEDDING=embedding,
               PYTHONPATH=os.pathsep.join(filter(None, [str(REPO), env.get("PYTHONPATH")])))
    deployment = uuid.uuid4().hex[:12]
    workers = []
    for i in range(n):
        port = free_port()
        proc = subprocess.Popen(
            [sys.executable, "-m", "skillbank.team.server", "--root", str(root), "--chroma-url",
             chroma, "--database-url", database, "--deployment", deployment, "--port", str(port),
             "--token", TOKEN, "--trust"], env=env,
            stdout=(logs / f"worker-{n}-{i}.log").open("w"), stderr=subprocess.STDOUT)
        workers.append((proc, f"http://127.0.0.1:{port}"))
    for proc, url in workers:
        for _ in range(1500):
            try:
                if urllib.request.urlopen(url + "/readyz", timeout=5).status == 200:
                    break
            except OSError:
                if proc.poll() is not None:
                    raise SystemExit(f"worker exited; see {logs}")
                time.sleep(0.2)
    return workers


def args_for(tool: str, rng: random.Random) -> dict[str, Any]:
    words = " ".join(rng.sample(WORDS, 4))
    if tool == "record_experience":
        return {"task": f"{words} {rng.randrange(10**6)}", "outcome": rng.choice(
            ["success", "failure", "partial"]), "feedback": f"remember to {words}"}
    if tool == "learn_from_critique":
        return {"critique": f"Always {words} before you answer.", "task": words}
    return {"task": f"how do I {words}"}


async def client(url: str, seed: int, deadline: float, out: dict[str, Any]) -> None:
    import httpx2
    from mcp import Client
    from mcp.client.streamable_http import streamable_http_client

    rng = random.Random(seed)
    tools = [t for t, w in MIX for _ in range(w)]
    async with httpx2.AsyncClient(headers={"Authorization": f"Bearer {TOKEN}"},
                                  timeout=120) as http:
        async with Client(streamable_http_client(url + "/mcp", http_client=http)) as session:
            while time.monotonic() < deadline:
                tool = rng.choice(tools)
                started = time.perf_counter()
                try:
                    result = await session.call_tool(tool, args_for(tool, rng))
                    failed = result.is_error
                except Exception:  # noqa: BLE001 - counted, the run goes on
                    failed, result = True, None
                out["latencies"].append(time.perf_counter() - started)
                if failed:
                    out["errors"] += 1
                elif tool == "record_experience":
                    out["acked"].append(result.structured_content["id"])


async def client_group(urls: list[str], seeds: list[int], deadline: float,
                       out: dict[str, Any]) -> None:
    await asyncio.gather(*(client(url, seed, deadline, out) for url, seed in zip(urls, seeds)))


CLIENT_START_SECONDS = 20.0  # spawning and importing the client processes, on a loaded machine


def client_process(job: tuple[list[str], list[int], float, float]) -> dict[str, Any]:
    """Some of the clients in a process of their own, from wall time `start_at` for
    `seconds` (the CPU it uses counted from then, imports left out)."""
    urls, seeds, start_at, seconds = job
    import httpx2  # noqa: F401 - imported before the start, like the worker's
    import mcp.client.streamable_http  # noqa: F401

    time.sleep(max(0.0, start_at - time.time()))
    out: dict[str, Any] = {"latencies": [], "errors": 0, "acked": []}
    started = time.process_time()
    asyncio.run(client_group(urls, seeds, time.monotonic() + seconds, out))
    out["cpu_s"] = time.process_time() - started
    out["ended"] = time.time()
    return out


def percentile(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(round(q * (len(ordered) - 1))))] if ordered else 0.0


TICK = os.sysconf("SC_CLK_TCK") if hasattr(os, "sysconf") else 100


def _proc_table() -> dict[int, tuple[int, float]]:
    """pid -> (parent pid, CPU seconds used so far), from /proc (Linux; empty elsewhere)."""
    table: dict[int, tuple[int, float]] = {}
    for entry in Path("/proc").glob("[0-9]*/stat") if Path("/proc/stat").exists() else ():
        try:
            fields = entry.read_text().rsplit(")", 1)[1].split()
            table[int(entry.parent.name)] = (int(fields[1]),
                                             (int(fields[11]) + int(fields[12])) / TICK)
        except (OSError, ValueError, IndexError):
            continue
    return table


def cpu_of(roots: dict[str, list[int]]) -> dict[str, float]:
    """CPU seconds so far of each named group of process trees (a pid and its descendants)."""
    table = _proc_table()
    children: dict[int, list[int]] = {}
    for pid, (ppid, _) in table.items():
        children.setdefault(ppid, []).append(pid)
    out: dict[str, float] = {}
    for name, pids in roots.items():
        total, todo = 0.0, list(pids)
        while todo:
            pid = todo.pop()
            total += table.get(pid, (0, 0.0))[1]
            todo.extend(children.get(pid, []))
        out[name] = total
    return out


def machine_busy() -> tuple[float, float]:
    """(busy, total) CPU seconds of the whole machine so far (/proc/stat), all processes."""
    try:
        values = [int(v) for v in Path("/proc/stat").read_text().split("\n")[0].split()[1:]]
    except (OSError, ValueError):
        return 0.0, 0.0
    idle = values[3] + (values[4] if len(values) > 4 else 0)
    return (sum(values) - idle) / TICK, sum(values) / TICK


def lost_writes(acked: list[str], database: str, root: Path) -> list[str]:
    """Acknowledged experience ids that are nowhere: neither in PostgreSQL's experience table
    (team mode's system of record, every deployment) nor in the root's journal files."""
    import psycopg

    with psycopg.connect(database, autocommit=True) as conn:
        stored = {row[0] for row in conn.execute("SELECT id FROM sb_experiences")}
    journal = "".join(p.read_text("utf-8", "replace")
                      for p in (root / "experiences").glob("*.jsonl"))
    return [eid for eid in acked if eid not in stored and f'"{eid}"' not in journal]


def profile(pid: int, seconds: float, out: Path) -> subprocess.Popen | None:
    """py-spy (if installed) sampling worker `pid` for the round: where a call's time goes."""
    spy = Path(sys.executable).parent / "py-spy"
    if not spy.exists():
        print("--profile: py-spy is not installed (pip install py-spy)", file=sys.stderr)
        return None
    return subprocess.Popen([str(spy), "record", "--pid", str(pid), "--duration",
                             str(int(seconds)), "--format", "raw", "--idle", "--threads",
                             "--output", str(out)], stdout=subprocess.DEVNULL,
                            stderr=subprocess.DEVNULL)


def run_round(n: int, args: argparse.Namespace, chroma: str, database: str,
              work: Path) -> dict[str, Any]:
    root = work / f"root-{n}"
    seed_skills(root)
    workers = start_workers(n, root, chroma, database, args.embedding, work)
    out: dict[str, Any] = {"latencies": [], "errors": 0, "acked": []}
    try:
        deadline = time.monotonic() + args.seconds
        started = time.monotonic()
        groups = {"workers": [p.pid for p, _ in workers], "chroma": [args.chroma_pid],
                  "postgres": [args.postgres_pid]}
        cpu_before, busy_before = cpu_of(groups), machine_busy()
        own_before = time.process_time()
        spy = (profile(workers[0][0].pid, args.seconds, work / f"profile-{n}.txt")
               if args.profile else None)

        urls = [workers[i % n][1] for i in range(args.clients)]
        procs = max(1, min(args.client_processes, args.clients))
        if procs == 1:
            asyncio.run(client_group(urls, list(range(args.clients)), deadline, out))
        else:  # the MCP client costs more CPU per call than the worker: one GIL is a cap
            import concurrent.futures
            import multiprocessing

            shares = [list(range(args.clients))[k::procs] for k in range(procs)]
            # Every process starts its clients at one wall-clock time, after its imports.
            start_at = time.time() + CLIENT_START_SECONDS
            import threading

            def at_start() -> None:  # the CPU window opens when the clients start
                nonlocal cpu_before, busy_before
                cpu_before, busy_before = cpu_of(groups), machine_busy()

            threading.Timer(CLIENT_START_SECONDS, at_start).start()
            with concurrent.futures.ProcessPoolExecutor(
                    procs, mp_context=multiprocessing.get_context("spawn")) as pool:
                parts = list(pool.map(client_process, [([urls[i] for i in share], share,
                                                        start_at, args.seconds)
                                                       for share in shares]))
            # the round lasts until its last client's last call came back
            started = time.monotonic() - (max(p["ended"] for p in parts) - start_at)
            for part in parts:
                    for key in ("latencies", "acked"):
                        out[key].extend(part[key])
                    out["errors"] += part["errors"]
                    out["client_cpu_s"] = out.get("client_cpu_s", 0.0) + part["cpu_s"]
        elapsed = time.monotonic() - started
        cpu_after, busy_after = cpu_of(groups), machine_busy()
        cpu = {name: round(cpu_after[name] - cpu_before[name], 1) for name in groups}
        cpu["clients"] = round(time.process_time() - own_before + out.get("client_cpu_s", 0.0),
                               1)
        if spy is not None:
            spy.wait(60)
            print(f"profile of worker 0 ({n} workers): {work / f'profile-{n}.txt'}",
                  flush=True)
    finally:
        for proc, _ in workers:
            proc.terminate()
            try:
                proc.wait(20)
            except subprocess.TimeoutExpired:
                proc.kill()
    lost = lost_writes(out["acked"], database, root)
    calls = len(out["latencies"])
    return {"workers": n, "calls": calls, "seconds": round(elapsed, 1),
            "calls_per_s": round(calls / elapsed, 2),
            "p50_ms": round(percentile(out["latencies"], 0.5) * 1000, 1),
            "p95_ms": round(percentile(out["latencies"], 0.95) * 1000, 1),
            "errors": out["errors"], "acknowledged_writes": len(out["acked"]),
            "lost_writes": len(lost),
            # CPU seconds each part used in the round, and the whole machine's (every agent's):
            # when the machine is busy all the time, a second worker only takes turns.
            "cpu_s": cpu, "cpu_s_per_call": round(sum(cpu.values()) / max(1, calls), 3),
            "machine_busy": f"{busy_after[0] - busy_before[0]:.0f} of "
                            f"{busy_after[1] - busy_before[1]:.0f} CPU s"}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--seconds", type=float, default=60)
    parser.add_argument("--clients", type=int, default=8)
    parser.add_argument("--workers", default="1,2")
    parser.add_argument("--embedding", default="hash", choices=["hash", "minilm"])
    parser.add_argument("--client-processes", type=int, default=4,
                        help="processes the clients are spread over (1: all in this one)")
    parser.add_argument("--profile", action="store_true",
                        help="sample worker 0 with py-spy for each round (folded stacks)")
    args = parser.parse_args()
    import pg_cluster

    why = pg_cluster.missing()
    if why:
        raise SystemExit(why)
    work = Path(tempfile.mkdtemp(prefix="skillbank-team-load-"))
    cluster = pg_cluster.Cluster().init()
    chroma_proc, chroma = start_chroma(work / "chroma")
    args.chroma_pid = chroma_proc.pid
    pid_file = cluster.data / "postmaster.pid"
    args.postgres_pid = int(pid_file.read_text().split()[0]) if pid_file.exists() else -1
    print(f"load before: {' '.join(f'{x:.2f}' for x in os.getloadavg())} "
          f"({os.cpu_count()} cores); {args.clients} clients, {args.seconds:g} s a round, "
          f"embedding {args.embedding}", flush=True)
    rows = []
    try:
        for n in [int(x) for x in args.workers.split(",")]:
            row = run_round(n, args, chroma, cluster.url, work)
            row["load_after"] = " ".join(f"{x:.2f}" for x in os.getloadavg())
            rows.append(row)
            print(json.dumps(row), flush=True)
    finally:
        chroma_proc.terminate()
        chroma_proc.wait(20)
        cluster.destroy()
    if len(rows) >= 2 and rows[0]["calls_per_s"]:
        print(f"throughput {rows[-1]['workers']} workers / {rows[0]['workers']}: "
              f"{rows[-1]['calls_per_s'] / rows[0]['calls_per_s']:.2f}x (target >= 1.6x on a "
              "machine with cores to spare)")


if __name__ == "__main__":
    main()
