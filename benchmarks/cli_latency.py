"""CLI latency on a large library: how long a person waits for `skillbank` to answer.

    python benchmarks/cli_latency.py                    # the 1,750-skill corpus, MiniLM
    python benchmarks/cli_latency.py --embedding hash   # same commands, the tiny hash embedding
    python benchmarks/cli_latency.py --runs 5 --rebuild

One memory root indexes every skill folder of ../shared/corpora/skills (the curated corpus of
~1,850 SKILL.md files that issue #27's "1,750 skills" refers to; duplicates by name collapse).
It is built once (`skillbank --skills-dir … skills sync`, minutes with the model) and cached;
the folders are remembered by the root (`skillbank.toml`), so the timed commands name none.

For `--help`, `stats`, `skills search` and `context`, measured in one run, as spawn-to-exit of
the console script:
* cold: nothing else holds the root (each run a new process; the OS file cache is warm after
  the first, as it is for a person who just ran a command);
* attached: while `skillbank serve --transport http` holds the root, later commands attach to
  that owner over its socket instead of opening Chroma and the model themselves;
* background: the short-lived owner an interactive command starts (`skillbank.cli.owner`,
  forced here with SKILLBANK_CLI_OWNER=1 since the benchmark is not a terminal);
* baseline: `python -c pass` in the same rounds, and each command as a multiple of it.
Medians of `--runs`; the machine load is printed before and after. Printed, never asserted.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from _common import SHARED, default_model_dir  # noqa: E402

SKILLBANK = Path(sys.executable).parent / "skillbank"
CORPUS = SHARED / "corpora" / "skills"
COMMANDS = {
    "--help": ["--help"],
    "stats": ["stats"],
    "skills search": ["skills", "search", "extract tables from a PDF report"],
    "context": ["context", "fix a failing docker build in CI"],
}


def load_note() -> str:
    one, five, _ = os.getloadavg()
    return f"load {one:.1f} (1 min), {five:.1f} (5 min), {os.cpu_count()} cores"


def env_for(args: argparse.Namespace, root: Path) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("SKILLBANK_")}
    env.update({"SKILLBANK_ROOT": str(root), "ANONYMIZED_TELEMETRY": "False",
                "COLUMNS": "120"})
    if args.embedding == "hash":
        env["SKILLBANK_EMBEDDING"] = "hash"
    model = args.model_dir or default_model_dir()
    if model:
        env["SKILLBANK_MODEL_DIR"] = model
    return env


def skill_folders() -> list[Path]:
    """Each corpus repository's folders that hold SKILL.md files, shallowest first."""
    return sorted(p for p in CORPUS.iterdir() if p.is_dir())


def build(root: Path, env: dict[str, str], rebuild: bool) -> None:
    if rebuild and root.exists():
        shutil.rmtree(root)
    if (root / "skillbank.toml").exists():
        return
    argv = [str(SKILLBANK)]
    for folder in skill_folders():
        argv += ["--skills-dir", str(folder)]
    started = time.perf_counter()
    print(f"building {root} from {CORPUS} (once; minutes with the model) …", flush=True)
    subprocess.run([*argv, "skills", "sync"], env=env, check=True, stdout=subprocess.DEVNULL)
    print(f"  built in {time.perf_counter() - started:.0f} s", flush=True)


def timed(argv: list[str], env: dict[str, str]) -> float:
    started = time.perf_counter()
    done = subprocess.run(argv, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE,
                          text=True, timeout=900)
    seconds = time.perf_counter() - started
    if done.returncode != 0:
        raise SystemExit(f"{' '.join(argv)} failed: {done.stderr[-1500:]}")
    return seconds


def measure(env: dict[str, str], runs: int) -> dict[str, list[float]]:
    out: dict[str, list[float]] = {"python -c pass": []}
    for _ in range(runs):
        out["python -c pass"].append(timed([sys.executable, "-c", "pass"], env))
        for name, argv in COMMANDS.items():
            out.setdefault(name, []).append(timed([str(SKILLBANK), *argv], env))
    return out


def start_owner(env: dict[str, str]) -> subprocess.Popen:
    import socket

    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port = sock.getsockname()[1]
    owner = subprocess.Popen([str(SKILLBANK), "serve", "--transport", "http", "--port", str(port),
                              "--no-watch"], env=env, stdin=subprocess.DEVNULL,
                             stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
    deadline = time.monotonic() + 600
    while time.monotonic() < deadline:  # serving once the root's owner socket answers stats
        try:
            import httpx

            httpx.get(f"http://127.0.0.1:{port}/mcp", timeout=1.0)
            break
        except Exception:  # noqa: BLE001 - not up yet
            if owner.poll() is not None:
                raise SystemExit("skillbank serve exited: " + (owner.stderr.read() if owner.stderr else ""))
            time.sleep(0.5)
    timed([str(SKILLBANK), "stats"], env)  # the owner has opened the bank
    return owner


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument("--embedding", choices=("minilm", "hash"), default="minilm")
    parser.add_argument("--model-dir", default=None)
    parser.add_argument("--cache", default=str(Path(tempfile.gettempdir()) / "skillbank-bench"
                                                / "cli-latency"))
    parser.add_argument("--rebuild", action="store_true")
    parser.add_argument("--json", help="also write the numbers to this file")
    args = parser.parse_args(argv)
    root = Path(args.cache) / f"root-{args.embedding}"
    env = env_for(args, root)
    build(root, env, args.rebuild)
    before = load_note()
    timed([str(SKILLBANK), "stats"], env)  # one untimed start: the OS file cache
    cold = measure(env, args.runs)
    owner = start_owner(env)
    try:
        attached = measure(env, args.runs)
    finally:
        owner.terminate()
        owner.wait(30)
    # The background owner an interactive command starts (skillbank.cli.owner); the first run
    # below starts it, so its median is what the later commands see.
    background_env = {**env, "SKILLBANK_CLI_OWNER": "1", "SKILLBANK_CLI_OWNER_IDLE": "120"}
    first_start = timed([str(SKILLBANK), "stats"], background_env)
    background = measure(background_env, args.runs)
    try:
        os.kill(int((root / ".cli-owner.pid").read_text().split()[0]), 15)
    except (OSError, ValueError):
        pass
    after = load_note()
    skills = json.loads(subprocess.run([str(SKILLBANK), "--json", "stats"], env=env,
                                       capture_output=True, text=True).stdout)["skills"]
    base_cold = statistics.median(cold["python -c pass"])
    base_att = statistics.median(attached["python -c pass"])
    base_bg = statistics.median(background["python -c pass"])
    summary_first = first_start
    print()
    print(f"CLI latency — {skills} skills indexed, {args.embedding}, medians of {args.runs} runs;"
          f" {before} (before), {after} (after)")
    print(f"{'command':<16} {'cold s':>8} {'x pass':>8} {'attached s':>11} {'x pass':>8}"
          f" {'background s':>13} {'x pass':>8}")
    summary = {"skills": skills, "embedding": args.embedding, "load_before": before,
               "load_after": after, "rows": {}}
    for name in ["python -c pass", *COMMANDS]:
        c = statistics.median(cold[name])
        a = statistics.median(attached[name])
        b = statistics.median(background[name])
        summary["rows"][name] = {"cold_s": c, "attached_s": a, "background_s": b,
                                 "cold_runs": cold[name], "attached_runs": attached[name],
                                 "background_runs": background[name]}
        print(f"{name:<16} {c:>8.2f} {c / base_cold:>7.1f}x {a:>11.2f} {a / base_att:>7.1f}x"
              f" {b:>13.2f} {b / base_bg:>7.1f}x")
    print("cold: nothing else holds the root; attached: while `skillbank serve` owns it (later "
          "commands attach to the owner instead of opening Chroma and the model); background: "
          "the short-lived owner an interactive command starts (skillbank.cli.owner; "
          f"the command that started it took {summary_first:.2f} s).")
    summary["background_first_start_s"] = summary_first
    if args.json:
        Path(args.json).write_text(json.dumps(summary, indent=2))


if __name__ == "__main__":
    main()
