"""Skill routing quality: skillbank's search vs. two baselines, measured in the same run.

    python benchmarks/routing.py --set ../shared/benchmarks/skill-routing
    python benchmarks/routing.py --corpus-root /tmp/corpus-root   # keep the corpus index

The set folder holds `library.jsonl` ({id, name, path}), `queries.jsonl` ({qid, query, expected,
kind}) and the skill files. Baselines: dense cosine over the description alone (what most skill
MCP servers do) and BM25 alone over name, description and body. All three use the same model.

Abstention ("no skill fits" = an empty answer): the set's own "none" queries plus the 160
out-of-scope requests in benchmarks/data/out_of_scope.jsonl (general knowledge, chit-chat, tasks
near but outside any skill), asked of the dev library and of the whole corpus
(../shared/corpora/skills, ~1,750 skills; answerable dev queries there count by skill name).
Reported: the share of out-of-scope requests answered empty (target >= 0.9) and the guard, the
share of answerable requests wrongly emptied (<= 0.03); plus the skill search scores' range.
The abstention constants were chosen on those requests, so the same share is also reported on
benchmarks/data/out_of_scope_heldout.jsonl (136 other requests, written before any fitting and
never used to choose anything): "held-out empty".

Before/after in one run: point PYTHONPATH at a copy of the package with the old code; the line
"skillbank from" says which code answered.
"""

from __future__ import annotations

import argparse
import json
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))
from _common import SHARED, default_model_dir  # noqa: E402


def load_set(folder: Path) -> tuple[list[dict], list[dict]]:
    library = [json.loads(line) for line in (folder / "library.jsonl").open()]
    queries = [json.loads(line) for line in (folder / "queries.jsonl").open()]
    return library, queries


def score(ranked: list[list[str]], queries: list[dict]) -> dict[str, float]:
    """Recall@1/@3 and MRR over answerable queries; wrong answers on the "none" ones."""
    r1 = r3 = rr = 0.0
    answerable = none_wrong = none_total = 0
    for ids, query in zip(ranked, queries):
        expected = set(query["expected"])
        if not expected:
            none_total += 1
            none_wrong += bool(ids)
            continue
        answerable += 1
        ranks = [i for i, item in enumerate(ids) if item in expected]
        if ranks:
            r1 += ranks[0] == 0
            r3 += ranks[0] < 3
            rr += 1.0 / (ranks[0] + 1)
    n = max(answerable, 1)
    return {"R@1": r1 / n, "R@3": r3 / n, "MRR": rr / n, "none_wrong": none_wrong,
            "none_total": none_total}


OUT_OF_SCOPE = Path(__file__).resolve().parent / "data" / "out_of_scope.jsonl"
HELDOUT = Path(__file__).resolve().parent / "data" / "out_of_scope_heldout.jsonl"


def read_jsonl(path: Path) -> list[dict]:
    return [json.loads(line) for line in path.open() if line.strip()]


def abstention(bank, queries: list[dict], out_of_scope: list[dict], names: dict[str, str],
               heldout: list[dict] | None = None) -> dict[str, float]:
    """Share of out-of-scope requests answered empty (in-sample and held-out), of answerable
    ones wrongly emptied, and R@1/R@3 by skill name, on one bank."""
    answerable = [q for q in queries if q["expected"]]
    none = [q for q in queries if not q["expected"]] + out_of_scope
    emptied = r1 = r3 = 0
    scores: list[float] = []
    for query in answerable:
        hits = bank.skills.search(query["query"], k=5)
        scores += [h.score for h in hits]
        expected = {names[e] for e in query["expected"]}
        got = [h.name for h in hits]
        emptied += not got
        r1 += bool(got) and got[0] in expected
        r3 += any(g in expected for g in got[:3])
    answered_empty = 0
    for query in none:
        hits = bank.skills.search(query["query"], k=5)
        scores += [h.score for h in hits]
        answered_empty += not hits
    heldout = heldout if heldout is not None else read_jsonl(HELDOUT)
    heldout_empty = 0
    for query in heldout:
        hits = bank.skills.search(query["query"], k=5)
        scores += [h.score for h in hits]
        heldout_empty += not hits
    return {"heldout_empty": heldout_empty / max(len(heldout), 1), "heldout_total": len(heldout),
            "R@1": r1 / len(answerable), "R@3": r3 / len(answerable),
            "oos_empty": answered_empty / len(none), "oos_total": len(none),
            "wrongly_emptied": emptied / len(answerable), "answerable": len(answerable),
            "score_min": min(scores, default=0.0), "score_max": max(scores, default=0.0)}


def corpus_run(corpus: Path, root: Path, model_dir: str | None, queries: list[dict],
               out_of_scope: list[dict], names: dict[str, str]) -> dict[str, float]:
    from skillbank import Skillbank
    from skillbank.embeddings import MiniLMEmbedding

    started = time.perf_counter()
    bank = Skillbank.open(root, skill_roots=[corpus], include_bundled=False, sync=False,
                          embedding_function=MiniLMEmbedding(model_dir=model_dir))
    try:
        report = bank.skills.sync()
        print(f"corpus: {bank.index('skills').count()} skills ({report.embedded} texts embedded) "
              f"in {time.perf_counter() - started:.1f}s", file=sys.stderr)
        return abstention(bank, queries, out_of_scope, names)
    finally:
        bank.close()


def run(folder: Path, model_dir: str | None) -> dict[str, dict[str, float]]:
    from skillbank import Skillbank
    from skillbank.embeddings import MiniLMEmbedding
    from skillbank.index import tokenize
    from skillbank.memories.skills.skill_file import read_skill_file

    library, queries = load_set(folder)
    path_to_id = {str((folder / item["path"]).resolve()): item["id"] for item in library}
    embedding = MiniLMEmbedding(model_dir=model_dir)
    results: dict[str, dict[str, float]] = {}

    with tempfile.TemporaryDirectory() as tmp:
        started = time.perf_counter()
        bank = Skillbank.open(tmp, skill_roots=[folder / "skills"], embedding_function=embedding,
                              include_bundled=False, sync=False)
        report = bank.skills.sync()
        print(f"indexed {len(report.added)} skills ({report.embedded} texts) "
              f"in {time.perf_counter() - started:.1f}s", file=sys.stderr)
        ranked = []
        for query in queries:
            hits = bank.skills.search(query["query"], k=5)
            ranked.append([path_to_id.get(str(Path(h.path).resolve()), h.name) for h in hits])
        results["skillbank search"] = score(ranked, queries)
        names = {item["id"]: item["name"] for item in library}
        out_of_scope = read_jsonl(OUT_OF_SCOPE)
        results["abstention: dev library"] = abstention(bank, queries, out_of_scope, names)
        bank.close()

    # Baselines over the same library, same model.
    docs = []
    for item in library:
        doc, _ = read_skill_file(folder / item["path"])
        docs.append(doc)
    descriptions = embedding.embed([d.description if d else "" for d in docs])
    dense_ranked = []
    for query in queries:
        sims = descriptions @ embedding.embed_query(query["query"])
        dense_ranked.append([library[i]["id"] for i in np.argsort(-sims)[:5]])
    results["dense over description"] = score(dense_ranked, queries)

    import bm25s

    retriever = bm25s.BM25(k1=1.2, b=0.75)
    retriever.index([tokenize(f"{d.name} {d.description} {d.body}" if d else "") for d in docs],
                    show_progress=False)
    bm25_ranked = []
    for query in queries:
        terms = [t for t in tokenize(query["query"]) if t in retriever.vocab_dict]
        scores = retriever.get_scores(terms) if terms else np.zeros(len(docs))
        bm25_ranked.append([library[i]["id"] for i in np.argsort(-scores)[:5] if scores[i] > 0])
    results["BM25 alone"] = score(bm25_ranked, queries)
    return results


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--set", type=Path, default=None, help="routing set folder")
    parser.add_argument("--model-dir", default=None)
    parser.add_argument("--corpus", type=Path, default=SHARED / "corpora" / "skills")
    parser.add_argument("--corpus-root", type=Path, default=None,
                        help="memory root for the corpus index (kept; default: a temp dir)")
    parser.add_argument("--no-corpus", action="store_true", help="skip the whole-corpus run")
    args = parser.parse_args()
    folder = args.set or SHARED / "benchmarks" / "skill-routing"
    model_dir = args.model_dir or default_model_dir()
    import skillbank

    print(f"skillbank from {Path(skillbank.__file__).parent}", file=sys.stderr)
    results = run(folder, model_dir)
    library, queries = load_set(folder)
    if not args.no_corpus and args.corpus.is_dir():
        out_of_scope = read_jsonl(OUT_OF_SCOPE)
        names = {item["id"]: item["name"] for item in library}
        with tempfile.TemporaryDirectory() as tmp:
            results["abstention: whole corpus"] = corpus_run(
                args.corpus, args.corpus_root or Path(tmp), model_dir, queries, out_of_scope, names)
    print(f"{'system':28} {'R@1':>6} {'R@3':>6} {'MRR':>6}  none answered wrongly")
    for system, row in results.items():
        if "MRR" in row:
            print(f"{system:28} {row['R@1']:6.3f} {row['R@3']:6.3f} {row['MRR']:6.3f}  "
                  f"{row['none_wrong']}/{row['none_total']}")
    base = results["BM25 alone"]["R@1"] or 1e-9
    print(f"ratio skillbank/BM25 R@1: {results['skillbank search']['R@1'] / base:.2f}x")
    print(f"\n{'abstention':28} {'R@1':>6} {'R@3':>6} {'oos empty':>10} {'held-out empty':>15} "
          f"{'wrongly emptied':>16}  scores")
    for system, row in results.items():
        if "oos_empty" in row:
            print(f"{system:28} {row['R@1']:6.3f} {row['R@3']:6.3f} "
                  f"{row['oos_empty']:10.3f} {row['heldout_empty']:15.3f} "
                  f"{row['wrongly_emptied']:16.3f}  "
                  f"[{row['score_min']:.3f}, {row['score_max']:.3f}]  "
                  f"({row['oos_total']} out of scope, {row['heldout_total']} held out, "
                  f"{row['answerable']} answerable)")
    print("targets: out-of-scope answered empty >= 0.9; guard: answerable wrongly emptied <= 0.03")


if __name__ == "__main__":
    main()
