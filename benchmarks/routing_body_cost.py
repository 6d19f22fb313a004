"""What the body side of skill ranking costs (#26): texts, tokens, embedding CPU, memory, search.

    python benchmarks/routing_body_cost.py [--sample 120] [--corpus DIR]

Over the shared corpus (or DIR): how many texts and MiniLM tokens one text per skill (the
summary, before) and summary + body sections (after) are; the CPU seconds to embed a sample of
skills both ways, alternated in this process (CPU time, not wall: the machine is shared), scaled
to the corpus by tokens; the in-memory matrix each holds (dense_live); and the dense side's CPU
per search (exact cosine over the matrix and the nearest 1,000, asked once before, twice after:
the summaries alone, then every text, the second reusing the first's cosines).
"""

from __future__ import annotations

import argparse
import os
import random
import statistics
import sys
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))
from _common import SHARED, default_model_dir  # noqa: E402


def items_of(corpus: Path) -> list:
    from skillbank.memories.skills.library import index_item_for
    from skillbank.memories.skills.skill_file import read_skill_file

    items, seen = [], set()
    for path in sorted(corpus.rglob("SKILL.md")):
        doc, _ = read_skill_file(path)
        if doc is None or doc.name in seen:
            continue
        seen.add(doc.name)
        items.append(index_item_for(doc, doc.name, path, corpus, "x", False))
    return items


def search_cpu(rows: int, summaries: int, repeats: int = 300) -> float:
    """CPU ms per search of the dense side over `rows` unit vectors (`summaries` of them the
    first texts): before one pass over a summaries-only matrix, after two selections."""
    rng = np.random.default_rng(1)
    matrix = rng.normal(size=(rows, 384)).astype(np.float32)
    matrix /= np.linalg.norm(matrix, axis=1, keepdims=True)
    is_summary = np.zeros(rows, dtype=bool)
    is_summary[:summaries] = True
    names = np.array([f"s{i}" for i in range(rows)], dtype=object)
    samples = []
    for _ in range(repeats):
        query = rng.normal(size=384).astype(np.float32)
        start = time.process_time()
        similarity = np.einsum("ij,j->i", matrix, query / np.linalg.norm(query))
        for mask in ([None] if rows == summaries else [is_summary, None]):
            scored = similarity if mask is None else np.where(mask, similarity, -np.inf)
            n = min(1000, rows)
            top = np.argpartition(-scored, n - 1)[:n]
            top = top[np.argsort(-scored[top], kind="stable")]
            names[top].tolist(), (1.0 - scored[top].astype(np.float64)).tolist()
        samples.append(time.process_time() - start)
    return 1000 * statistics.median(samples)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--corpus", type=Path, default=SHARED / "corpora" / "skills")
    parser.add_argument("--sample", type=int, default=120)
    parser.add_argument("--model-dir", default=None)
    args = parser.parse_args()
    from tokenizers import Tokenizer

    from skillbank.embeddings import MiniLMEmbedding

    model_dir = args.model_dir or default_model_dir()
    print(f"load {os.getloadavg()[0]:.2f} (1 min) on {os.cpu_count()} cores", flush=True)
    items = items_of(args.corpus)
    summaries = [i.embed_texts[0] for i in items]
    sections = [t for i in items for t in i.embed_texts[1:]]
    tokenizer = Tokenizer.from_file(str(Path(model_dir) / "onnx" / "tokenizer.json"))
    tokenizer.enable_truncation(256)

    def tokens(texts: list[str]) -> int:
        return sum(len(e.ids) for e in tokenizer.encode_batch(texts))

    t_sum, t_sec = tokens(summaries), tokens(sections)
    print(f"{len(items)} skills: {len(items)} summaries ({t_sum:,} tokens); "
          f"{len(sections)} section texts ({len(sections) / len(items):.1f} per skill, "
          f"{t_sec:,} tokens): {len(items) + len(sections)} texts, "
          f"{(t_sum + t_sec) / t_sum:.1f}x the tokens")

    embedding = MiniLMEmbedding(model_dir=model_dir)
    embedding.embed(["load the model"])
    sample = random.Random(7).sample(items, min(args.sample, len(items)))
    before_texts = [i.embed_texts[0] for i in sample]
    after_texts = [t for i in sample for t in i.embed_texts]
    cpu = {"before": [], "after": []}
    for _ in range(2):  # alternated
        for label, texts in (("before", before_texts), ("after", after_texts)):
            start = time.process_time()
            embedding.embed(texts)
            cpu[label].append(time.process_time() - start)
    b, a = min(cpu["before"]), min(cpu["after"])
    whole_b = b * t_sum / max(tokens(before_texts), 1)
    whole_a = a * (t_sum + t_sec) / max(tokens(after_texts), 1)
    print(f"embedding CPU, {len(sample)} skills (best of 2, alternated): before {b:.1f} CPU-s, "
          f"after {a:.1f} CPU-s ({a / b:.1f}x); the corpus, by tokens: before ~{whole_b:.0f} "
          f"CPU-s, after ~{whole_a:.0f} CPU-s (load {os.getloadavg()[0]:.2f})")
    rows_after = len(items) + len(sections)
    print(f"in-memory matrix (float32, 384 dims): before {len(items) * 384 * 4 / 1e6:.1f} MB, "
          f"after {rows_after * 384 * 4 / 1e6:.1f} MB")
    before_ms = search_cpu(len(items), len(items))
    after_ms = search_cpu(rows_after, len(items))
    before_ms2 = search_cpu(len(items), len(items))
    after_ms2 = search_cpu(rows_after, len(items))
    print(f"dense side CPU per search (median of 300, alternated): before {before_ms:.2f} / "
          f"{before_ms2:.2f} ms, after {after_ms:.2f} / {after_ms2:.2f} ms "
          f"(load {os.getloadavg()[0]:.2f})")


if __name__ == "__main__":
    main()
