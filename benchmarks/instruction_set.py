"""A unit set of short and compound critiques: is every instruction kept as a live rule?

    python benchmarks/instruction_set.py            # hash embedding (fast, lexical)
    python benchmarks/instruction_set.py --minilm   # the real all-MiniLM-L6-v2 model

`benchmarks/data/critique_instructions.jsonl` holds realistic critiques from several domains
(code review, SQL, support, writing, slides, devops, security, data ...), 1-3 instructions each,
written for this check (not taken from any benchmark), and contradiction pairs: a rule, then a
later critique that overrules it. Every critique streams through one guideline memory in order:
the first half of each pair at the start, the regular critiques, then the overruling critiques.

Scored: an instruction is *kept* when an active guideline's text contains all of its key words
(so a rule merged into another, dropped as "no advice" or superseded by mistake is lost); a
contradiction pair is *right* when the old rule ends superseded and the new one active. Guard
figure: guidelines whose text holds the key words of two instructions of one critique (a merge
inside a critique). Retrieval figure: with each compound critique as the task, how many of its
instructions are among the top 5 guidelines.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

DATA = Path(__file__).resolve().parent / "data" / "critique_instructions.jsonl"


def load_rows(path: Path = DATA) -> list[dict[str, Any]]:
    return [json.loads(line) for line in path.open(encoding="utf-8") if line.strip()]


def _has(text: str, words: list[str]) -> bool:
    low = text.lower()
    return all(w.lower() in low for w in words)


def run(memory: Any, rows: list[dict[str, Any]]) -> dict[str, Any]:
    """Stream the set through `memory` (a GuidelineMemory) and score it."""
    regular = [r for r in rows if r.get("kind") != "contradiction"]
    pairs = [r for r in rows if r.get("kind") == "contradiction"]
    stream = ([p["first"] for p in pairs] + [r["critique"] for r in regular]
              + [p["later"] for p in pairs])
    for critique in stream:
        memory.learn(critique)
    everything = memory.list(namespace="*")
    active = [g for g in everything if g.status == "active"]
    lost: list[str] = []
    merged_inside: list[str] = []
    total = 0
    for row in regular:
        for words in row["instructions"]:
            total += 1
            if not any(_has(g.text, words) for g in active):
                lost.append(f"{row['id']}: {' + '.join(words)}")
        for g in active:
            if sum(_has(g.text, words) for words in row["instructions"]) > 1:
                merged_inside.append(f"{row['id']}: {g.text}")
    # Retrieval guard: with a compound critique itself as the task, its instructions should all
    # be in the top 5 (a ranking that hides one of them hides an instruction from the agent).
    compound = [r for r in regular if len(r["instructions"]) > 1]
    in_top5 = 0
    for row in compound:
        texts = [h.record.text for h in memory.search(row["critique"], k=5)]
        in_top5 += sum(any(_has(t, words) for t in texts) for words in row["instructions"])
    wrong_pairs: list[str] = []
    for pair in pairs:
        old = [g for g in everything if _has(g.text, pair["old"])]
        new = [g for g in active if _has(g.text, pair["new"])]
        old_ok = bool(old) and all(g.status == "superseded" for g in old)
        if not (old_ok and new):
            wrong_pairs.append(f"{pair['id']}: old {[(g.text, g.status) for g in old]}, "
                               f"new active {[g.text for g in new]}")
    return {
        "critiques": len(stream),
        "instructions": total,
        "kept": total - len(lost),
        "kept_rate": (total - len(lost)) / total if total else 1.0,
        "lost": lost,
        "merged_inside_a_critique": merged_inside,
        "pairs": len(pairs),
        "pairs_right": len(pairs) - len(wrong_pairs),
        "wrong_pairs": wrong_pairs,
        "compound_instructions": sum(len(r["instructions"]) for r in compound),
        "compound_in_top5": in_top5,
        "active": len(active),
        "counts": memory.counts(namespace="*"),
    }


def main() -> int:
    import argparse
    import sys
    import tempfile

    sys.path.insert(0, str(Path(__file__).resolve().parent))
    parser = argparse.ArgumentParser(description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--minilm", action="store_true", help="use the real embedding model")
    args = parser.parse_args()
    from skillbank import Skillbank
    from skillbank.embeddings import HashEmbedding, MiniLMEmbedding

    if args.minilm:
        from _common import default_model_dir

        embedding: Any = MiniLMEmbedding(model_dir=default_model_dir())
    else:
        embedding = HashEmbedding()
    with tempfile.TemporaryDirectory() as tmp:
        bank = Skillbank.open(tmp, embedding_function=embedding, include_bundled=False)
        result = run(bank.guidelines, load_rows())
        bank.close()
    print(json.dumps(result, indent=1))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
