"""Routing on every set, skillbank beside its components, measured in the same run.

    python benchmarks/routing_sets.py                 # dev set + the public sets
    python benchmarks/routing_sets.py --sets metatool bfcl --json out.json
    python benchmarks/routing_sets.py --scale 2000    # p50 search time at 2,000 skills too
    SKILLBANK_BODY_SECTIONS=1 python benchmarks/routing_sets.py --body-weights 0 0.25 0.5   # the opt-in body side's weight, swept

Sets: the dev set (../shared/benchmarks/skill-routing) and the public ones under
benchmarks/data/public (written by others; see its README). A set whose library.jsonl rows
carry a description (tool catalogs) is written out as SKILL.md folders first, the way a user
would put such a catalog into a skill library; a set whose rows carry a path is read as is.

Per set, on the answerable requests: top-1 (R@1), R@3 and MRR for
- skillbank: `bank.skills.search(query, k=5)` on a fresh bank (real MiniLM, real Chroma);
- dense: MiniLM cosine over "name: description" (what most skill MCP servers do);
- BM25: bm25s over name, description and body, skillbank's tokenizer;
- RRF: reciprocal-rank fusion (k=60) of those two.
The baselines always answer. skillbank may answer empty ("no skill fits"): reported are the
share of answerable requests it empties (guard <= 0.03), the share of requests labelled as
needing no tool/skill it empties (target >= 0.85, only where a set labels them), and for
near-miss trigger evals how often the skill that must not fire is ranked first.
Times: p50/p95 of `skills.search` per request, including the query embedding, with the load.
`--body-weights`: every set's requests asked again on the same bank with the body side (each
skill's best cosine over its summary and body sections, `search.BODY_WEIGHT`) at each weight;
0 ranks as the code before the body side did (summary cosine and BM25).

The dev set and the corpus set (the dev requests asked of the whole shared corpus, ~1,740
skills, answerable ones counted by skill name) also carry the 160 out-of-scope requests of
benchmarks/data/out_of_scope.jsonl (counted with the set's own "none" ones) and the 136 held-out
ones (out_of_scope_heldout.jsonl, "held-out empty"). Where requests are labelled out of scope,
the fit is also read with `min_score=0` to report what an out-of-scope target would cost:
the answerable share emptied at the lowest fit bar that empties 85 % of them.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))
from _common import SHARED, default_model_dir  # noqa: E402

PUBLIC = Path(__file__).resolve().parent / "data" / "public"
SETS = {
    "dev": SHARED / "benchmarks" / "skill-routing",
    "metatool": PUBLIC / "metatool",
    "bfcl": PUBLIC / "bfcl",
    "agent-skills-jason": PUBLIC / "agent-skills-jason",
    "corpus": SHARED / "corpora" / "skills",
}
DATA = Path(__file__).resolve().parent / "data"
OOS_TARGET = 0.85


def read_jsonl(path: Path) -> list[dict]:
    return [json.loads(line) for line in path.open() if line.strip()]


def skill_md(name: str, description: str, body: str) -> str:
    return ("---\n" + f"name: {name}\n" + "description: " + json.dumps(description) + "\n---\n\n"
            + (body or f"# {name}\n"))


def materialise(folder: Path, into: Path) -> tuple[Path, list[dict]]:
    """The set's skills root, and its library rows with `path` filled in."""
    library = read_jsonl(folder / "library.jsonl")
    if all("path" in row for row in library):
        root = folder / "skills"
        for row in library:
            row["path"] = str((folder / row["path"]).resolve())
        return root, library
    root = into / "skills"
    for row in library:
        target = root / row["id"] / "SKILL.md"
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_text(skill_md(row["name"], row["description"], row.get("body", "")))
        row["path"] = str(target.resolve())
    return root, library


def metrics(ranked: list[list[str]], queries: list[dict]) -> dict[str, float]:
    answerable = [(ids, q) for ids, q in zip(ranked, queries) if q["expected"]]
    r1 = r3 = rr = emptied = 0.0
    for ids, q in answerable:
        expected = set(q["expected"])
        emptied += not ids
        ranks = [i for i, item in enumerate(ids) if item in expected]
        if ranks:
            r1 += ranks[0] == 0
            r3 += ranks[0] < 3
            rr += 1.0 / (ranks[0] + 1)
    n = max(len(answerable), 1)
    none = [ids for ids, q in zip(ranked, queries) if not q["expected"] and q["kind"] == "none"]
    near = [(ids, q) for ids, q in zip(ranked, queries) if q.get("not") and not q["expected"]]
    held = [ids for ids, q in zip(ranked, queries) if q["kind"] == "heldout"]
    return {"held_empty": (sum(not ids for ids in held) / len(held)) if held else None,
            "heldout": len(held),"R@1": r1 / n, "R@3": r3 / n, "MRR": rr / n, "emptied": emptied / n,
            "answerable": len(answerable),
            "oos_empty": (sum(not ids for ids in none) / len(none)) if none else None,
            "oos": len(none),
            "misfired": (sum(bool(ids) and ids[0] in q["not"] for ids, q in near) / len(near))
            if near else None, "near_miss": len(near)}


def baselines(library: list[dict], queries: list[dict], embedding, by_name: bool = False
              ) -> dict[str, list[list[str]]]:
    import bm25s

    from skillbank.index import tokenize
    from skillbank.memories.skills.skill_file import read_skill_file

    docs = [read_skill_file(row["path"])[0] for row in library]
    names = [d.name if d else "" for d in docs]
    ids = names if by_name else [row["id"] for row in library]
    dense_docs = embedding.embed([f"{n.replace('-', ' ')}: {d.description}" if d else ""
                                  for n, d in zip(names, docs)])
    qvecs = embedding.embed([q["query"] for q in queries])
    retriever = bm25s.BM25(k1=1.2, b=0.75)
    retriever.index([tokenize(f"{d.name} {d.description} {d.body}" if d else "") for d in docs],
                    show_progress=False)
    out: dict[str, list[list[str]]] = {"dense": [], "BM25": [], "RRF": []}
    for q, qv in zip(queries, qvecs):
        sims = dense_docs @ qv
        dense_order = list(np.argsort(-sims))
        terms = [t for t in tokenize(q["query"]) if t in retriever.vocab_dict]
        scores = retriever.get_scores(terms) if terms else np.zeros(len(docs))
        kw_order = [i for i in np.argsort(-scores) if scores[i] > 0]
        fused: dict[int, float] = {}
        for order in (dense_order, kw_order):
            for rank, i in enumerate(order):
                fused[i] = fused.get(i, 0.0) + 1.0 / (60 + rank + 1)
        rrf_order = sorted(fused, key=lambda i: -fused[i])
        out["dense"].append([ids[i] for i in dense_order[:5]])
        out["BM25"].append([ids[i] for i in kw_order[:5]])
        out["RRF"].append([ids[i] for i in rrf_order[:5]])
    return out


def cached_baselines(home: Path | None, library: list[dict], queries: list[dict], embedding,
                     by_name: bool = False) -> dict[str, list[list[str]]]:
    """`baselines`, kept in `home` (--keep) and reused while the library's files and the
    requests are the same: they do not depend on skillbank's code, and on the corpus they cost
    an embedding of every skill's description again."""
    import hashlib

    if home is None:
        return baselines(library, queries, embedding, by_name)
    key = hashlib.sha256(json.dumps(
        [[row["id"], row["path"], Path(row["path"]).stat().st_mtime_ns] for row in library]
        + [q["query"] for q in queries] + [by_name, str(getattr(embedding, "model_dir", ""))]
    ).encode()).hexdigest()
    path = home / "baselines.json"
    try:
        kept = json.loads(path.read_text())
        if kept.get("key") == key:
            return kept["ranked"]
    except (OSError, ValueError):
        pass
    ranked = baselines(library, queries, embedding, by_name)
    home.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps({"key": key, "ranked": ranked}))
    return ranked


def load_queries(name: str, folder: Path) -> tuple[list[dict], Path, list[dict] | None]:
    """(requests, skills root, library rows or None for the corpus) of one set."""
    if name == "corpus":  # the dev requests against the whole corpus, by skill name
        dev = SETS["dev"]
        names = {row["id"]: row["name"] for row in read_jsonl(dev / "library.jsonl")}
        queries = read_jsonl(dev / "queries.jsonl")
        for q in queries:
            q["expected"] = [names[e] for e in q["expected"]]
    else:
        queries = read_jsonl(folder / "queries.jsonl")
    for q in queries:
        q.setdefault("kind", "skill" if q["expected"] else "none")
    if name in ("dev", "corpus"):
        queries += [dict(q, expected=[], kind="none") for q in read_jsonl(DATA / "out_of_scope.jsonl")]
        queries += [dict(q, expected=[], kind="heldout")
                    for q in read_jsonl(DATA / "out_of_scope_heldout.jsonl")]
    return queries, folder, None


def corpus_library(folder: Path) -> list[dict]:
    return [{"id": path.parent.name, "path": str(path.resolve())}
            for path in sorted(folder.rglob("SKILL.md"))]


def corpus_roots(folder: Path) -> list[Path]:
    """The skill roots a user gives skillbank for the corpus: the corpus, and each hidden
    folder in it that holds skills (openai/skills keeps its skills in `.curated`,
    `.experimental` and `.system`).

    Why: Agent Skills loaders skip dot entries while walking a root (skillbank, and Codex's
    loader, which reads its own `$CODEX_HOME/skills/.system` as a root of its own), so those
    ten skills are found only when named as roots. The baselines read every SKILL.md under
    the corpus, hidden ones included; before these roots, 5 of the 108 answerable requests
    named a skill only skillbank could not see (R@3 0.815 then)."""
    hidden: set[Path] = set()
    for path in folder.rglob("SKILL.md"):
        above = path.relative_to(folder).parts[:-2]  # the folders above the skill's own
        outermost = next((i for i, part in enumerate(above) if part.startswith(".")), None)
        if outermost is not None:
            hidden.add(folder.joinpath(*above[:outermost + 1]))
    return [folder] + sorted(hidden)


def fit_curve(fits: list[float], queries: list[dict]) -> dict | None:
    """Answerable share emptied at the lowest fit bar that empties OOS_TARGET of the requests
    labelled out of scope (`fits`: each request's fit with `min_score=0`, 0 for no hit)."""
    none = sorted(f for f, q in zip(fits, queries) if q["kind"] == "none" and not q["expected"])
    answerable = [f for f, q in zip(fits, queries) if q["expected"]]
    if not none or not answerable:
        return None
    bar = none[min(len(none) - 1, int(np.ceil(OOS_TARGET * len(none))) - 1)] + 1e-9
    return {"bar": bar, "oos_empty": sum(f < bar for f in none) / len(none),
            "emptied": sum(f < bar for f in answerable) / len(answerable)}


def run_set(name: str, folder: Path, model_dir: str | None,
            body_weights: list[float] | None = None, keep: Path | None = None) -> dict:
    from skillbank import Skillbank
    from skillbank.embeddings import MiniLMEmbedding

    queries, _, _ = load_queries(name, folder)
    embedding = MiniLMEmbedding(model_dir=model_dir)
    with tempfile.TemporaryDirectory() as tmp:
        if name == "corpus":
            roots = corpus_roots(folder)
            library = corpus_library(folder)
            by_path = None
        else:
            root, library = materialise(folder, Path(tmp))
            roots = [root]
            by_path = {row["path"]: row["id"] for row in library}
        started = time.perf_counter()
        home = keep / name if keep else Path(tmp)  # keep: the bank stays there (reused)
        bank = Skillbank.open(home / "bank", skill_roots=roots, include_bundled=False,
                              sync=False, embedding_function=embedding)
        try:
            bank.skills.sync()
            load_s = time.perf_counter() - started
            indexed = bank.index("skills").count()
            texts = index_texts(bank)
            bank.skills.search("warm up the model", k=5)
            ranked, times = [], []
            for q in queries:
                t0 = time.perf_counter()
                hits = bank.skills.search(q["query"], k=5)
                times.append(time.perf_counter() - t0)
                ranked.append([h.name if by_path is None else
                               by_path.get(str(Path(h.path).resolve()), h.name) for h in hits])
            sweep = {}
            for weight in body_weights or []:  # the body side's weight, same bank (#26)
                sweep[weight] = metrics(ask_all(bank, queries, by_path, weight), queries)
            fits = None
            if any(q["kind"] == "none" and not q["expected"] for q in queries):
                fits = []
                for q in queries:
                    hits = bank.skills.search(q["query"], k=1, min_score=0.0)
                    fits.append(hits[0].score if hits else 0.0)
        finally:
            bank.close()
        rows = {"skillbank": metrics(ranked, queries)}
        for system, system_ranked in cached_baselines(
                keep / name if keep else None, library, queries, embedding,
                by_name=by_path is None).items():
            rows[system] = metrics(system_ranked, queries)
    return {"set": name, "skills": indexed, "texts": texts, "queries": len(queries),
            "index_s": load_s, "body_sweep": sweep,
            "p50_ms": 1000 * statistics.median(times),
            "p95_ms": 1000 * float(np.percentile(times, 95)), "systems": rows,
            "at_oos_target": fit_curve(fits, queries) if fits else None}


def ask_all(bank, queries: list[dict], by_path: dict | None, weight: float) -> list[list[str]]:
    """Every request asked with the body side at `weight` (search.BODY_WEIGHT)."""
    from skillbank.memories.skills import search as routing

    kept = getattr(routing, "BODY_WEIGHT", None)
    if kept is None:
        return []
    routing.BODY_WEIGHT = weight
    try:
        return [[h.name if by_path is None else by_path.get(str(Path(h.path).resolve()), h.name)
                 for h in bank.skills.search(q["query"], k=5)] for q in queries]
    finally:
        routing.BODY_WEIGHT = kept


def index_texts(bank) -> int:
    """Texts (vectors) the skill index holds: skills plus their embedded body sections."""
    return int(bank.index("skills")._chunks)


def scale_run(size: int, model_dir: str | None, keep: Path | None = None) -> dict:
    """p50 search time at `size` skills: the shared corpus, then the public tool catalogs up to
    `size` (MetaTool, then BFCL functions). `keep`: build the bank there and reuse it (so code
    before and after a change is timed on the same index: run once with PYTHONPATH pointing at
    the old code, once without)."""
    from skillbank import Skillbank
    from skillbank.embeddings import MiniLMEmbedding

    with tempfile.TemporaryDirectory() as tmp:
        home = keep or Path(tmp)
        roots = []
        corpus = SHARED / "corpora" / "skills"
        have = 0
        if corpus.is_dir():  # what the corpus indexes (some of its SKILL.md files are invalid)
            roots.append(corpus)
            bank = Skillbank.open(home / "bank", skill_roots=roots, include_bundled=False,
                                  sync=False,
                                  embedding_function=MiniLMEmbedding(model_dir=model_dir))
            try:
                bank.skills.sync()
                have = bank.index("skills").count()
            finally:
                bank.close()
        for name in ("metatool", "bfcl"):
            library = read_jsonl(SETS[name] / "library.jsonl")[:max(0, size - have)]
            if not library:
                continue
            have += len(library)
            root = home / name / "skills"
            for row in library:
                target = root / row["id"] / "SKILL.md"
                text = skill_md(row["name"], row["description"], row.get("body", ""))
                if not target.is_file() or target.read_text() != text:
                    target.parent.mkdir(parents=True, exist_ok=True)
                    target.write_text(text)
            roots.append(root)
        bank = Skillbank.open(home / "bank", skill_roots=roots, include_bundled=False,
                              sync=False, embedding_function=MiniLMEmbedding(model_dir=model_dir))
        try:
            t0 = time.perf_counter()
            bank.skills.sync()
            index_s = time.perf_counter() - t0
            count = bank.index("skills").count()
            queries = [q["query"] for q in read_jsonl(SETS["metatool"] / "queries.jsonl")][:300]
            bank.skills.search("warm up", k=5)
            times, cpu = [], []
            for text in queries:
                t1, c1 = time.perf_counter(), time.process_time()
                bank.skills.search(text, k=5)
                times.append(time.perf_counter() - t1)
                cpu.append(time.process_time() - c1)
        finally:
            bank.close()
    # CPU time (all of the process's threads) says what a search costs however busy the
    # machine is; wall time on a shared box mostly says how long it waited for a core.
    return {"skills": count, "wanted": size, "index_s": index_s,
            "cpu_p50_ms": 1000 * statistics.median(cpu),
            "p50_ms": 1000 * statistics.median(times),
            "p95_ms": 1000 * float(np.percentile(times, 95))}


def fmt(value: float | None) -> str:
    return "   -  " if value is None else f"{value:6.3f}"


def report(results: list[dict]) -> None:
    for result in results:
        print(f"\n{result['set']}: {result['skills']} skills, {result['queries']} requests; "
              f"index {result['index_s']:.1f}s; skillbank search p50 {result['p50_ms']:.1f} ms, "
              f"p95 {result['p95_ms']:.1f} ms")
        print(f"  {'system':10} {'top-1':>6} {'R@3':>6} {'MRR':>6} {'emptied':>8} "
              f"{'oos empty':>9} {'misfired':>8}")
        best = max(result["systems"][s]["R@1"] for s in ("dense", "BM25", "RRF"))
        for system, row in result["systems"].items():
            flag = ""
            if system == "skillbank":
                flag = "  >= best component" if row["R@1"] >= best - 1e-9 else "  BELOW a component"
            print(f"  {system:10} {row['R@1']:6.3f} {row['R@3']:6.3f} {row['MRR']:6.3f} "
                  f"{fmt(row['emptied'] if system == 'skillbank' else None):>8} "
                  f"{fmt(row['oos_empty'] if system == 'skillbank' else None):>9} "
                  f"{fmt(row['misfired']):>8}{flag}")
        sb = result["systems"]["skillbank"]
        print(f"  ({sb['answerable']} answerable, {sb['oos']} labelled no-tool, "
              f"{sb['near_miss']} near-miss)")
        if sb["held_empty"] is not None:
            print(f"  held-out out-of-scope answered empty: {sb['held_empty']:.3f} "
                  f"({sb['heldout']} requests)")
        print(f"  {result['texts']} texts embedded for {result['skills']} skills")
        for weight, row in result.get("body_sweep", {}).items():
            print(f"  body weight {weight:4.2f}: top-1 {row['R@1']:.3f} R@3 {row['R@3']:.3f} "
                  f"MRR {row['MRR']:.3f} emptied {row['emptied']:.3f} oos empty "
                  f"{fmt(row['oos_empty'])} held-out empty {fmt(row['held_empty'])} "
                  f"misfired {fmt(row['misfired'])}")
        cost = result.get("at_oos_target")
        if cost:
            print(f"  to answer {cost['oos_empty']:.3f} of out-of-scope requests empty (target "
                  f"{OOS_TARGET}), the fit bar would move from 0.5 to {cost['bar']:.3f} and empty "
                  f"{cost['emptied']:.3f} of answerable requests (guard 0.03)")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sets", nargs="*", default=list(SETS), choices=[*SETS, "none"],
                        help="'none' with --scale: time search only")
    parser.add_argument("--model-dir", default=None)
    parser.add_argument("--scale", type=int, default=0, help="also time search at N skills")
    parser.add_argument("--scale-root", type=Path, default=None,
                        help="keep the --scale bank here and reuse it (same index, old/new code)")
    parser.add_argument("--json", type=Path, default=None)
    parser.add_argument("--body-weights", type=float, nargs="*", default=[],
                        help="also ask every set with the body side at these weights")
    parser.add_argument("--keep", type=Path, default=None,
                        help="build each set's bank in KEEP/<set>/bank and keep it (the corpus "
                             "bank can seed a --scale-root: copy it to <scale-root>/bank), and "
                             "the baselines' rankings in KEEP/<set>/baselines.json")
    parser.add_argument("--baselines-only", action="store_true",
                        help="with --keep: compute and keep the sets' baselines, nothing else "
                             "(a second process while the bank is embedding)")
    args = parser.parse_args()
    model_dir = args.model_dir or default_model_dir()
    import skillbank

    print(f"skillbank from {Path(skillbank.__file__).parent}; load {os.getloadavg()[0]:.2f} "
          f"(1 min) on {os.cpu_count()} cores", file=sys.stderr)
    sets = [] if args.scale and args.sets == ["none"] else args.sets
    if args.baselines_only and args.keep:
        from skillbank.embeddings import MiniLMEmbedding

        for name in sets:
            library = corpus_library(SETS[name]) if name == "corpus" else None
            with tempfile.TemporaryDirectory() as tmp:
                if library is None:
                    _, library = materialise(SETS[name], Path(tmp))
                cached_baselines(args.keep / name, library, load_queries(name, SETS[name])[0],
                                 MiniLMEmbedding(model_dir=model_dir), by_name=name == "corpus")
            print(f"{name}: baselines kept in {args.keep / name} (load {os.getloadavg()[0]:.2f})")
        return
    results = []
    for name in sets:
        if (SETS[name] / "queries.jsonl").exists() or (name == "corpus" and SETS[name].is_dir()):
            results.append(run_set(name, SETS[name], model_dir, args.body_weights, args.keep))
            report(results[-1:])  # each set as it finishes, with the load
            print(f"  (load {os.getloadavg()[0]:.2f})", flush=True)
    out = {"sets": results, "load_before": os.getloadavg()[0]}
    if args.scale:
        scale = scale_run(args.scale, model_dir, args.scale_root)
        out["scale"] = scale
        print(f"\nscale: {scale['skills']} skills indexed in {scale['index_s']:.0f}s; search p50 "
              f"{scale['p50_ms']:.1f} ms, p95 {scale['p95_ms']:.1f} ms (incl. query embedding); "
              f"CPU time p50 {scale['cpu_p50_ms']:.1f} ms")
    print(f"load after: {os.getloadavg()[0]:.2f}")
    if args.json:
        args.json.write_text(json.dumps(out, indent=1))


if __name__ == "__main__":
    main()
