"""Skill library speed: sync (cold, no change, one change) and search latency by library size.

    python benchmarks/library_speed.py                        # sizes 100,1000,2000,5000
    python benchmarks/library_speed.py --sizes 100,1000 --embedding minilm
    python benchmarks/library_speed.py --sizes 5000 --embedding hash --profile

Libraries are copies of the real SKILL.md files in ../shared/corpora/skills under unique names
(see `_synthetic.py`). `--embedding auto` (default) uses the real model (MiniLMEmbedding) up to
`--minilm-max` (2,000) skills and HashEmbedding above, to keep a default run within ~10 minutes
on 2 cores; every row says which embedding built it. With a hash-built index, "search incl. query
embedding" is also given as an estimate: the search latency without embedding plus the measured
MiniLM time of the same query.

Baseline, same run: Chroma's own `ONNXMiniLM_L6_V2` (pads to 256 tokens) vs skillbank's
MiniLMEmbedding on the same texts and queries. Timings are printed, never asserted; the machine
load is printed next to them.
"""

from __future__ import annotations

import argparse
import cProfile
import io
import pstats
import random
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))
from _common import default_model_dir  # noqa: E402
from _synthetic import (  # noqa: E402
    build_skill_library,
    load_note,
    percentile,
    routing_queries,
)

TARGET_RESYNC_S = 1.0  # no-change re-sync of 2,000 skills
TARGET_SEARCH_MS = 30.0  # search p50 at 2,000 skills including the query embedding


def ms(seconds: float) -> float:
    return seconds * 1000.0


def make_embedding(kind: str, model_dir: str | None) -> Any:
    from skillbank.embeddings import HashEmbedding, MiniLMEmbedding

    return MiniLMEmbedding(model_dir=model_dir) if kind == "minilm" else HashEmbedding()


def clear_query_cache(embedding: Any) -> None:
    cache = getattr(embedding, "_query_cache", None)
    if cache is not None:
        cache.clear()


def profile_top(label: str, fn: Any, lines: int = 18) -> None:
    profiler = cProfile.Profile()
    profiler.enable()
    fn()
    profiler.disable()
    out = io.StringIO()
    pstats.Stats(profiler, stream=out).sort_stats("cumulative").print_stats(lines)
    print(f"\n--- profile: {label} (cumulative) ---")
    text = out.getvalue()
    start = text.find("   ncalls")
    print(text[start:] if start >= 0 else text)


# Baseline -----------------------------------------------------------------------------------------
def baseline(model_dir: str | None, texts: list[str], queries: list[str]) -> dict[str, Any]:
    """Chroma's ONNXMiniLM_L6_V2 vs MiniLMEmbedding on the same texts and single queries."""
    from chromadb.utils.embedding_functions.onnx_mini_lm_l6_v2 import ONNXMiniLM_L6_V2

    from skillbank.embeddings import MiniLMEmbedding

    if model_dir:
        ONNXMiniLM_L6_V2.DOWNLOAD_PATH = Path(model_dir)
    chroma = ONNXMiniLM_L6_V2()
    ours = MiniLMEmbedding(model_dir=model_dir)
    chroma(["warm up"])
    ours.embed(["warm up"])

    started = time.perf_counter()
    chroma_vectors = np.asarray(chroma(texts), dtype=np.float32)
    chroma_s = time.perf_counter() - started
    started = time.perf_counter()
    our_vectors = ours.embed(texts)
    ours_s = time.perf_counter() - started
    cosines = (chroma_vectors * our_vectors).sum(axis=1) / (
        np.linalg.norm(chroma_vectors, axis=1) * np.linalg.norm(our_vectors, axis=1))

    chroma_q, ours_q = [], []
    for query in queries:
        started = time.perf_counter()
        chroma([query])
        chroma_q.append(time.perf_counter() - started)
        started = time.perf_counter()
        ours.embed([query])
        ours_q.append(time.perf_counter() - started)
    return {
        "n": len(texts), "chroma_tps": len(texts) / chroma_s, "ours_tps": len(texts) / ours_s,
        "min_cos": float(cosines.min()), "chroma_q": chroma_q, "ours_q": ours_q,
    }


def minilm_query_times(model_dir: str | None, queries: list[str]) -> dict[str, float]:
    """Fresh single-query MiniLM embedding time per query (for hash-built sizes' estimate)."""
    from skillbank.embeddings import MiniLMEmbedding

    embedding = MiniLMEmbedding(model_dir=model_dir)
    embedding.embed(["warm up"])
    times = {}
    for query in queries:
        started = time.perf_counter()
        embedding.embed_query(query)
        times[query] = time.perf_counter() - started
    return times


# One library size ---------------------------------------------------------------------------------
def measure(size: int, kind: str, model_dir: str | None, queries: list[str], workdir: Path,
            profile: bool, resync_repeats: int = 3) -> dict[str, Any]:
    from skillbank import Skillbank
    from skillbank.memories.skills.skill_file import SkillDocument, read_skill_file, render_skill
    from skillbank.memories.skills.library import index_item_for

    row: dict[str, Any] = {"size": size, "embedding": kind}
    skills_root = workdir / f"skills-{size}"
    started = time.perf_counter()
    paths = build_skill_library(skills_root, size)
    row["build_s"] = time.perf_counter() - started

    embedding = make_embedding(kind, model_dir)
    bank = Skillbank.open(workdir / f"bank-{size}", skill_roots=[skills_root],
                          embedding_function=embedding, include_bundled=False, sync=False)
    try:
        library = bank.skills
        row["load_cold"] = load_note()
        before = embedding.calls
        started = time.perf_counter()
        report = library.sync()
        row["cold_s"] = time.perf_counter() - started
        row["cold_texts"] = embedding.calls - before
        row["cold_added"] = len(report.added)
        row["cold_tps"] = row["cold_texts"] / row["cold_s"]
        print(f"  [{size}] cold sync {row['cold_s']:.1f}s, {row['cold_added']} skills, "
              f"{row['cold_texts']} texts ({row['load_cold']})", file=sys.stderr)

        # No change: same process (mirror in memory), then a reopened bank (mirror from Chroma).
        times = []
        for _ in range(resync_repeats):
            before = embedding.calls
            started = time.perf_counter()
            report = library.sync()
            times.append(time.perf_counter() - started)
            assert embedding.calls == before and not report.changed_anything, report
        row["resync_s"] = float(np.median(times))
        row["resync_unchanged"] = report.unchanged
        if profile:
            profile_top(f"no-change re-sync, {size} skills", library.sync)

        # One changed file: exactly that skill's texts must be embedded.
        target = paths[len(paths) // 2]
        doc, _ = read_skill_file(target)
        doc = SkillDocument(frontmatter=doc.frontmatter,
                            body=doc.body + "\n## Benchmark change\nOne more line, edited now.\n")
        target.write_text(render_skill(doc), encoding="utf-8")
        expected = len(index_item_for(doc, doc.name, target, skills_root, "", False).embed_texts)
        before = embedding.calls
        started = time.perf_counter()
        report = library.sync()
        row["change_s"] = time.perf_counter() - started
        row["change_embedded"] = embedding.calls - before
        row["change_expected"] = expected
        row["change_ok"] = (row["change_embedded"] == expected and report.changed == [doc.name]
                            and not report.added and not report.removed)

        # Search. Warm Chroma's HNSW and BM25 first with an unrelated query.
        library.search("warm up the index please", k=5)
        clear_query_cache(embedding)
        row["load_search"] = load_note()
        index = bank.index("skills")
        spent = {"embed": 0.0, "index": 0.0}
        original_embed, original_search = embedding.embed_query, index.search

        def timed(key: str, fn: Any) -> Any:
            def wrapper(*a: Any, **kw: Any) -> Any:
                started = time.perf_counter()
                try:
                    return fn(*a, **kw)
                finally:
                    spent[key] += time.perf_counter() - started
            return wrapper

        incl, incl_embed, incl_index = [], [], []
        embedding.embed_query = timed("embed", original_embed)
        index.search = timed("index", original_search)
        try:
            for query in queries:  # fresh: each query embedded now
                spent.update(embed=0.0, index=0.0)
                started = time.perf_counter()
                library.search(query, k=5)
                incl.append(time.perf_counter() - started)
                incl_embed.append(spent["embed"])
                incl_index.append(spent["index"] - spent["embed"])
        finally:
            del embedding.embed_query, index.search
        vectors = {q: embedding.embed_query(q) for q in queries}
        excl = []
        embedding.embed_query = vectors.__getitem__  # precomputed: no embedding at all
        try:
            for query in queries:
                started = time.perf_counter()
                library.search(query, k=5)
                excl.append(time.perf_counter() - started)
        finally:
            del embedding.embed_query
        row["search_incl"] = incl
        row["search_excl"] = excl
        row["search_embed"] = incl_embed
        row["search_index"] = incl_index
        if profile:
            def run() -> None:
                for query in queries:
                    library.search(query, k=5)
            profile_top(f"search x{len(queries)} (cached query vectors), {size} skills", run)

        # Reopen: a new bank object on the same root re-reads the mirror from Chroma.
        bank.close()
        started = time.perf_counter()
        bank = Skillbank.open(workdir / f"bank-{size}", skill_roots=[skills_root],
                              embedding_function=embedding, include_bundled=False, sync=False)
        report = bank.skills.sync()
        row["reopen_s"] = time.perf_counter() - started
        row["reopen_embedded"] = report.embedded
    finally:
        bank.close()
    return row


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sizes", default="100,1000,2000,5000")
    parser.add_argument("--embedding", choices=["auto", "minilm", "hash"], default="auto",
                        help="auto: MiniLM up to --minilm-max skills, hash above")
    parser.add_argument("--minilm-max", type=int, default=2000)
    parser.add_argument("--queries", type=int, default=100, help="search queries per size")
    parser.add_argument("--baseline-texts", type=int, default=50)
    parser.add_argument("--model-dir", default=None)
    parser.add_argument("--profile", action="store_true",
                        help="print cProfile of no-change re-sync and search per size")
    parser.add_argument("--keep", type=Path, default=None, help="work here instead of a temp dir")
    args = parser.parse_args()

    model_dir = args.model_dir or default_model_dir()
    sizes = [int(s) for s in args.sizes.split(",") if s.strip()]
    kinds = {n: (args.embedding if args.embedding != "auto"
                 else ("minilm" if n <= args.minilm_max else "hash")) for n in sizes}
    queries = routing_queries()[: args.queries]
    print(f"# skill library speed — {load_note()}")
    print("# embedding per size: " + ", ".join(f"{n}={kinds[n]}" for n in sizes)
          + f"; {len(queries)} search queries (skill-routing set)")

    # Baseline on texts a library really embeds, sampled across the corpus.
    from _synthetic import corpus_skills
    from skillbank.memories.skills.library import index_item_for

    rng = random.Random(5)
    pool = []
    for doc, slug in corpus_skills():
        pool.extend(index_item_for(doc, slug, Path("x"), Path("."), "", True).embed_texts)
    sample = rng.sample(pool, min(args.baseline_texts, len(pool)))
    base = baseline(model_dir, sample, queries[:20])
    print(f"\n## Baseline (same run): embedding {base['n']} library texts, then 20 single queries "
          f"— {load_note()}")
    print(f"{'':34} {'texts/s':>9} {'query p50 ms':>13}")
    print(f"{'Chroma ONNXMiniLM_L6_V2':34} {base['chroma_tps']:9.1f} "
          f"{ms(percentile(base['chroma_q'], 50)):13.1f}")
    print(f"{'skillbank MiniLMEmbedding':34} {base['ours_tps']:9.1f} "
          f"{ms(percentile(base['ours_q'], 50)):13.1f}")
    print(f"ratio skillbank/Chroma: {base['ours_tps'] / base['chroma_tps']:.1f}x texts/s, "
          f"{percentile(base['chroma_q'], 50) / percentile(base['ours_q'], 50):.1f}x faster per "
          f"query; min cosine between their vectors {base['min_cos']:.6f}")

    minilm_q = minilm_query_times(model_dir, queries) if "hash" in kinds.values() else {}
    rows = []
    with tempfile.TemporaryDirectory(prefix="sb-libspeed-") as tmp:
        workdir = args.keep or Path(tmp)
        workdir.mkdir(parents=True, exist_ok=True)
        for size in sizes:
            rows.append(measure(size, kinds[size], model_dir, queries, workdir, args.profile))

    print(f"\n## Sync — {load_note()}")
    print(f"{'skills':>7} {'embedding':>9} {'cold s':>8} {'texts':>7} {'texts/s':>8} "
          f"{'no-change s':>12} {'reopen+sync s':>14} {'1-change s':>11} "
          f"{'1-change embedded':>18}")
    for r in rows:
        ok = "ok" if r["change_ok"] else "WRONG"
        print(f"{r['size']:7} {r['embedding']:>9} {r['cold_s']:8.1f} {r['cold_texts']:7} "
              f"{r['cold_tps']:8.0f} {r['resync_s']:12.3f} {r['reopen_s']:14.3f} "
              f"{r['change_s']:11.3f} {r['change_embedded']:>8} of {r['change_expected']:<3} {ok:>5}")

    print(f"\n## Search latency, bank.skills.search(k=5), {len(queries)} queries, ms — {load_note()}")
    print(f"{'skills':>7} {'embedding':>9} {'incl. p50':>10} {'incl. p95':>10} "
          f"{'(embed':>7} {'index':>6} {'rest)':>6} {'excl. p50':>10} {'excl. p95':>10} "
          f"{'MiniLM-est. p50/p95':>20}")
    for r in rows:
        incl, excl = r["search_incl"], r["search_excl"]
        rest = [t - e - i for t, e, i in zip(incl, r["search_embed"], r["search_index"])]
        est = ""
        if r["embedding"] == "hash" and minilm_q:
            total = [e + minilm_q[q] for e, q in zip(excl, queries)]
            est = f"{ms(percentile(total, 50)):.1f} / {ms(percentile(total, 95)):.1f}"
        print(f"{r['size']:7} {r['embedding']:>9} {ms(percentile(incl, 50)):10.1f} "
              f"{ms(percentile(incl, 95)):10.1f} {ms(percentile(r['search_embed'], 50)):7.1f} "
              f"{ms(percentile(r['search_index'], 50)):6.1f} {ms(percentile(rest, 50)):6.1f} "
              f"{ms(percentile(excl, 50)):10.1f} {ms(percentile(excl, 95)):10.1f} {est:>20}")
    print("incl. = query embedded now (fresh); its p50 split: embed = query embedding, index = "
          "rest of HybridIndex.search (Chroma + BM25 + fusion), rest = library (filter, prior, "
          "records). excl. = same call with the query vector precomputed.")
    if minilm_q:
        print(f"MiniLM-est. (hash-built sizes) = excl. + that query's fresh MiniLM embedding time "
              f"(MiniLM query p50 {ms(percentile(list(minilm_q.values()), 50)):.1f} ms).")
    print("\n## Targets")
    near = min(rows, key=lambda r: abs(r["size"] - 2000))
    print(f"no-change re-sync at {near['size']} skills: {near['resync_s']:.3f}s "
          f"(target < {TARGET_RESYNC_S}s at 2,000) -> "
          f"{'met' if near['resync_s'] < TARGET_RESYNC_S else 'MISSED'}")
    print("one changed file -> exactly one skill's embeddings: "
          + ", ".join(f"{r['size']}: {r['change_embedded']}/{r['change_expected']}"
                      f"{'' if r['change_ok'] else ' WRONG'}" for r in rows))
    if near["embedding"] == "minilm":
        p50 = percentile(near["search_incl"], 50)
        how = "measured"
    else:
        p50 = percentile([e + minilm_q[q] for e, q in zip(near["search_excl"], queries)], 50)
        how = "estimated: hash-built index + measured MiniLM query time"
    print(f"search p50 incl. query embedding at {near['size']} skills: {ms(p50):.1f} ms "
          f"({how}; target < {TARGET_SEARCH_MS:.0f} ms at 2,000) -> "
          f"{'met' if ms(p50) < TARGET_SEARCH_MS else 'MISSED'}")
    print(f"# done — {load_note()}")


if __name__ == "__main__":
    main()
