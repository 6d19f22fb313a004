"""Where the corpus set's R@3 misses are, and whether their labels are ambiguous (#26).

    python benchmarks/routing_misses.py --keep KEEP   # summaries only (the default)
    SKILLBANK_BODY_SECTIONS=1 python benchmarks/routing_misses.py --keep KEEP   # body side on
    python benchmarks/routing_misses.py --duplicates                            # no model, no bank

`--keep KEEP`: the corpus bank `routing_sets.py --sets corpus --keep KEEP` built (KEEP/corpus/
bank; open it only while no other process embeds into it, or copy it first). For every dev
request answerable in the corpus whose skill (counted by name) is not in skillbank's top 3: the
top 3, whether the answer was emptied by the fit, the expected skill's rank among the top 50
with `min_score=0`, and per hit the cosine between its summary and the expected skill's (a hit
at ~0.8 does the same job under another name: a label ambiguity, not a ranking miss).
`--duplicates`: the expected skills that have a near-duplicate under another name in the
corpus (body word Jaccard >= 0.5, or the same description).
"""

from __future__ import annotations

import argparse
import json
import os
import re
import sys
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))
from _common import default_model_dir  # noqa: E402
from routing_sets import SETS, load_queries  # noqa: E402


def corpus_docs() -> dict[str, list]:
    from skillbank.memories.skills.skill_file import read_skill_file

    docs: dict[str, list] = {}
    for path in sorted(SETS["corpus"].rglob("SKILL.md")):
        doc, _ = read_skill_file(path)
        if doc is not None:
            docs.setdefault(doc.name, []).append((path, doc))
    return docs


def words(text: str) -> set[str]:
    return set(re.findall(r"[a-z0-9]+", text.lower()))


def duplicates(expected: list[str], docs: dict[str, list]) -> dict[str, list]:
    found = {}
    for name in expected:
        if name not in docs:
            continue
        _, mine = docs[name][0]
        mine_words = words(mine.description + " " + mine.body)
        near = []
        for other, copies in docs.items():
            if other == name:
                continue
            for path, doc in copies:
                theirs = words(doc.description + " " + doc.body)
                jaccard = len(mine_words & theirs) / max(1, len(mine_words | theirs))
                if jaccard >= 0.5 or doc.description.strip() == mine.description.strip():
                    near.append((other, round(jaccard, 2),
                                 str(path.relative_to(SETS["corpus"])).split("/")[0]))
        if near:
            found[name] = sorted(near, key=lambda row: -row[1])
    return found


def misses(keep: Path, docs: dict[str, list], model_dir: str) -> list[dict]:
    from skillbank import Skillbank
    from skillbank.embeddings import MiniLMEmbedding

    queries = [q for q in load_queries("corpus", SETS["corpus"])[0] if q["expected"]]
    embedding = MiniLMEmbedding(model_dir=model_dir)
    bank = Skillbank.open(keep / "corpus" / "bank", skill_roots=[SETS["corpus"]],
                          include_bundled=False, sync=False, embedding_function=embedding)
    out = []
    try:
        bank.skills.sync()
        for q in queries:
            hits = bank.skills.search(q["query"], k=5)
            names = [h.name for h in hits]
            expected = set(q["expected"])
            ranks = [i for i, name in enumerate(names) if name in expected]
            if ranks and ranks[0] < 3:
                continue
            deep = [h.name for h in bank.skills.search(q["query"], k=50, min_score=0.0)]
            rank = min((deep.index(e) + 1 for e in expected if e in deep), default=None)
            row = {"qid": q["qid"], "kind": q["kind"], "query": q["query"],
                   "expected": sorted(expected), "top": names[:3], "expected_rank_k50": rank,
                   "emptied": not hits, "near": []}
            for name in names[:3]:
                if name in expected or name not in docs:
                    continue
                hit = docs[name][0][1]
                best = None
                for e in expected:
                    for _, doc in docs.get(e, []):
                        a, b = embedding.embed([f"{name}: {hit.description}",
                                                f"{e}: {doc.description}"])
                        cosine = float(np.dot(a, b) / np.linalg.norm(a) / np.linalg.norm(b))
                        if best is None or cosine > best[1]:
                            best = (e, round(cosine, 3))
                row["near"].append({"hit": name, "description": hit.description[:160],
                                    "closest_expected": best})
            out.append(row)
    finally:
        bank.close()
    return out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--keep", type=Path, default=None)
    parser.add_argument("--duplicates", action="store_true")
    parser.add_argument("--model-dir", default=None)
    args = parser.parse_args()
    docs = corpus_docs()
    print(f"load {os.getloadavg()[0]:.2f}; body sections "
          f"{os.environ.get('SKILLBANK_BODY_SECTIONS', '0')}", file=sys.stderr)
    if args.duplicates:
        expected = sorted({e for q in load_queries("corpus", SETS["corpus"])[0]
                           for e in q["expected"]})
        found = duplicates(expected, docs)
        print(json.dumps(found, indent=1))
        print(f"{len(found)} of {len(expected)} expected skills have a near-duplicate under "
              f"another name", file=sys.stderr)
    if args.keep:
        rows = misses(args.keep, docs, args.model_dir or default_model_dir())
        print(json.dumps(rows, indent=1, ensure_ascii=False))
        print(f"{len(rows)} R@3 misses; {sum(r['emptied'] for r in rows)} emptied by the fit; "
              f"{sum(r['expected_rank_k50'] is None for r in rows)} outside the top 50",
              file=sys.stderr)


if __name__ == "__main__":
    main()
