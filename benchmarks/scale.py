"""Scale: one memory root with many experiences and skills — insert, recall, search, RSS, disk, startup.

    python benchmarks/scale.py                                  # 100,000 experiences, 5,000 skills
    python benchmarks/scale.py --experiences 20000 --skills 2000 --profile
    python benchmarks/scale.py --skills-only --skills 5000

The root is built with HashEmbedding (so the index can be reused by the no-change startup probe
and embedding cost is separated); the real model (MiniLMEmbedding) is measured on samples in
separate roots and extrapolated — every extrapolation is labelled as such.

Experiences go in three ways, each timed:
* `experiences.record()` one by one: a sample with MiniLM, a sample with hash on the empty root,
  and a sample with hash after the root holds all the experiences (record cost grows with size);
* the bulk of the root through the journal replay path: events in the documented journal format
  (`{"op": "add", "record": {...}}`, what `record()` appends) are appended to this month's
  journal file and `experiences.sync()` indexes them in batches — the path a reindex or a
  restored backup takes. `record()` and `import_()` write and index one record per Chroma call,
  too slow for 100k (see the printed rates), so this is how the root gets its size.
Timings are printed, never asserted; the machine load is printed next to them.
"""

from __future__ import annotations

import argparse
import cProfile
import io
import json
import os
import pstats
import random
import resource
import subprocess
import sys
import tempfile
import time
from datetime import datetime, timedelta, timezone
from pathlib import Path
from typing import Any


sys.path.insert(0, str(Path(__file__).resolve().parent))
from _common import default_model_dir  # noqa: E402
from _synthetic import (  # noqa: E402
    build_skill_library,
    load_note,
    percentile,
    recall_queries,
    routing_queries,
    synthetic_experiences,
)

TARGET_RECALL_P95_MS = 50.0
TARGET_STARTUP_S = 3.0
TARGET_RSS_MB = 1536.0


def ms(seconds: float) -> float:
    return seconds * 1000.0


def peak_rss_mb() -> float:
    """Peak RSS of this process in MB: `resource.getrusage` (ru_maxrss, KiB on Linux).

    In a child process Linux carries the parent's high-water mark over fork+exec into ru_maxrss,
    so where /proc is available the per-address-space figure (VmHWM) is used as well, and the
    smaller of the two is the child's own.
    """
    rusage = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024.0
    try:
        for line in Path("/proc/self/status").read_text().splitlines():
            if line.startswith("VmHWM:"):
                return min(rusage, int(line.split()[1]) / 1024.0)
    except OSError:
        pass
    return rusage


def current_rss_mb() -> float | None:
    """Resident set size right now (VmRSS), where /proc is available."""
    try:
        for line in Path("/proc/self/status").read_text().splitlines():
            if line.startswith("VmRSS:"):
                return int(line.split()[1]) / 1024.0
    except OSError:
        pass
    return None


def disk_mb(folder: Path) -> dict[str, float]:
    """Allocated size (st_blocks) of a folder, in total and per top-level entry."""
    out: dict[str, float] = {}
    total = 0
    for entry in sorted(folder.iterdir()):
        size = 0
        paths = [entry] if entry.is_file() else [p for p in entry.rglob("*") if p.is_file()]
        for path in paths:
            try:
                size += path.stat().st_blocks * 512
            except OSError:
                pass
        out[entry.name] = size / 2**20
        total += size
    out["total"] = total / 2**20
    return out


def profile_top(label: str, fn: Any, lines: int = 22) -> Any:
    profiler = cProfile.Profile()
    profiler.enable()
    try:
        return fn()
    finally:
        profiler.disable()
        out = io.StringIO()
        pstats.Stats(profiler, stream=out).sort_stats("cumulative").print_stats(lines)
        text = out.getvalue()
        start = text.find("   ncalls")
        print(f"\n--- profile: {label} (cumulative) ---")
        print(text[start:] if start >= 0 else text, flush=True)


def timed_queries(run: Any, queries: list[str]) -> list[float]:
    times = []
    for query in queries:
        started = time.perf_counter()
        run(query)
        times.append(time.perf_counter() - started)
    return times


class precomputed:
    """Within the block, the embedding answers queries from precomputed vectors (no embedding)."""

    def __init__(self, embedding: Any, queries: list[str]) -> None:
        self.embedding = embedding
        self.vectors = {q: embedding.embed_query(q) for q in queries}

    def __enter__(self) -> None:
        self.embedding.embed_query = self.vectors.__getitem__

    def __exit__(self, *exc: object) -> None:
        del self.embedding.embed_query


def summary(times: list[float]) -> str:
    return f"p50 {ms(percentile(times, 50)):.1f} ms, p95 {ms(percentile(times, 95)):.1f} ms"


def say(text: str) -> None:
    print(text, file=sys.stderr, flush=True)


# Journal (bulk) path ------------------------------------------------------------------------------
def journal_path(folder: Path) -> Path:
    """This month's journal file, as the experience memory names it (`<yyyy-mm>.jsonl`, UTC)."""
    return folder / f"{datetime.now(timezone.utc):%Y-%m}.jsonl"


def write_journal(folder: Path, experiences: list[dict[str, Any]], seed: int) -> int:
    """Append `add` events for these experiences to the journal, as `record()` would write them."""
    from skillbank.records import Experience

    rng = random.Random(seed)
    now = datetime.now(timezone.utc)
    path = journal_path(folder)
    folder.mkdir(parents=True, exist_ok=True)
    if path.exists() and path.stat().st_size:
        with path.open("rb") as handle:
            handle.seek(-1, os.SEEK_END)
            if handle.read(1) != b"\n":
                raise SystemExit(f"{path} does not end with a newline; refusing to append")
    lines = []
    for data in experiences:
        record = Experience(
            id=f"exp-{rng.getrandbits(48):012x}", task=data["task"].strip(),
            outcome=data["outcome"], feedback=(data.get("feedback") or "").strip() or None,
            when_to_use=(data.get("when_to_use") or "").strip(),
            tags=list(dict.fromkeys(" ".join(t.split()) for t in data.get("tags", []) if t.strip())),
            namespace="default", created=now - timedelta(seconds=rng.randint(0, 365 * 86400)))
        event = {"op": "add",
                 "record": record.model_dump(mode="json", exclude={"usage", "status", "duplicates"})}
        lines.append(json.dumps(event, ensure_ascii=False, separators=(",", ":")))
    with path.open("a", encoding="utf-8") as handle:
        handle.write("\n".join(lines) + "\n")
        handle.flush()
        os.fsync(handle.fileno())
    return len(lines)


# Phases -------------------------------------------------------------------------------------------
def record_sample(bank: Any, experiences: list[dict[str, Any]], profile: str | None = None
                  ) -> dict[str, Any]:
    embedding = bank.embedding_function
    memory = bank.experiences
    known = set(bank.index("experiences").ids())
    before = embedding.calls

    def run() -> list[str]:
        return [memory.record(**e) for e in experiences]

    started = time.perf_counter()
    ids = profile_top(profile, run) if profile else run()
    seconds = time.perf_counter() - started
    return {"n": len(experiences), "s": seconds, "rate": len(experiences) / seconds,
            "embedded": embedding.calls - before,
            # folded: returned the id of a record that already existed (a near-duplicate)
            "folded": sum(1 for i in ids if i in known) + len(ids) - len(set(ids)),
            "load": load_note()}


def minilm_samples(model_dir: str | None, experiences: list[dict[str, Any]], n_record: int,
                   n_replay: int, workdir: Path) -> dict[str, Any]:
    """record() and journal replay with the real model, each in a fresh root."""
    from skillbank import Skillbank
    from skillbank.embeddings import MiniLMEmbedding

    out: dict[str, Any] = {}
    if n_record:
        embedding = MiniLMEmbedding(model_dir=model_dir)
        embedding.embed(["warm up"])
        with Skillbank.open(workdir / "minilm-record", embedding_function=embedding,
                            include_bundled=False, sync=False) as bank:
            out["record"] = record_sample(bank, experiences[:n_record])
        say(f"  MiniLM record(): {out['record']['rate']:.1f}/s ({out['record']['load']})")
    if n_replay:
        embedding = MiniLMEmbedding(model_dir=model_dir)
        embedding.embed(["warm up"])
        with Skillbank.open(workdir / "minilm-replay", embedding_function=embedding,
                            include_bundled=False, sync=False) as bank:
            write_journal(bank.experiences.folder, experiences[:n_replay], seed=11)
            started = time.perf_counter()
            report = bank.experiences.sync()
            seconds = time.perf_counter() - started
            out["replay"] = {"n": n_replay, "s": seconds, "rate": n_replay / seconds,
                             "indexed": len(report.added), "embedded": report.embedded,
                             "load": load_note()}
        say(f"  MiniLM replay: {out['replay']['rate']:.1f}/s ({out['replay']['load']})")
    return out


def startup_probe(root: Path) -> None:
    """Run in a fresh process: open + sync with the hash embedding, then a first query of each."""
    started = time.perf_counter()
    from skillbank import Skillbank
    from skillbank.embeddings import HashEmbedding

    imported = time.perf_counter() - started
    bank = Skillbank.open(root, embedding_function=HashEmbedding(), include_bundled=False,
                          sync=False)
    opened = time.perf_counter() - started
    reports = bank.sync()
    synced = time.perf_counter() - started
    rss = {"after_open_sync": current_rss_mb()}
    embedded = sum(int(getattr(r, "embedded", 0) or 0) for r in reports.values())
    t = time.perf_counter()
    bank.skills.search("review a pull request for security problems", k=5)
    first_search = time.perf_counter() - t
    rss["after_first_skill_search"] = current_rss_mb()
    first_recall = mirror = None
    if (root / "experiences").is_dir():
        t = time.perf_counter()
        bank.index("experiences").count()  # reads every record's metadata back from Chroma
        mirror = time.perf_counter() - t
        rss["after_experience_mirror"] = current_rss_mb()
        t = time.perf_counter()
        bank.experiences.recall("rate songs in my playlists", k=5, count_use=False)  # builds BM25
        first_recall = time.perf_counter() - t
        rss["after_first_recall"] = current_rss_mb()
    t = time.perf_counter()
    bank.experiences.recall("send money to a friend for dinner", k=5, count_use=False)
    second_recall = time.perf_counter() - t
    t = time.perf_counter()
    bank.close()  # saves the index snapshot when this process built or changed anything
    close = time.perf_counter() - t
    print(json.dumps({"import_s": imported, "open_s": opened, "open_sync_s": synced,
                      "embedded": embedded,
                      "sync_s": {k: round(float(getattr(r, "seconds", 0) or 0), 4)
                                 for k, r in reports.items()},
                      "first_search_s": first_search, "mirror_s": mirror,
                      "first_recall_s": first_recall,
                      "second_recall_s": second_recall, "close_s": close,
                      "rss_mb": peak_rss_mb(),
                      "rss_stages_mb": {k: round(v) for k, v in rss.items() if v is not None},
                      "load": load_note()}))


def run_startup(root: Path, times: int = 3) -> list[dict[str, Any]]:
    """Fresh processes: the first without the index snapshot (the baseline), then with it."""
    import shutil

    out = []
    for number in range(times):
        if number == 0:
            shutil.rmtree(root / ".cache", ignore_errors=True)
        started = time.perf_counter()
        done = subprocess.run([sys.executable, __file__, "--startup-probe", str(root)],
                              capture_output=True, text=True, cwd=Path(__file__).resolve().parents[1])
        wall = time.perf_counter() - started
        if done.returncode != 0:
            raise SystemExit(f"startup probe failed:\n{done.stderr[-3000:]}")
        result = json.loads(done.stdout.strip().splitlines()[-1])
        result["wall_s"] = wall
        result["snapshot"] = number > 0
        out.append(result)
    return out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--experiences", type=int, default=100_000)
    parser.add_argument("--skills", type=int, default=5_000)
    parser.add_argument("--record-sample", type=int, default=1000,
                        help="record() calls timed with hash on the empty root (and a fifth of it, "
                             "at least 50, again at full size; 0: neither)")
    parser.add_argument("--minilm-record", type=int, default=500,
                        help="record() calls timed with MiniLM in a fresh root (extrapolated)")
    parser.add_argument("--minilm-replay", type=int, default=1000,
                        help="experiences replayed from the journal with MiniLM (extrapolated)")
    parser.add_argument("--queries", type=int, default=100)
    parser.add_argument("--model-dir", default=None)
    parser.add_argument("--skills-only", action="store_true")
    parser.add_argument("--profile", action="store_true", help="cProfile record(), sync, recall")
    parser.add_argument("--root", type=Path, default=None,
                        help="build (or reuse, with --reuse) the root here instead of a temp dir")
    parser.add_argument("--reuse", action="store_true",
                        help="the root is already built: measure queries, RSS, disk and startup")
    parser.add_argument("--startup-probe", type=Path, default=None, help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.startup_probe:
        startup_probe(args.startup_probe)
        return

    model_dir = args.model_dir or default_model_dir()
    with tempfile.TemporaryDirectory(prefix="sb-scale-") as tmp:
        workdir = args.root or Path(tmp)
        workdir.mkdir(parents=True, exist_ok=True)
        run(args, model_dir, workdir)


def run(args: argparse.Namespace, model_dir: str | None, workdir: Path) -> None:
    from skillbank import Skillbank
    from skillbank.embeddings import HashEmbedding

    root = workdir / "bank"
    print(f"# scale — {args.skills} skills, {0 if args.skills_only else args.experiences} "
          f"experiences in one root ({root}); {load_note()}")
    results: dict[str, Any] = {}
    embedding = HashEmbedding()

    # Skills ---------------------------------------------------------------------------------
    if not args.reuse:
        started = time.perf_counter()
        build_skill_library(root / "skills", args.skills)
        say(f"  wrote {args.skills} skills in {time.perf_counter() - started:.1f}s")
    bank = Skillbank.open(root, embedding_function=embedding, include_bundled=False, sync=False)
    try:
        started = time.perf_counter()
        report = bank.skills.sync()
        results["skills_sync"] = {"s": time.perf_counter() - started, "added": len(report.added),
                                  "embedded": report.embedded, "load": load_note()}
        say(f"  skills sync {results['skills_sync']['s']:.1f}s, {len(report.added)} added")
        queries = routing_queries()[: args.queries]
        bank.skills.search("warm up the index please", k=5)
        with precomputed(embedding, queries):
            results["skills_excl"] = timed_queries(lambda q: bank.skills.search(q, k=5), queries)
        results["skills_incl_hash"] = timed_queries(lambda q: bank.skills.search(q, k=5), queries)
        results["skills_search_load"] = load_note()
        if args.profile:
            with precomputed(embedding, queries):
                profile_top(f"skills.search x{len(queries)} at {args.skills} skills "
                            "(precomputed vectors)",
                            lambda: [bank.skills.search(q, k=5) for q in queries])

        if not args.skills_only:
            experiences_phase(args, model_dir, workdir, bank, embedding, results)
        results["rss_builder_mb"] = peak_rss_mb()
    finally:
        bank.close()
    results["disk"] = disk_mb(root)
    results["startup"] = run_startup(root)
    report_results(args, results)


def experiences_phase(args: argparse.Namespace, model_dir: str | None, workdir: Path, bank: Any,
                      embedding: Any, results: dict[str, Any]) -> None:
    try:
        import skillbank.memories.experiences  # noqa: F401
    except ImportError:
        print("experience memory not available yet: experiences part skipped")
        return
    n = args.experiences
    tail = max(args.record_sample // 5, 50)
    experiences = list(synthetic_experiences(n + tail))
    if args.reuse:  # new records for the full-size record() sample, not repeats of the last run's
        count_now = bank.index("experiences").count()
        experiences[n:] = list(synthetic_experiences(n + tail, seed=1000 + count_now))[n:]
    memory = bank.experiences

    if not args.reuse:
        # Real model, samples in fresh roots.
        results["minilm"] = minilm_samples(model_dir, experiences, args.minilm_record,
                                           args.minilm_replay, workdir)
        # Hash, record() one by one on the empty root.
        sample = min(args.record_sample, n)
        results["record_empty"] = record_sample(
            bank, experiences[:sample],
            profile=f"record() x{sample} from empty (hash)" if args.profile else None)
        say(f"  hash record(): {results['record_empty']['rate']:.1f}/s")
        # The rest through the journal replay path, in chunks so progress shows.
        rest = experiences[sample:n]
        started = time.perf_counter()
        chunk = 20_000
        indexed = embedded = 0
        for number, start in enumerate(range(0, len(rest), chunk)):
            write_journal(memory.folder, rest[start:start + chunk], seed=100 + number)
            do_sync = memory.sync
            if args.profile and number == 0:
                report = profile_top(f"experiences.sync() replaying {len(rest[start:start + chunk])}"
                                     " journal events (hash)", do_sync)
            else:
                report = do_sync()
            indexed += len(report.added)
            embedded += report.embedded
            say(f"  replayed {start + len(rest[start:start + chunk])}/{len(rest)} "
                f"({time.perf_counter() - started:.0f}s, {load_note()})")
        seconds = time.perf_counter() - started
        results["replay"] = {"n": len(rest), "s": seconds, "rate": len(rest) / max(seconds, 1e-9),
                             "indexed": indexed, "embedded": embedded, "load": load_note()}
    count = memory.count()
    results["experience_count"] = count

    # Recall at full size.
    queries = recall_queries(args.queries)
    started = time.perf_counter()
    memory.recall("warm up: first recall loads the mirror and builds BM25", k=5, count_use=False)
    results["first_recall_s"] = time.perf_counter() - started
    with precomputed(embedding, queries):
        results["recall_excl"] = timed_queries(
            lambda q: memory.recall(q, k=5, count_use=False), queries)
    results["recall_incl_hash"] = timed_queries(
        lambda q: memory.recall(q, k=5, count_use=False), queries)
    results["recall_load"] = load_note()
    if args.profile:
        with precomputed(embedding, queries):
            profile_top(f"recall x{len(queries)} at {count} records (precomputed vectors)",
                        lambda: [memory.recall(q, k=5, count_use=False) for q in queries])
    results["minilm_query"] = minilm_query_times(model_dir, queries)

    if args.record_sample:
        # record() again, now that the root is full (adds these records to the root).
        results["record_full"] = record_sample(
            bank, experiences[n:n + tail],
            profile=f"record() x{tail} at {count} records (hash)" if args.profile else None)
        say(f"  hash record() at full size: {results['record_full']['rate']:.1f}/s")


def minilm_query_times(model_dir: str | None, queries: list[str]) -> list[float]:
    from skillbank.embeddings import MiniLMEmbedding

    embedding = MiniLMEmbedding(model_dir=model_dir)
    embedding.embed(["warm up"])
    return timed_queries(embedding.embed_query, queries)


def report_results(args: argparse.Namespace, r: dict[str, Any]) -> None:
    n = args.experiences
    print(f"\n## Skills ({args.skills}, HashEmbedding) — {r['skills_sync']['load']}")
    s = r["skills_sync"]
    label = "cold sync" if s["added"] else "sync (nothing new)"
    print(f"{label}: {s['s']:.1f}s for {s['added']} skills ({s['embedded']} texts, "
          f"{s['embedded'] / max(s['s'], 1e-9):.0f} texts/s)")
    print(f"search k=5, {len(r['skills_excl'])} queries, excl. query embedding: "
          f"{summary(r['skills_excl'])}; with the hash query embedding: "
          f"{summary(r['skills_incl_hash'])} — {r['skills_search_load']}")

    if "experience_count" in r:
        print(f"\n## Experiences ({r['experience_count']} active records)")
        print(f"{'insert path':46} {'records':>8} {'records/s':>10} {'100k would take':>16}  load")
        rows = []
        mini = r.get("minilm", {})
        if "record" in mini:
            rows.append(("record() one by one, MiniLM, fresh root", mini["record"]))
        if "replay" in mini:
            rows.append(("journal replay (sync), MiniLM, fresh root", mini["replay"]))
        if "record_empty" in r:
            rows.append(("record() one by one, hash, empty root", r["record_empty"]))
        if "replay" in r:
            rows.append((f"journal replay (sync), hash, to {n}", r["replay"]))
        if "record_full" in r:
            rows.append((f"record() one by one, hash, at {r['experience_count']}", r["record_full"]))
        for label, row in rows:
            if not row["rate"]:  # a sample of 0 (--record-sample 0): nothing was timed
                continue
            hours = 100_000 / row["rate"] / 3600
            took = f"{hours:.1f} h" if hours >= 1 else f"{hours * 60:.0f} min"
            print(f"{label:46} {row['n']:8} {row['rate']:10.1f} {took:>16}  {row['load']}")
        print("(100k column: extrapolated from the measured rate, except the hash replay row when "
              "it ran to 100k)")
        for label, row in rows:
            if "folded" in row:
                print(f"{label}: {row['embedded'] / max(row['n'], 1):.1f} texts embedded per "
                      f"record (embedding .calls), {row['folded']} folded as duplicates")
        print(f"first recall after building (loads the mirror, builds BM25): "
              f"{r['first_recall_s']:.2f}s")
        print(f"recall k=5 at {r['experience_count']}, {len(r['recall_excl'])} queries, excl. "
              f"query embedding: {summary(r['recall_excl'])} — {r['recall_load']}")
        print(f"recall with the hash query embedding: {summary(r['recall_incl_hash'])}")
        mq = r["minilm_query"]
        est = [a + b for a, b in zip(r["recall_excl"], mq)]
        print(f"MiniLM query embedding alone: {summary(mq)}; recall incl. MiniLM (estimated, "
              f"excl. + embedding per query): {summary(est)}")

    print("\n## Footprint")
    print(f"peak RSS of the building process: {r['rss_builder_mb']:.0f} MB")
    disk = r["disk"]
    parts = ", ".join(f"{k} {v:.1f} MB" for k, v in disk.items() if k != "total" and v >= 0.05)
    print(f"disk: {disk['total']:.1f} MB ({parts})")

    print("\n## No-change startup in a fresh process (Skillbank.open + sync, hash embedding)")
    for i, s in enumerate(r["startup"], 1):
        recall = (f"experience mirror load {s['mirror_s']:.2f}s, then first recall (BM25 build) "
                  f"{s['first_recall_s']:.2f}s" if s.get("first_recall_s") is not None else "n/a")
        print(f"run {i} ({'index snapshot' if s.get('snapshot') else 'no index snapshot'}): "
              f"open+sync {s['open_sync_s']:.2f}s (imports {s['import_s']:.2f}s, "
              f"per memory {s['sync_s']}), embedded {s['embedded']}; first skill search "
              f"{s['first_search_s']:.2f}s, {recall}, second recall "
              f"{s['second_recall_s']:.3f}s; close {s.get('close_s', 0):.2f}s; "
              f"process wall {s['wall_s']:.1f}s; "
              f"peak RSS {s['rss_mb']:.0f} MB (RSS by stage {s.get('rss_stages_mb')}) — {s['load']}")

    cold = [s for s in r["startup"] if not s.get("snapshot") and s.get("first_recall_s") is not None]
    warm = [s for s in r["startup"] if s.get("snapshot") and s.get("first_recall_s") is not None]
    if cold and warm:
        first = lambda s: (s["mirror_s"] or 0) + s["first_recall_s"]  # noqa: E731
        base, best_warm = first(cold[0]), min(first(s) for s in warm)
        print(f"first recall in a fresh process (mirror + BM25): {base:.2f}s without the index "
              f"snapshot, {best_warm:.2f}s with it ({base / max(best_warm, 1e-9):.0f}x faster); "
              f"saving it at close: {cold[0].get('close_s', 0):.2f}s")

    print("\n## Targets")
    if "recall_excl" in r:
        p95 = ms(percentile(r["recall_excl"], 95))
        print(f"recall p95 excl. query embedding at {r['experience_count']}: {p95:.1f} ms "
              f"(target < {TARGET_RECALL_P95_MS:.0f} ms at 100k) -> "
              f"{'met' if p95 < TARGET_RECALL_P95_MS else 'MISSED'}")
    best = min(s["open_sync_s"] for s in r["startup"])
    print(f"no-change startup (open + sync): {best:.2f}s (target < {TARGET_STARTUP_S:.0f}s) -> "
          f"{'met' if best < TARGET_STARTUP_S else 'MISSED'}; with the first recall: "
          + ", ".join(f"{s['open_sync_s'] + (s['mirror_s'] or 0) + (s['first_recall_s'] or 0):.2f}s"
                      for s in r["startup"]))
    worst = max([r["rss_builder_mb"]] + [s["rss_mb"] for s in r["startup"]])
    print(f"peak RSS: builder {r['rss_builder_mb']:.0f} MB, fresh process "
          f"{max(s['rss_mb'] for s in r['startup']):.0f} MB (target < {TARGET_RSS_MB:.0f} MB) -> "
          f"{'met' if worst < TARGET_RSS_MB else 'MISSED'}")
    print(f"# done — {load_note()}")


if __name__ == "__main__":
    main()
