"""Experience write throughput: `record()` one by one vs `record_many()` in batches.

    python benchmarks/record_throughput.py                      # N=500, batches of 50 and 500
    python benchmarks/record_throughput.py --n 1000 --batches 100,1000 --no-hash

Each row records the same N synthetic experiences (`_synthetic.synthetic_experiences`: the real
experience-recall set, as `record()` keyword arguments) into a fresh temp bank on the embedded
Chroma client, with the real model (MiniLMEmbedding, from `default_model_dir()`), warmed up
first. Baseline, same run: `record()` in a loop. Every row says how many records it stored and
folded, so the paths can be seen to agree (near-duplicates fold the same way in a batch). With
`--hash` (default on) the same is repeated with HashEmbedding, to show the cost without the
model. The last row of each table is the ceiling: the same texts embedded in one call with
nothing stored. Timings are printed, never asserted; the machine load is printed next to them.
"""

from __future__ import annotations

import argparse
import sys
import tempfile
import time
from pathlib import Path
from typing import Any, Callable

sys.path.insert(0, str(Path(__file__).resolve().parent))
from _common import default_model_dir  # noqa: E402
from _synthetic import load_note, synthetic_experiences  # noqa: E402


def make_embedding(kind: str, model_dir: str | None) -> Any:
    from skillbank.embeddings import HashEmbedding, MiniLMEmbedding

    if kind == "hash":
        return HashEmbedding()
    embedding = MiniLMEmbedding(model_dir=model_dir)
    embedding.embed(["warm up the session"])
    return embedding


def timed(root: Path, embedding: Any, write: Callable[[Any], list[str]]) -> dict[str, Any]:
    from skillbank import Skillbank

    with Skillbank.open(root, embedding_function=embedding, include_bundled=False,
                        sync=False) as bank:
        memory = bank.experiences
        memory.sync()
        started = time.perf_counter()
        ids = write(memory)
        seconds = time.perf_counter() - started
        stored = memory.count("*")
    return {"n": len(ids), "s": seconds, "rate": len(ids) / seconds, "stored": stored,
            "folded": len(ids) - len(set(ids)), "load": load_note()}


def run(kind: str, experiences: list[dict[str, Any]], batches: list[int],
        model_dir: str | None, workdir: Path) -> None:
    label = "MiniLM" if kind == "minilm" else "hash embedding"
    print(f"\n## {label}, N={len(experiences)} — {load_note()}")
    print(f"{'path':34} {'experiences/s':>14} {'seconds':>8} {'stored':>7} {'folded':>7} "
          f"{'vs record()':>12}")
    rows = []
    base = timed(workdir / f"{kind}-record", make_embedding(kind, model_dir),
                 lambda memory: [memory.record(**e) for e in experiences])
    rows.append(("record() one by one (baseline)", base))
    for size in batches:
        def write(memory: Any, size: int = size) -> list[str]:
            ids: list[str] = []
            for start in range(0, len(experiences), size):
                ids += memory.record_many(experiences[start:start + size])
            return ids

        rows.append((f"record_many(), batches of {size}",
                     timed(workdir / f"{kind}-many-{size}", make_embedding(kind, model_dir),
                           write)))
    for name, row in rows:
        print(f"{name:34} {row['rate']:14.1f} {row['s']:8.2f} {row['stored']:7d} "
              f"{row['folded']:7d} {row['rate'] / base['rate']:11.1f}x   ({row['load']})")
    # The ceiling: the same texts embedded in one call, nothing stored.
    from skillbank.memories.experiences import embed_text
    from skillbank.records import Experience

    texts = [embed_text(Experience(task=e["task"], when_to_use=e.get("when_to_use", "")))
             for e in experiences]
    embedding = make_embedding(kind, model_dir)
    started = time.perf_counter()
    embedding.embed(texts)
    seconds = time.perf_counter() - started
    print(f"{'ceiling: embedding the texts alone':34} {len(texts) / seconds:14.1f} "
          f"{seconds:8.2f} {'':7} {'':7} {len(texts) / seconds / base['rate']:11.1f}x   "
          f"({load_note()})")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--n", type=int, default=500, help="experiences per row")
    parser.add_argument("--batches", default="50,500", help="record_many batch sizes")
    parser.add_argument("--hash", action=argparse.BooleanOptionalAction, default=True,
                        help="also measure with HashEmbedding (no model cost)")
    parser.add_argument("--model-dir", default=None)
    args = parser.parse_args()

    model_dir = args.model_dir or default_model_dir()
    experiences = list(synthetic_experiences(args.n))
    batches = [int(b) for b in args.batches.split(",") if b.strip()]
    print(f"# experience write throughput — {load_note()}")
    with tempfile.TemporaryDirectory(prefix="sb-record-") as tmp:
        run("minilm", experiences, batches, model_dir, Path(tmp))
        if args.hash:
            run("hash", experiences, batches, model_dir, Path(tmp))


if __name__ == "__main__":
    main()
