"""Experience recall quality: skillbank's recall vs. dense cosine over the raw text, same run.

    python benchmarks/experiences.py                     # ../shared/benchmarks/experience-recall
    python benchmarks/experiences.py --store lessons     # content stored as a lesson record
    python benchmarks/experiences.py --json results.json

The set (see its README): `experiences.jsonl` ({eid, task, when_to_use, content, outcome, tags})
and `queries.jsonl` ({query, exclude_eids, relevant, grades} plus `relevant_cross_scenario` /
`exclude_eids_cross_scenario` for the harder mode that leaves out the whole task template).

Every experience is recorded through `bank.experiences.record()` into a fresh temp bank with the
real MiniLM model (task, when_to_use, content as feedback — or as a lesson with `--store
lessons` — outcome with "comparative" mapped to "partial", tags). For each query, `recall()`
asks for 10 + the number of excluded experiences (uses not counted), the excluded ones are
dropped, and the first 10 are scored: Recall@5, MRR, nDCG@10 (gain = grade) and P@5.

Baseline, in the same run and with the same model: dense cosine (numpy) over the raw text
"task + when_to_use + content" of every experience — what a plain vector store would do.
"""

from __future__ import annotations

import argparse
import json
import math
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))
from _common import SHARED, default_model_dir  # noqa: E402

OUTCOME = {"success": "success", "failure": "failure", "comparative": "partial"}
MODES = {
    "normal": ("relevant", "exclude_eids"),
    "cross-scenario": ("relevant_cross_scenario", "exclude_eids_cross_scenario"),
}
METRICS = ("R@5", "MRR", "nDCG@10", "P@5")


def load_set(folder: Path) -> tuple[list[dict], list[dict]]:
    experiences = [json.loads(line) for line in (folder / "experiences.jsonl").open() if line.strip()]
    queries = [json.loads(line) for line in (folder / "queries.jsonl").open() if line.strip()]
    return experiences, queries


def score_ranking(ranked: list[str], relevant: set[str], grades: dict[str, int]) -> dict[str, float]:
    """Metrics of one ranked list of eids (already without the excluded ones), cut at 10."""
    top = ranked[:10]
    hits5 = sum(1 for e in top[:5] if e in relevant)
    first = next((i for i, e in enumerate(top) if e in relevant), None)
    dcg = sum(grades.get(e, 1) / math.log2(i + 2) for i, e in enumerate(top) if e in relevant)
    ideal_gains = sorted((grades.get(e, 1) for e in relevant), reverse=True)[:10]
    idcg = sum(g / math.log2(i + 2) for i, g in enumerate(ideal_gains))
    return {
        "R@5": hits5 / len(relevant),
        "MRR": 0.0 if first is None else 1.0 / (first + 1),
        "nDCG@10": dcg / idcg if idcg else 0.0,
        "P@5": hits5 / 5,
    }


def evaluate(rank_fn, queries: list[dict]) -> dict[str, dict[str, float]]:
    """Mean metrics per mode; `rank_fn(query_text, n)` returns eids best first."""
    results: dict[str, dict[str, float]] = {}
    for mode, (relevant_key, exclude_key) in MODES.items():
        totals = dict.fromkeys(METRICS, 0.0)
        counted = 0
        for query in queries:
            relevant = set(query.get(relevant_key) or [])
            if not relevant:
                continue
            exclude = set(query.get(exclude_key) or [])
            ranked = [e for e in rank_fn(query["query"], 10 + len(exclude)) if e not in exclude]
            for name, value in score_ranking(ranked, relevant, query.get("grades", {})).items():
                totals[name] += value
            counted += 1
        results[mode] = {name: totals[name] / max(counted, 1) for name in METRICS}
        results[mode]["queries"] = counted
    return results


def build_bank(experiences: list[dict], embedding: Any, store: str, root: Path):
    """Record every experience; returns the bank and a map from record id to eid."""
    from skillbank import Skillbank

    bank = Skillbank.open(root, embedding_function=embedding, include_bundled=False, sync=False)
    memory = bank.experiences
    memory.sync()
    id_to_eid: dict[str, str] = {}
    folded = 0
    for exp in experiences:
        content = exp.get("content") or ""
        kwargs: dict[str, Any] = {"lessons": [content]} if store == "lessons" and content \
            else {"feedback": content or None}
        record_id = memory.record(task=exp["task"], when_to_use=exp.get("when_to_use", ""),
                                  outcome=OUTCOME.get(exp.get("outcome"), "unknown"),
                                  tags=exp.get("tags") or [], **kwargs)
        if record_id in id_to_eid:
            folded += 1
            continue
        id_to_eid[record_id] = exp["eid"]
    for lesson in memory.list(kind="lesson", limit=10 * len(experiences)):
        if lesson.source in id_to_eid:
            id_to_eid[lesson.id] = id_to_eid[lesson.source]
    return bank, id_to_eid, folded


def run(folder: Path, model_dir: str | None, store: str, min_score: float | None
        ) -> dict[str, Any]:
    from skillbank.embeddings import MiniLMEmbedding

    experiences, queries = load_set(folder)
    embedding = MiniLMEmbedding(model_dir=model_dir)

    # Baseline: dense cosine over the raw text of each experience.
    started = time.perf_counter()
    raw = [f"{e['task']}\n{e.get('when_to_use', '')}\n{e.get('content', '')}" for e in experiences]
    matrix = embedding.embed(raw)
    eids = [e["eid"] for e in experiences]

    def baseline(query: str, n: int) -> list[str]:
        sims = matrix @ embedding.embed_query(query)
        return [eids[i] for i in np.argsort(-sims)[:n]]

    baseline_scores = evaluate(baseline, queries)
    baseline_seconds = time.perf_counter() - started

    with tempfile.TemporaryDirectory() as tmp:
        started = time.perf_counter()
        bank, id_to_eid, folded = build_bank(experiences, embedding, store, Path(tmp) / "root")
        build_seconds = time.perf_counter() - started
        memory = bank.experiences
        latencies: list[float] = []

        def recall(query: str, n: int) -> list[str]:
            per_eid = 2 if store == "lessons" else 1  # an experience and its lesson record
            embedding.embed_query(query)  # warm the query cache: latency below excludes it
            t0 = time.perf_counter()
            hits = memory.recall(query, k=min(200, n * per_eid), count_use=False,
                                 min_score=min_score)
            latencies.append(time.perf_counter() - t0)
            out: list[str] = []
            for hit in hits:
                eid = id_to_eid.get(hit.id)
                if eid and eid not in out:
                    out.append(eid)
            return out

        ours = evaluate(recall, queries)
        bank.close()
    latencies.sort()
    return {
        "set": str(folder), "store": store, "min_score": min_score,
        "experiences": len(experiences), "queries": len(queries), "folded": folded,
        "skillbank": ours, "baseline": baseline_scores,
        "build_seconds": round(build_seconds, 1), "baseline_seconds": round(baseline_seconds, 1),
        "recall_ms_p50": round(1000 * latencies[len(latencies) // 2], 2),
        "recall_ms_p95": round(1000 * latencies[int(len(latencies) * 0.95)], 2),
    }


def print_table(result: dict[str, Any]) -> None:
    print(f"experience recall — {result['experiences']} experiences, {result['queries']} queries, "
          f"content stored as {result['store']}, {result['folded']} folded as duplicates")
    header = f"{'mode':<15} {'system':<10}" + "".join(f"{m:>9}" for m in METRICS)
    print(header)
    print("-" * len(header))
    for mode in MODES:
        ours, base = result["skillbank"][mode], result["baseline"][mode]
        print(f"{mode:<15} {'skillbank':<10}" + "".join(f"{ours[m]:>9.3f}" for m in METRICS))
        print(f"{'':<15} {'baseline':<10}" + "".join(f"{base[m]:>9.3f}" for m in METRICS))
        ratios = [(ours[m] / base[m]) if base[m] else float("nan") for m in METRICS]
        print(f"{'':<15} {'ratio':<10}" + "".join(f"{r:>8.2f}x" for r in ratios)
              + f"   ({ours['queries']} queries)")
    print(f"recall latency p50 {result['recall_ms_p50']} ms, p95 {result['recall_ms_p95']} ms "
          f"(query embedding excluded); bank built in {result['build_seconds']} s")


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--set", type=Path, default=SHARED / "benchmarks" / "experience-recall")
    parser.add_argument("--model-dir", default=default_model_dir())
    parser.add_argument("--store", choices=("feedback", "lessons"), default="feedback",
                        help="store each experience's content as feedback or as a lesson")
    parser.add_argument("--min-score", type=float, default=None,
                        help="recall's dense floor (default: the bank's setting)")
    parser.add_argument("--json", type=Path, help="also write the results here")
    args = parser.parse_args(argv)
    result = run(args.set, args.model_dir, args.store, args.min_score)
    print_table(result)
    if args.json:
        args.json.write_text(json.dumps(result, indent=2))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
