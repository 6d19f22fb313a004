"""Memory browser speed: page loads and searches at 2,000 skills / 10,000 experiences.

    python benchmarks/ui_speed.py                       # 2,000 skills, 10,000 experiences
    python benchmarks/ui_speed.py --skills 500 --experiences 2000 --repeat 5

Seeds a fresh temp root (real SKILL.md files from ../shared/corpora/skills under unique names,
varied real experiences from ../shared/benchmarks/experience-recall, 60 guidelines of which 10
pending) with HashEmbedding, so seeding takes seconds rather than the ~3 minutes MiniLM needs
for 12,000 texts; query embedding is then also the hash (add ~8 ms per search for MiniLM, see
docs/benchmarks.md). Serves `skillbank.ui.create_app` with uvicorn on loopback and fetches each
page with httpx, as a browser would (full HTML, no rendering).

Baseline, same run: the facade call(s) behind each page, timed directly in this process; the
ratio says what the page adds (HTTP, templates, markdown, SVG). Guard: every search page must
list the same skills in the same order as `bank.skills.search`, and the filtered timeline the
same records as `bank.experiences.list` filtered by hand (mismatches are printed, never hidden).
Timings are printed, never asserted; the machine load is printed next to them.
"""

from __future__ import annotations

import argparse
import re
import sys
import tempfile
import time
from pathlib import Path
from typing import Any, Callable

sys.path.insert(0, str(Path(__file__).resolve().parent))
sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "tests"))
from _synthetic import (build_skill_library, load_note, percentile, recall_queries,  # noqa: E402
                        routing_queries, synthetic_experiences)


def seed(bank: Any, skills_root: Path, n_skills: int, n_experiences: int) -> dict[str, float]:
    seconds: dict[str, float] = {}
    started = time.perf_counter()
    build_skill_library(skills_root, n_skills)
    bank.skills.sync()
    seconds["skills"] = time.perf_counter() - started
    started = time.perf_counter()
    rows = list(synthetic_experiences(n_experiences))
    for i in range(0, len(rows), 1000):
        bank.experiences.record_many(rows[i:i + 1000])
    seconds["experiences"] = time.perf_counter() - started
    names = bank.skills.names()
    for i, name in enumerate(names[:200]):  # usage for the stats pictures
        for _ in range(1 + i % 7):
            bank.skills.record_use(name, success=i % 3 != 0)
    for i in range(60):
        bank.guidelines.add(f"Rule {i}: prefer option {i} when topic {i % 6} comes up.",
                            topic=f"topic-{i % 6}", trusted=i >= 10)
    return seconds


def timed(fn: Callable[[], Any], repeat: int) -> tuple[list[float], Any]:
    out, result = [], None
    for _ in range(repeat):
        started = time.perf_counter()
        result = fn()
        out.append((time.perf_counter() - started) * 1000)
    return out, result


def row(label: str, page_ms: list[float], base_ms: list[float] | None) -> None:
    p50, p95 = percentile(page_ms, 50), percentile(page_ms, 95)
    if base_ms:
        b50 = percentile(base_ms, 50)
        print(f"| {label} | {p50:.0f} | {p95:.0f} | {b50:.0f} | {p50 / b50:.1f}x |")
    else:
        print(f"| {label} | {p50:.0f} | {p95:.0f} | – | – |")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--skills", type=int, default=2000)
    parser.add_argument("--experiences", type=int, default=10000)
    parser.add_argument("--repeat", type=int, default=10)
    parser.add_argument("--queries", type=int, default=20)
    args = parser.parse_args()

    import httpx

    from skillbank import Skillbank
    from skillbank.embeddings import HashEmbedding
    from skillbank.ui import Guard, create_app
    from skillbank.ui.stats import stats_page
    from skillbank.ui.views import TimelineFilter, experiences_page
    from test_ui_support import served

    work = Path(tempfile.mkdtemp(prefix="ui-speed-"))
    skills_root = work / "skills"
    bank = Skillbank.open(work / "root", skill_roots=[skills_root],
                          embedding_function=HashEmbedding(), sync=False)
    print(f"# Memory browser at {args.skills} skills / {args.experiences} experiences "
          f"(HashEmbedding) — {load_note()}")
    took = seed(bank, skills_root, args.skills, args.experiences)
    print(f"seeded: skills {took['skills']:.1f} s, experiences {took['experiences']:.1f} s; "
          f"{len(bank.skills.names())} skills, {bank.experiences.count('*')} records")
    guard = Guard()
    app = create_app(bank, guard)
    with served(app) as url, httpx.Client(base_url=url, timeout=120) as http:
        def get(path: str) -> str:
            response = http.get(path)
            response.raise_for_status()
            return response.text

        def post(path: str, data: dict[str, str]) -> str:
            response = http.post(path, data={"csrf": guard.csrf, **data},
                                 headers={"origin": url})
            response.raise_for_status()
            return response.text

        get("/skills")  # warm up every path once
        first_name = bank.skills.names()[0]
        n = args.repeat
        print(f"\n{load_note()}; p50/p95 over {n} loads (searches: over {args.queries} "
              "queries), ms\n")
        print("| page | p50 | p95 | facade p50 | page/facade |")
        print("|---|---:|---:|---:|---:|")
        page, _ = timed(lambda: get("/skills"), n)
        base, _ = timed(lambda: bank.skills.list(), n)
        row(f"Skills (library, page 1 of {args.skills:,})", page, base)

        queries = routing_queries()[: args.queries]
        mismatches = 0
        page, base = [], []
        for q in queries:
            ms, html = timed(lambda: get(f"/skills?{httpx.QueryParams(q=q)}"), 1)
            page += ms
            ms, hits = timed(lambda: bank.skills.search(q, k=20), 1)
            base += ms
            shown = re.findall(r'<a href="/skills/[^"]+" class="name">([^<]+)</a>', html)
            mismatches += shown != [h.name for h in hits]
        row("Skills search (20 ranked)", page, base)

        page, _ = timed(lambda: get(f"/skills/{first_name}"), n)
        base, _ = timed(lambda: bank.skills.load(first_name), n)
        row("One skill (body rendered, validated)", page, base)

        page, _ = timed(lambda: get("/guidelines"), n)
        base, _ = timed(lambda: bank.guidelines.list(namespace="*"), n)
        row("Guidelines (60, 10 pending)", page, base)

        page, _ = timed(lambda: get("/experiences"), n)
        base, _ = timed(lambda: experiences_page(bank, TimelineFilter()), n)
        row("Experiences timeline (newest 100)", page, base)

        everything = bank.experiences.list(namespace="*", limit=args.experiences + 1000)
        tags: dict[str, int] = {}
        for e in everything:
            if e.outcome == "failure":
                for t in e.tags:
                    tags[t] = tags.get(t, 0) + 1
        tag = max(sorted(tags), key=lambda t: tags[t])  # the commonest failure tag
        page, html = timed(lambda: get(f"/experiences?outcome=failure&tag={tag}"), n)
        base, _ = timed(lambda: experiences_page(
            bank, TimelineFilter(outcome="failure", tag=tag)), n)
        row(f"Timeline filtered (outcome + tag, {tags[tag]} match)", page, base)
        expected = [e.id for e in everything if e.outcome == "failure" and tag in e.tags][:100]
        timeline_ok = re.findall(r'class="entry [a-z]+" data-id="([^"]+)"', html) == expected

        recall = recall_queries(args.queries)
        page, base = [], []
        for q in recall:
            ms, _ = timed(lambda: get(f"/experiences?{httpx.QueryParams(q=q)}"), 1)
            page += ms
            ms, _ = timed(lambda: bank.experiences.recall(q, k=100, count_use=False), 1)
            base += ms
        row("Experiences search (recall, 100)", page, base)

        page, base = [], []
        for q in queries:
            ms, _ = timed(lambda: post("/context", {"task": q, "budget": "1500"}), 1)
            page += ms
            ms, _ = timed(lambda: bank.context_for(q, budget_tokens=1500), 1)
            base += ms
        row("Context preview (1,500 tokens)", page, base)

        cache = app.state.stats_cache
        cache.sync_limit = 10**9  # time the drawing itself, not the "drawing…" placeholder

        def cold_stats() -> str:
            cache.clear()
            return get("/stats")

        page, _ = timed(cold_stats, max(3, n // 3))
        base, _ = timed(lambda: stats_page(bank), max(3, n // 3))
        row("Stats, computed (3 SVG pictures)", page, base)
        page, _ = timed(lambda: get("/stats"), n)
        row("Stats, unchanged memory (cached up to 30 s)", page, None)
    print(f"\nguard: search pages whose ranking differs from bank.skills.search: {mismatches} "
          f"of {len(queries)}; filtered timeline equals the facade's records: {timeline_ok} "
          f"({len(expected)} records)")
    bank.close()


if __name__ == "__main__":
    main()
