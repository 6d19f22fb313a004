"""First run on a real-size library: how soon `find_skills` is useful, and when hybrid is complete.

    python benchmarks/first_run.py                          # corpus ../shared/corpora/skills
    python benchmarks/first_run.py --before a4b0d96         # the code to compare against
    python benchmarks/first_run.py --skip-before --no-breakdown
    python benchmarks/first_run.py --skip-before --body-side   # body side on vs off (#26 item 3)

For the code BEFORE (a git revision, checked out into a temporary worktree) and AFTER (this
checkout), in one run: a fresh empty root, `skillbank serve --skills-dir <corpus>` spawned over
stdio with the MCP SDK client (as benchmarks/mcp_latency.py does), then
* `initialize`: seconds from spawn to the initialize answer;
* first answer: seconds to the first `find_skills` result, and to the first *useful* one (the
  expected skill among the top 5; asked again every second until it is);
* complete: seconds until the hybrid index is complete (BEFORE: the first answer waits for it;
  AFTER: `skillbank://stats` reports `startup_seconds.skills_summaries`, every summary embedded;
  code before #26 item 3 reports it as `skills_dense`).
* sections: seconds until the body sections are embedded too (`startup_seconds.skills_dense`
  of code with the body side; blank for older code).
Plus an in-process breakdown of where first-run time goes (scan + hash, parse, embed, Chroma add,
BM25 build) with the current code, and the CPU seconds used, since this machine is shared:
wall times depend on the load (printed with them). Targets: < 30 s to the first useful answer,
< 90 s to a complete hybrid index.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))
from _common import SHARED, default_model_dir  # noqa: E402

REPO = Path(__file__).resolve().parents[1]
BEFORE_REV = "a4b0d96"  # HEAD when the progressive first run was started (issue #12)
TASK = "merge several PDF files into one and rotate some pages"
EXPECTED = "pdf"
TARGET_USEFUL_S = 30.0
TARGET_COMPLETE_S = 90.0


def say(text: str) -> None:
    print(text, file=sys.stderr, flush=True)


def load() -> str:
    return " ".join(f"{x:.1f}" for x in os.getloadavg())


def checkout(rev: str, where: Path) -> Path:
    """A detached worktree of `rev`, with the faces linked into its package so they import
    from it (an editable install maps `skillbank.mcp_server` to this checkout otherwise)."""
    subprocess.run(["git", "-C", str(REPO), "worktree", "add", "--detach", str(where), rev],
                   check=True, capture_output=True)
    for face, folder in (("mcp_server", "mcp_server"), ("adapters", "adapters")):
        link = where / "skillbank" / face
        if (where / folder).is_dir() and not link.exists():
            link.symlink_to(where / folder)
    return where


def server_env(code: Path, extra: dict[str, str] | None = None) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("SKILLBANK_")}
    env["ANONYMIZED_TELEMETRY"] = "False"
    env["PYTHONPATH"] = str(code)
    env.update(extra or {})
    return env


async def first_run(code: Path, corpus: Path, model_dir: str | None, timeout: float,
                    extra_env: dict[str, str] | None = None, wait_sections: bool = True
                    ) -> dict[str, Any]:
    from mcp import Client, StdioServerParameters

    root = Path(tempfile.mkdtemp(prefix="skillbank-first-run-"))
    launch = "import sys; from skillbank.cli import main; sys.exit(main())"  # `skillbank serve`
    args = ["-c", launch, "serve", "--root", str(root), "--skills-dir", str(corpus)]
    args += ["--model-dir", model_dir] if model_dir else []
    # cwd: `python -m` puts the working directory first on sys.path, ahead of PYTHONPATH.
    params = StdioServerParameters(command=sys.executable, args=args,
                                   env=server_env(code, extra_env),
                                   cwd=str(code))
    out: dict[str, Any] = {}
    started = time.perf_counter()
    try:
        async with Client(params, read_timeout_seconds=timeout) as client:
            out["initialize"] = time.perf_counter() - started
            while True:
                result = await client.call_tool("find_skills", {"task": TASK, "k": 5})
                now = time.perf_counter() - started
                out.setdefault("first_answer", now)
                names = [s["name"] for s in (result.structured_content or {}).get("skills", [])]
                if EXPECTED in names:
                    out["useful"] = now
                    out["rank"] = names.index(EXPECTED) + 1
                    break
                if now > timeout:
                    break
                await asyncio.sleep(1.0)
            while True:
                stats = json.loads((await client.read_resource("skillbank://stats")).contents[0].text)
                stages = stats.get("server", {}).get("startup_seconds", {})
                if ("skills_dense" in stages or "skills_dense" not in _knows_dense(code)
                        or (not wait_sections and "skills_summaries" in stages)):
                    # complete: every summary embedded (hybrid ranking as complete as before the
                    # body side: skills_summaries; older code's skills_dense meant that);
                    # sections: the body sections too (#26 item 3), when the code says so.
                    out["complete"] = stages.get("skills_summaries",
                                                 stages.get("skills_dense", out["first_answer"]))
                    if "skills_summaries" in stages:
                        out["sections"] = stages.get("skills_dense")
                    break
                if time.perf_counter() - started > timeout:  # summaries may be in, sections not
                    out["complete"] = stages.get("skills_summaries")
                    out["sections"] = None
                    break
                await asyncio.sleep(1.0)
            out["skills"] = stats.get("skills")
            out["server_cpu_at_first_call"] = (stats["server"].get("first_call") or {}).get(
                "process_cpu_seconds")
    finally:
        shutil.rmtree(root, ignore_errors=True)
    return out


def _knows_dense(code: Path) -> str:
    """'skills_dense' when that code reports a complete dense index in its stats."""
    loader = code / "mcp_server" / "loader.py"
    return "skills_dense" if loader.is_file() and "skills_dense" in loader.read_text() else ""


def breakdown(corpus: Path, model_dir: str | None) -> dict[str, float]:
    """Where first-run time goes, with the current code, stage by stage, in this process."""
    import numpy as np

    from skillbank.embeddings import MiniLMEmbedding
    from skillbank.index import _Keyword, make_client
    from skillbank.memories.skills.library import _digest, index_item_for
    from skillbank.memories.skills.skill_file import read_skill_file

    times: dict[str, float] = {}
    clock = time.perf_counter()
    paths = sorted(corpus.rglob("SKILL.md"))
    data = [(p, p.read_bytes()) for p in paths]
    digests = [_digest(p, d) for p, d in data]
    times["scan + hash"] = time.perf_counter() - clock
    clock = time.perf_counter()
    items, seen = [], set()
    for (path, _), digest in zip(data, digests):
        doc, _ = read_skill_file(path)
        if doc is not None and doc.name not in seen:
            seen.add(doc.name)
            items.append(index_item_for(doc, doc.name, path, corpus, digest, False))
    times["parse"] = time.perf_counter() - clock
    clock = time.perf_counter()
    _Keyword([i.id for i in items], [i.keyword_text for i in items])
    times["BM25 build"] = time.perf_counter() - clock
    embedding = MiniLMEmbedding(model_dir=model_dir)
    embedding.embed(["load the model"])
    texts = [t for i in items for t in i.embed_texts]
    cpu, clock = time.process_time(), time.perf_counter()
    vectors = embedding.embed(texts)
    times["embed"] = time.perf_counter() - clock
    times["embed cpu"] = time.process_time() - cpu
    with tempfile.TemporaryDirectory() as tmp:
        collection = make_client(tmp).create_collection("bench", metadata={"hnsw:space": "cosine"},
                                                        embedding_function=None)
        clock = time.perf_counter()
        for start in range(0, len(items), 500):
            chunk = items[start:start + 500]
            collection.add(ids=[i.id for i in chunk], embeddings=np.asarray(vectors[start:start + 500]),
                           documents=[i.keyword_text for i in chunk],
                           metadatas=[{k: v for k, v in i.metadata.items() if v is not None}
                                      for i in chunk])
        times["Chroma add"] = time.perf_counter() - clock
    times["skills"] = len(items)
    return times


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--corpus", type=Path, default=SHARED / "corpora" / "skills")
    parser.add_argument("--model-dir", default=None)
    parser.add_argument("--before", default=BEFORE_REV, help="git revision of the old code")
    parser.add_argument("--skip-before", action="store_true")
    parser.add_argument("--body-side", action="store_true",
                        help="also this checkout with SKILLBANK_BODY_SECTIONS=1 (the opt-in "
                             "body side, #26 item 3: summaries and body sections), run first")
    parser.add_argument("--no-breakdown", action="store_true")
    parser.add_argument("--summaries-only", action="store_true",
                        help="stop at every summary embedded (skills_summaries), not waiting "
                             "for the body sections (their column stays blank)")
    parser.add_argument("--timeout", type=float, default=600.0, help="per server, seconds")
    args = parser.parse_args()
    model_dir = args.model_dir or default_model_dir()
    say(f"corpus {args.corpus} ({sum(1 for _ in args.corpus.rglob('SKILL.md'))} SKILL.md), "
        f"{os.cpu_count()} CPUs, load {load()}")
    rows: dict[str, dict[str, Any]] = {}
    with tempfile.TemporaryDirectory() as tmp:
        variants: list[tuple[str, str | None, dict[str, str] | None]] = (
            [] if args.skip_before else [(f"before ({args.before})", args.before, None)])
        if args.body_side:
            variants.append(("SKILLBANK_BODY_SECTIONS=1", None, {"SKILLBANK_BODY_SECTIONS": "1"}))
        variants.append(("after (this checkout)", None, None))
        for label, rev, extra in variants:
            code = checkout(rev, Path(tmp) / "before") if rev else REPO
            try:
                say(f"{label}: serving a fresh root ...")
                rows[label] = asyncio.run(first_run(code, args.corpus, model_dir, args.timeout,
                                                    extra, not args.summaries_only))
                rows[label]["load"] = load()
                say(f"  {rows[label]}")
            finally:
                if rev:
                    subprocess.run(["git", "-C", str(REPO), "worktree", "remove", "--force",
                                    str(code)], capture_output=True)
    print(f"\nfirst run over MCP stdio, fresh root, {args.corpus.name} corpus")
    print(f"{'code':28} {'init':>6} {'first':>7} {'useful':>7} {'complete':>9} {'sections':>9} {'cpu@1st':>8}  load")
    for label, row in rows.items():
        def f(key: str) -> str:
            value = row.get(key)
            return f"{value:.1f}" if isinstance(value, (int, float)) else "-"
        print(f"{label:28} {f('initialize'):>6} {f('first_answer'):>7} {f('useful'):>7} "
              f"{f('complete'):>9} {f('sections'):>9} {f('server_cpu_at_first_call'):>8}  "
              f"{row['load']}")
    if len(rows) >= 2:
        before, after = list(rows.values())[-2:]
        if before.get("useful") and after.get("useful"):
            print(f"ratio first useful answer before/after: {before['useful'] / after['useful']:.1f}x")
        if before.get("complete") and after.get("complete"):
            print(f"ratio complete hybrid index before/after: "
                  f"{before['complete'] / after['complete']:.2f}x")
    after = rows["after (this checkout)"]
    print(f"targets: useful < {TARGET_USEFUL_S:.0f} s: {'met' if (after.get('useful') or 1e9) < TARGET_USEFUL_S else 'NOT met'}; "
          f"complete < {TARGET_COMPLETE_S:.0f} s: {'met' if (after.get('complete') or 1e9) < TARGET_COMPLETE_S else 'NOT met'}")
    print(f"guard: expected skill {EXPECTED!r} at rank {after.get('rank')} of the first useful answer")
    if not args.no_breakdown:
        say("breakdown (in process, current code) ...")
        times = breakdown(args.corpus, model_dir)
        print(f"\nwhere first-run time goes (in process, {times.pop('skills'):.0f} skills, load {load()}):")
        for stage, seconds in times.items():
            print(f"  {stage:12} {seconds:7.2f} s")


if __name__ == "__main__":
    main()
