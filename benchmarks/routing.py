"""Skill routing quality: skillbank's search vs. two baselines, measured in the same run.

    python benchmarks/routing.py --set ../shared/benchmarks/skill-routing

The set folder holds `library.jsonl` ({id, name, path}), `queries.jsonl` ({qid, query, expected,
kind}) and the skill files. Baselines: dense cosine over the description alone (what most skill
MCP servers do) and BM25 alone over name, description and body. All three use the same model.
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
from _common import default_model_dir  # noqa: E402


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
    args = parser.parse_args()
    folder = args.set or Path(__file__).resolve().parents[2] / "shared/benchmarks/skill-routing"
    results = run(folder, args.model_dir or default_model_dir())
    print(f"{'system':28} {'R@1':>6} {'R@3':>6} {'MRR':>6}  none answered wrongly")
    for system, row in results.items():
        print(f"{system:28} {row['R@1']:6.3f} {row['R@3']:6.3f} {row['MRR']:6.3f}  "
              f"{row['none_wrong']}/{row['none_total']}")
    base = results["BM25 alone"]["R@1"] or 1e-9
    print(f"ratio skillbank/BM25 R@1: {results['skillbank search']['R@1'] / base:.2f}x")


if __name__ == "__main__":
    main()
