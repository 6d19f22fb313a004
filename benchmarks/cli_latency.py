"""CLI latency on a large library: how long a person waits for `skillbank` to answer.

    python benchmarks/cli_latency.py                    # the 1,750-skill corpus, MiniLM
    python benchmarks/cli_latency.py --embedding hash   # same commands, the tiny hash embedding
    python benchmarks/cli_latency.py --runs 5 --rebuild

One memory root indexes every skill folder of ../shared/corpora/skills (the curated corpus of
~1,850 SKILL.md files that issue #27's "1,750 skills" refers to; duplicates by name collapse).
It is built once (`skillbank --skills-dir … skills sync`, minutes with the model) and cached;
the folders are remembered by the root (`skillbank.toml`), so the timed commands name none.

For `--help`, `stats`, `skills search` and `context`, measured in one run, as spawn-to-exit of
the console script, in the order a person meets them:
* script: stdout is a pipe, as in a script or CI (SKILLBANK_CLI_OWNER=0 said explicitly): the
  command opens Chroma and the model itself, every time;
* first at a terminal: stdout is a pseudo-terminal (`os.openpty`), as for a person typing, and no
  background owner runs: the command starts one (`skillbank.cli.owner`) and attaches to it. The
  owner is stopped before each of these runs, so every run is a true first command;
* warm at a terminal: the same pseudo-terminal, while the owner the first command started still
  runs (it ends by itself after 10 idle minutes): what every later command costs;
* attached: while `skillbank serve --transport http` holds the root (`--with-serve`);
* baseline: `python -c pass` in the same rounds (in the same pseudo-terminal for the terminal
  rows), and each command as a multiple of it;
* `--ab-old DIR`: each command also run with PYTHONPATH=DIR (another tree's code, e.g. a `git
  archive` export with mcp_server/ copied to DIR/skillbank/), right after the same command, in
  the same rounds (rows "OLD ..."); for a busy machine, where two sittings are not comparable.
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
from typing import Any

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


def timed(argv: list[str], env: dict[str, str], tty: bool = False) -> float:
    """Spawn to exit of `argv`; `tty`: stdout and stderr are a pseudo-terminal (drained as the
    command writes), as for a person at a terminal, else pipes. The command's own CPU seconds
    (user + system; what its wall time would be on an idle machine, without the owner's share)
    are kept in CPU[-1]."""
    import pty
    import select

    if tty:
        master, slave = pty.openpty()
        out_fd = err_fd = slave
    else:
        master, slave = os.pipe()
        out_fd, err_fd = subprocess.DEVNULL, slave
    output = bytearray()
    started = time.perf_counter()
    proc = subprocess.Popen(argv, env=env, stdin=subprocess.DEVNULL, stdout=out_fd, stderr=err_fd)
    os.close(slave)
    try:
        while True:
            ready, _, _ = select.select([master], [], [], 1.0)
            if ready:
                try:
                    chunk = os.read(master, 65536)
                except OSError:  # EIO: every writer has closed the terminal
                    chunk = b""
                if not chunk:
                    break
                output += chunk
            elif proc.poll() is not None:
                break
        _, status, usage = os.wait4(proc.pid, 0)
        seconds = time.perf_counter() - started
        proc.returncode = os.waitstatus_to_exitcode(status)
    finally:
        os.close(master)
    CPU.append(usage.ru_utime + usage.ru_stime)
    if proc.returncode != 0:
        raise SystemExit(f"{' '.join(argv)} failed: {output[-1500:].decode(errors='replace')}")
    return seconds


CPU: list[float] = []


def variants(env: dict[str, str], old: str | None) -> list[tuple[str, dict[str, str]]]:
    """("", env), and with --ab-old ("OLD ", env with PYTHONPATH=old) right after it."""
    return [("", env)] + ([("OLD ", {**env, "PYTHONPATH": old})] if old else [])


def measure(env: dict[str, str], runs: int, tty: bool = False,
            old: str | None = None) -> dict[str, list[float]]:
    """Wall seconds per command (and, under "<command> cpu", its own CPU seconds)."""
    out: dict[str, list[float]] = {"python -c pass": []}
    for _ in range(runs):
        for name, argv in [("python -c pass", [sys.executable, "-c", "pass"]),
                           *[(n, [str(SKILLBANK), *a]) for n, a in COMMANDS.items()]]:
            for prefix, use in variants(env, old) if name != "python -c pass" else [("", env)]:
                out.setdefault(prefix + name, []).append(timed(argv, use, tty))
                out.setdefault(prefix + name + " cpu", []).append(CPU[-1])
    return out


def stop_background_owner(root: Path) -> None:
    """End the background owner a terminal command started, and wait until it has let go."""
    try:
        pid = int((root / ".cli-owner.pid").read_text().split()[0])
    except (OSError, ValueError):
        return
    try:
        os.kill(pid, 15)
    except OSError:
        return
    deadline = time.monotonic() + 120
    while time.monotonic() < deadline:
        try:
            os.kill(pid, 0)
        except OSError:
            return
        time.sleep(0.1)


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


def median_row(rows: dict[str, list[float]], name: str) -> float:
    return statistics.median(rows[name]) if rows.get(name) else float("nan")


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument("--embedding", choices=("minilm", "hash"), default="minilm")
    parser.add_argument("--model-dir", default=None)
    parser.add_argument("--cache", default=str(Path(tempfile.gettempdir()) / "skillbank-bench"
                                                / "cli-latency"))
    parser.add_argument("--rebuild", action="store_true")
    parser.add_argument("--with-serve", action="store_true",
                        help="also time commands attached to `skillbank serve --transport http`")
    parser.add_argument("--json", help="also write the numbers to this file")
    parser.add_argument("--ab-old", metavar="DIR",
                        help="also run each command with PYTHONPATH=DIR (another tree's code), "
                             "in the same rounds")
    args = parser.parse_args(argv)
    old = str(Path(args.ab_old).resolve()) if args.ab_old else None
    root = Path(args.cache) / f"root-{args.embedding}"
    env = env_for(args, root)
    build(root, env, args.rebuild)
    stop_background_owner(root)
    before = load_note()
    script_env = {**env, "SKILLBANK_CLI_OWNER": "0"}
    timed([str(SKILLBANK), "stats"], script_env)  # one untimed start: the OS file cache
    script = measure(script_env, args.runs, old=old)
    # A person at a terminal: the first command starts the background owner, later ones attach.
    terminal_env = {k: v for k, v in env.items() if k != "SKILLBANK_CLI_OWNER"}
    first: dict[str, list[float]] = {"python -c pass": [], "stats": []}
    for _ in range(args.runs):
        stop_background_owner(root)
        first["python -c pass"].append(timed([sys.executable, "-c", "pass"], terminal_env, True))
        first.setdefault("python -c pass cpu", []).append(CPU[-1])
        for prefix, use in variants(terminal_env, old):
            stop_background_owner(root)  # each run starts its own owner, with its own code
            first.setdefault(prefix + "stats", []).append(timed([str(SKILLBANK), "stats"], use,
                                                                True))
            first.setdefault(prefix + "stats cpu", []).append(CPU[-1])
    if old:  # the later commands of both attach to an owner running this tree's code
        stop_background_owner(root)
        timed([str(SKILLBANK), "stats"], terminal_env, True)
    time.sleep(5)  # the owner warms up after saying ready; a person reads the first answer
    warm = measure(terminal_env, args.runs, tty=True, old=old)
    stop_background_owner(root)
    attached: dict[str, list[float]] = {}
    if args.with_serve:
        owner = start_owner(script_env)
        try:
            attached = measure(script_env, args.runs, old=old)
        finally:
            owner.terminate()
            owner.wait(30)
    after = load_note()
    skills = json.loads(subprocess.run([str(SKILLBANK), "--json", "stats"], env=script_env,
                                       capture_output=True, text=True).stdout)["skills"]
    columns = [("script", script), ("first at a terminal", first), ("warm at a terminal", warm)]
    if attached:
        columns.append(("attached to serve", attached))
    print()
    print(f"CLI latency — {skills} skills indexed, {args.embedding}, medians of {args.runs} runs;"
          f" {before} (before), {after} (after)")
    print(f"{'command':<20}" + "".join(f" {name + ' s':>24} {'x pass':>7} {'CPU s':>6}"
                                       for name, _ in columns))
    summary: dict[str, Any] = {"skills": skills, "embedding": args.embedding,
                               "load_before": before, "load_after": after, "rows": {}}
    for name in ["python -c pass", *COMMANDS, *(["OLD " + c for c in COMMANDS] if old else [])]:
        cells, row = "", {}
        for column, rows in columns:
            value = median_row(rows, name)
            base = median_row(rows, "python -c pass")
            cpu = median_row(rows, name + " cpu")
            row[column] = {"median_s": value, "runs": rows.get(name, []), "cpu_s": cpu}
            cells += (f" {value:>24.2f} {value / base:>6.1f}x {cpu:>6.2f}" if value == value
                      else f" {'-':>24} {'':>7} {'':>6}")
        summary["rows"][name] = row
        print(f"{name:<20}{cells}")
    print("script: stdout a pipe, the command opens the root itself; first at a terminal: stdout "
          "a pseudo-terminal and no background owner yet, so the command starts one and "
          "attaches; warm at a terminal: later commands, attached to that owner. CPU s: the "
          "command's own CPU seconds (user + system), about its wall time on an idle machine "
          "(the owner's share of an attached call is not in it).")
    if args.json:
        Path(args.json).write_text(json.dumps(summary, indent=2))


if __name__ == "__main__":
    main()
