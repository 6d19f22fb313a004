"""Security scans of a real-size skill library: time per skill, findings by severity, failures.

    SKILLBANK_SCANNER_PYTHON=/path/to/venv/bin/python nice -n 10 python benchmarks/skill_scan.py
    python benchmarks/skill_scan.py --limit 200 --out /tmp/scan.json

Every SKILL.md folder of `../shared/corpora/skills` (1,853 skills from 11 public collections) is
scanned once with cisco-ai-skill-scanner's offline analyzers, through skillbank's own scan path
(`skillbank.memories.skills.scan.Scanner`: one worker process, a timeout per skill, the
binary/huge-script precheck). Prints the worker's start-up time, the scan time per skill
(median, p90, max, total), findings by severity, skills by worst severity, what the default
policy would hold if the corpus were a third-party folder, and the failures with their reasons.
`--out` writes every result (for reviewing a sample of findings by hand). The machine load is
printed with the figures: this machine is shared.

`--first-answer`: the first-run measurement of benchmarks/first_run.py (`skillbank serve
--skills-dir <corpus>` over stdio, `find_skills` asked every second until the expected skill is
in the top 5), twice in one run: without a scanner, then with it configured in the fresh root's
skillbank.toml (the corpus is a third-party folder, so every skill is queued for a scan in the
background while the index fills). Target: < 30 s to the first useful answer either way.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import sys
import tempfile
import time
from collections import Counter
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from _common import SHARED  # noqa: E402

from skillbank.memories.skills import pins  # noqa: E402
from skillbank.memories.skills.scan import SEVERITY_ORDER, Scanner, scanner_python  # noqa: E402
from skillbank.memories.skills.trust import DEFAULT_POLICY  # noqa: E402


def load() -> str:
    return " ".join(f"{x:.1f}" for x in os.getloadavg())


def folders(corpus: Path) -> list[Path]:
    return sorted(p.parent for p in corpus.rglob("SKILL.md"))


def first_answers(corpus: Path, python: str, timeout: float) -> int:
    """First useful find_skills answer on the corpus, without and with background scans."""
    import asyncio

    import first_run
    from _common import default_model_dir

    real_mkdtemp = tempfile.mkdtemp
    for arm in ("no scanner", "scanner"):
        def mkdtemp(*args, **kwargs):  # first_run makes a fresh root: configure it
            root = Path(real_mkdtemp(*args, **kwargs))
            if arm == "scanner":
                (root / "skillbank.toml").write_text(f'[skill_scan]\npython = "{python}"\n')
            return str(root)

        tempfile.mkdtemp = mkdtemp  # type: ignore[assignment]
        try:
            print(f"{arm}: load before {load()}", flush=True)
            cpu = os.times()
            out = asyncio.run(first_run.first_run(first_run.REPO, corpus, default_model_dir(),
                                                  timeout))
            children = os.times()
            used = (children.children_user + children.children_system
                    - cpu.children_user - cpu.children_system)
        finally:
            tempfile.mkdtemp = real_mkdtemp  # type: ignore[assignment]
        print(f"{arm}: initialize {out.get('initialize', 0):.1f} s, first answer "
              f"{out.get('first_answer', 0):.1f} s, first useful {out.get('useful', float('nan')):.1f} s "
              f"(rank {out.get('rank')}), complete hybrid {out.get('complete') or float('nan'):.1f} s, "
              f"server CPU-s at first call {out.get('server_cpu_at_first_call')}, load after {load()}",
              flush=True)
    return 0


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--corpus", type=Path, default=SHARED / "corpora" / "skills")
    parser.add_argument("--limit", type=int, default=0)
    parser.add_argument("--timeout", type=float, default=60.0)
    parser.add_argument("--out", type=Path, default=None)
    parser.add_argument("--first-answer", action="store_true")
    args = parser.parse_args()
    python = scanner_python()
    if python is None:
        print("no scanner: pip install -e '.[scan]' or set SKILLBANK_SCANNER_PYTHON")
        return 2
    if args.first_answer:
        return first_answers(args.corpus, python, 600.0)
    skills = folders(args.corpus)
    if args.limit:
        skills = skills[: args.limit]
    print(f"load before: {load()} ({os.cpu_count()} cores); {len(skills)} skills; "
          f"scanner python {python}")
    with tempfile.TemporaryDirectory() as tmp:
        scanner = Scanner(Path(tmp), python=python, timeout=args.timeout)
        started = time.perf_counter()
        first = scanner.scan_now(skills[0], pins.version_of(scanner.digests.digests(skills[0])))
        startup = time.perf_counter() - started - first.seconds
        results = [(skills[0], first)]
        cpu0 = time.process_time()
        wall0 = time.perf_counter()
        for i, folder in enumerate(skills[1:], 2):
            version = pins.version_of(scanner.digests.digests(folder))
            results.append((folder, scanner.scan_now(folder, version)))
            if i % 200 == 0:
                print(f"  {i}/{len(skills)} scanned, {time.perf_counter() - wall0:.0f} s, "
                      f"load {load()}", flush=True)
        wall = time.perf_counter() - wall0 + first.seconds
        scanner.close()
    times = [r.seconds for _, r in results if not r.failed]
    failed = [(f, r) for f, r in results if r.failed]
    by_severity = Counter(f.severity for _, r in results for f in r.findings)
    worst = Counter((r.worst or "none") if not r.failed else "failed" for _, r in results)
    policy = DEFAULT_POLICY["third-party"]
    held = sum(1 for _, r in results if not r.failed and any(
        policy[f.severity] == "hold" for f in r.findings))
    rules = Counter((f.severity, f.rule) for _, r in results for f in r.findings
                    if f.severity in ("critical", "high"))
    print(f"load after: {load()}")
    print(f"worker start-up (rules loaded once): {startup:.1f} s")
    print(f"per skill (worker-reported, {len(times)} scanned): median "
          f"{statistics.median(times):.3f} s, p90 {sorted(times)[int(0.9 * len(times))]:.3f} s, "
          f"max {max(times):.2f} s; wall for all {wall:.0f} s "
          f"({wall / len(results):.3f} s/skill incl. digests and IPC)")
    print("findings by severity: " + ", ".join(f"{s} {by_severity.get(s, 0)}"
                                               for s in SEVERITY_ORDER))
    print("skills by worst finding: " + ", ".join(
        f"{s} {worst.get(s, 0)}" for s in (*SEVERITY_ORDER, "none", "failed")))
    print(f"held if third-party (default policy: critical/high hold): {held} of {len(results)} "
          f"({100 * held / len(results):.1f}%)")
    print("most frequent critical/high rules: " + "; ".join(
        f"{sev} {rule} x{n}" for (sev, rule), n in rules.most_common(12)))
    for folder, r in failed[:20]:
        print(f"  failed: {folder.relative_to(args.corpus)}: {r.status}")
    if args.out:
        args.out.write_text(json.dumps([{"skill": str(f.relative_to(args.corpus)), **r.to_json()}
                                        for f, r in results], indent=1))
        print(f"results in {args.out}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
