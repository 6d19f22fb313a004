"""Experience recall quality: skillbank's recall vs. BM25 and dense cosine over the raw text.

    python benchmarks/experiences.py                     # both dev sets, side by side
    python benchmarks/experiences.py --set ../shared/benchmarks/experience-recall  # ReMe only
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

Baselines, in the same run and with the same model: dense cosine (numpy) over the raw text
"task + when_to_use + content" of every experience — what a plain vector store would do — and
BM25 (bm25s, skillbank's tokenizer) over the same text plus the tags. skillbank fuses exactly these
two kinds of evidence, so it should never score below either of them.

Second dev set ("reflexion"): ../shared/benchmarks/experience-recall/reflexion_alfworld.jsonl, the
reflections ALFWorld agents wrote after failed trials (Reflexion, MIT). Every reflection is an
experience (task: "ALFWorld household task", outcome failure, content: the reflection); each
environment with reflections and an inferred task type asks with its first reflection for the
reflections of *other* environments of the same task type (its own are excluded). Task types
come from a keyword heuristic in the source file, not from people: compare systems, not absolute
numbers. There is no cross-scenario mode on this set.

Guards beside the headline (hunt-expscale #1, session 37): "off-topic answered empty", the
share of `OFF_TOPIC_TASKS` (everyday tasks nothing in either set fits: a cake, a hiking trip,
a dentist) for which `recall` returns nothing and for which the memory block
(`context_for`, what an agent sees) shows no experience; and "own queries kept by the block",
the share of the set's own queries (their leave-one-out hits) whose experiences the block's
section keeps (`block_fit.fit_experiences`), with MRR / R@5 of what it keeps.
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
#: Everyday tasks no experience of either set answers (phone-app tasks, household ALFWorld
#: runs): the abstention guard on what an agent is shown, recall and block.
OFF_TOPIC_TASKS = (
    "Bake a chocolate cake for the party", "Plan a hiking trip to the Alps",
    "Book a dentist appointment", "Water the tomato plants in the garden",
    "Knit a scarf for the winter", "Write a poem about the autumn sea",
    "Fix the puncture on my bike's rear tyre", "Explain how photosynthesis works",
    "Teach my dog to sit and stay", "Summarise the causes of the French Revolution",
    "Practise the C major scale on the piano", "Train for a half marathon in twelve weeks",
)


def reflexion_set(path: Path) -> tuple[list[dict], list[dict]]:
    """Experiences and queries in this benchmark's format from the Reflexion ALFWorld file."""
    envs = [json.loads(line) for line in path.open() if line.strip()]
    experiences: list[dict] = []
    own: dict[str, list[str]] = {}
    for env in envs:
        texts = [r["text"] for r in env.get("reflections") or []]
        texts += [r["text"] for r in (env.get("base_run") or {}).get("reflections") or []]
        for number, text in enumerate(dict.fromkeys(t.strip() for t in texts if t.strip())):
            eid = f"{env['env_id']}#{number}"
            experiences.append({"eid": eid, "task": "ALFWorld household task",
                                "when_to_use": "", "content": text, "outcome": "failure",
                                "tags": ["alfworld"], "type": env.get("inferred_task_type")})
            own.setdefault(env["env_id"], []).append(eid)
    queries: list[dict] = []
    for env in envs:
        kind, mine = env.get("inferred_task_type"), own.get(env["env_id"])
        if not kind or not mine:
            continue
        relevant = [e["eid"] for e in experiences
                    if e["type"] == kind and e["eid"].split("#")[0] != env["env_id"]]
        if relevant:
            first = next(e for e in experiences if e["eid"] == mine[0])
            queries.append({"query": first["content"], "exclude_eids": mine,
                            "relevant": relevant, "grades": {}})
    return experiences, queries


def load_set(folder: Path) -> tuple[list[dict], list[dict]]:
    if folder.is_file():
        return reflexion_set(folder)
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
    """Record every experience; returns the bank, a map from record id to the eids it stands
    for, and how many experiences were folded into an earlier one.

    A folded experience (a near-duplicate of one already stored: same outcome and lesson text,
    near-identical task) is counted on the record it repeats, so that record stands for both:
    a recall of it returns every eid folded into it, in recording order, as the baselines
    return two identical texts next to each other.
    """
    from skillbank import Skillbank

    bank = Skillbank.open(root, embedding_function=embedding, include_bundled=False, sync=False)
    memory = bank.experiences
    memory.sync()
    id_to_eids: dict[str, list[str]] = {}
    folded = 0
    for exp in experiences:
        content = exp.get("content") or ""
        kwargs: dict[str, Any] = {"lessons": [content]} if store == "lessons" and content \
            else {"feedback": content or None}
        record_id = memory.record(task=exp["task"], when_to_use=exp.get("when_to_use", ""),
                                  outcome=OUTCOME.get(exp.get("outcome"), "unknown"),
                                  tags=exp.get("tags") or [], **kwargs)
        if record_id in id_to_eids:
            folded += 1
        id_to_eids.setdefault(record_id, []).append(exp["eid"])
    for lesson in memory.list(kind="lesson", limit=10 * len(experiences)):
        if lesson.source in id_to_eids:
            id_to_eids[lesson.id] = id_to_eids[lesson.source]
    return bank, id_to_eids, folded


def unrelated_queries(folder: Path) -> dict[str, list[str]]:
    """Queries no experience of `folder`'s set answers, for the abstention guard: the other dev
    set's queries (household chores vs. phone-app tasks) and the routing set's off-topic
    requests (kind "none": history, photography, pets ...). A recall that returns nothing for
    them says "no relevant experience"; the guard is the share answered so."""
    base = SHARED / "benchmarks"
    other = (base / "experience-recall" if folder.is_file()
             else base / "experience-recall" / "reflexion_alfworld.jsonl")
    groups = {"other set": [q["query"] for q in load_set(other)[1]] if other.exists() else []}
    routing = base / "skill-routing" / "queries.jsonl"
    groups["off-topic"] = [q["query"] for q in map(json.loads, routing.open())
                           if q.get("kind") == "none"] if routing.exists() else []
    return groups


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

    import bm25s

    from skillbank.index import tokenize

    retriever = bm25s.BM25(k1=1.2, b=0.75)
    retriever.index([tokenize(f"{text}\n{' '.join(e.get('tags') or [])}")
                     for text, e in zip(raw, experiences)], show_progress=False)

    def bm25(query: str, n: int) -> list[str]:
        terms = [t for t in dict.fromkeys(tokenize(query)) if t in retriever.vocab_dict]
        if not terms:
            return []
        scores = retriever.get_scores(terms)
        return [eids[i] for i in np.argsort(-scores, kind="stable")[:n] if scores[i] > 0]

    bm25_scores = evaluate(bm25, queries)

    with tempfile.TemporaryDirectory() as tmp:
        started = time.perf_counter()
        bank, id_to_eids, folded = build_bank(experiences, embedding, store, Path(tmp) / "root")
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
                out.extend(e for e in id_to_eids.get(hit.id, []) if e not in out)
            return out

        ours = evaluate(recall, queries)
        try:  # the block's experience section (absent before session 37: keeps every hit)
            from skillbank.block_fit import fit_experiences
        except ImportError:
            def fit_experiences(bank: Any, task: str, hits: Any) -> Any:  # noqa: ARG001
                return hits
        kept_by_block: list[bool] = []
        best: dict[str, list[list[float]]] = {"own": [], "off-topic": []}

        def block(query: str, n: int) -> list[str]:
            """What the block's section keeps of the leave-one-out recall (`evaluate` drops
            the excluded eids, so they are dropped here before the section decides)."""
            hits = memory.recall(query, k=min(200, n), count_use=False, min_score=min_score)
            exclude = set(current["exclude"])
            hits = [h for h in hits if not set(id_to_eids.get(h.id, [])) <= exclude]
            kept = fit_experiences(bank, query, hits)
            kept_by_block.append(bool(kept) or not hits)
            best["own"].append([max((h.dense or 0.0 for h in hits), default=0.0),
                                max((h.keyword or 0.0 for h in hits), default=0.0)])
            out: list[str] = []
            for hit in kept:
                out.extend(e for e in id_to_eids.get(hit.id, []) if e not in out)
            return out

        current: dict[str, Any] = {"exclude": []}
        normal = [dict(q, exclude_eids_cross_scenario=None, relevant_cross_scenario=None)
                  for q in queries]

        def with_exclusions(query: str, n: int) -> list[str]:
            query_row = next(q for q in normal if q["query"] == query)
            current["exclude"] = query_row.get("exclude_eids") or []
            return block(query, n)

        in_block = evaluate(with_exclusions, normal)["normal"]
        block_kept = sum(kept_by_block) / max(len(kept_by_block), 1)
        off_recall = off_block = 0
        for text in OFF_TOPIC_TASKS:
            hits = memory.recall(text, k=5, count_use=False, min_score=min_score)
            best["off-topic"].append([max((h.dense or 0.0 for h in hits), default=0.0),
                                      max((h.keyword or 0.0 for h in hits), default=0.0)])
            off_recall += not hits
            shown = bank.context_for(text, budget_tokens=800).ids
            off_block += not any(i.startswith(("exp-", "lsn-")) for i in shown)
        # Abstention: the share of real queries answered with nothing (should be ~0) and of
        # unrelated ones (should be high), at the bank's own floor.
        answered_empty = sum(not memory.recall(q["query"], k=5, count_use=False,
                                               min_score=min_score) for q in queries)
        unrelated = {group: sum(not memory.recall(text, k=5, count_use=False,
                                                  min_score=min_score) for text in texts)
                     / max(len(texts), 1)
                     for group, texts in unrelated_queries(folder).items()}
        unrelated_sizes = {group: len(texts) for group, texts in unrelated_queries(folder).items()}
        bank.close()
    latencies.sort()
    return {
        "set": str(folder), "store": store, "min_score": min_score,
        "experiences": len(experiences), "queries": len(queries), "folded": folded,
        "skillbank": ours, "baseline": baseline_scores, "bm25": bm25_scores,
        "real_empty": answered_empty / max(len(queries), 1),
        "off_topic_empty": {"recall": off_recall / len(OFF_TOPIC_TASKS),
                            "block": off_block / len(OFF_TOPIC_TASKS),
                            "tasks": len(OFF_TOPIC_TASKS)},
        "block": {"own_kept": block_kept, **{m: in_block[m] for m in ("MRR", "R@5")}},
        "best_evidence": best,
        "unrelated_empty": unrelated, "unrelated_queries": unrelated_sizes,
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
        ours, base, bm25 = (result["skillbank"][mode], result["baseline"][mode],
                            result["bm25"][mode])
        if not ours["queries"]:
            continue
        print(f"{mode:<15} {'skillbank':<10}" + "".join(f"{ours[m]:>9.3f}" for m in METRICS))
        print(f"{'':<15} {'dense':<10}" + "".join(f"{base[m]:>9.3f}" for m in METRICS))
        print(f"{'':<15} {'BM25':<10}" + "".join(f"{bm25[m]:>9.3f}" for m in METRICS))
        ratios = [(ours[m] / max(base[m], bm25[m])) if max(base[m], bm25[m]) else float("nan")
                  for m in METRICS]
        print(f"{'':<15} {'vs best':<10}" + "".join(f"{r:>8.2f}x" for r in ratios)
              + f"   ({ours['queries']} queries)")
        lost = [m for m in ("MRR", "R@5") if ours[m] < max(base[m], bm25[m]) - 1e-9]
        print(f"{'':<15} guard: skillbank >= both on MRR and R@5: "
              f"{'yes' if not lost else 'NO (' + ', '.join(lost) + ')'}")
    off, kept = result["off_topic_empty"], result["block"]
    print(f"guard: off-topic answered empty ({off['tasks']} everyday tasks): recall "
          f"{off['recall']:.0%}, memory block {off['block']:.0%}; own queries kept by the "
          f"block {kept['own_kept']:.0%} (normal mode as the block keeps it: MRR "
          f"{kept['MRR']:.3f}, R@5 {kept['R@5']:.3f})")
    shares = ", ".join(f"{group} {share:.0%} of {result['unrelated_queries'][group]}"
                       for group, share in result["unrelated_empty"].items())
    print(f"abstention (answered with nothing): unrelated queries: {shares}; "
          f"this set's queries {result['real_empty']:.0%}")
    print(f"recall latency p50 {result['recall_ms_p50']} ms, p95 {result['recall_ms_p95']} ms "
          f"(query embedding excluded); bank built in {result['build_seconds']} s")


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--set", type=Path, action="append", default=None,
                        help="a set folder, or the reflexion .jsonl file (repeatable; default both)")
    parser.add_argument("--model-dir", default=default_model_dir())
    parser.add_argument("--store", choices=("feedback", "lessons"), default="feedback",
                        help="store each experience's content as feedback or as a lesson")
    parser.add_argument("--min-score", type=float, default=None,
                        help="recall's dense floor (default: the bank's setting)")
    parser.add_argument("--json", type=Path, help="also write the results here")
    args = parser.parse_args(argv)
    folder = SHARED / "benchmarks" / "experience-recall"
    sets = args.set or [folder, folder / "reflexion_alfworld.jsonl"]
    results = []
    for chosen in sets:
        result = run(chosen, args.model_dir, args.store, args.min_score)
        print(f"\n== {chosen.name}")
        print_table(result)
        results.append(result)
    if args.json:
        args.json.write_text(json.dumps(results if len(results) > 1 else results[0], indent=2))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
