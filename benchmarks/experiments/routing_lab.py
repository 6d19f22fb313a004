"""Routing lab: what to embed, how to weigh BM25 fields, how to fuse, how to gate "none".

    .venv/bin/python benchmarks/experiments/routing_lab.py [--set FOLDER] [--section NAME ...]

Everything is computed in numpy over cached embeddings (benchmarks/experiments/cache/), so a
variant costs milliseconds once its texts have been embedded once. Skills are keyed by library
`id` (not by name: two skills share the name `skill-creator`).

Robustness: every row is reported overall, per kind (direct/indirect), and for anything with a
parameter, by 2-fold cross-validation (tune on one half of the queries, test on the other,
both ways; folds stratified by kind, fixed seed).
"""

from __future__ import annotations

import argparse
import hashlib
import json
import math
import random
import re
import sys
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Callable

import numpy as np

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT))
from skillbank.memories.skills.library import _humanise, skill_sections  # noqa: E402
from skillbank.index import tokenize  # noqa: E402
from skillbank.memories.skills.skill_file import read_skill_file  # noqa: E402

CACHE = Path(__file__).resolve().parent / "cache"
MODEL_DIR = "/work/shared/models/all-MiniLM-L6-v2"
DEFAULT_SET = Path("/work/shared/benchmarks/skill-routing")


# ----------------------------------------------------------------------------------------------
# Embedding cache: text -> vector, stored as texts.json + vectors.npy, appended to as needed.
class EmbCache:
    def __init__(self, folder: Path = CACHE) -> None:
        self.folder = folder
        folder.mkdir(parents=True, exist_ok=True)
        self.keys: list[str] = []
        self.vectors = np.zeros((0, 384), dtype=np.float32)
        if (folder / "keys.json").exists():
            self.keys = json.loads((folder / "keys.json").read_text())
            self.vectors = np.load(folder / "vectors.npy")
        self.index = {k: i for i, k in enumerate(self.keys)}
        self.model = None
        self.embed_seconds = 0.0

    @staticmethod
    def key(text: str) -> str:
        return hashlib.sha1(text.encode()).hexdigest()

    def get(self, texts: list[str]) -> np.ndarray:
        texts = [t or " " for t in texts]
        missing = list(dict.fromkeys(t for t in texts if self.key(t) not in self.index))
        if missing:
            if self.model is None:
                from skillbank.embeddings import MiniLMEmbedding

                self.model = MiniLMEmbedding(model_dir=MODEL_DIR)
            started = time.perf_counter()
            new = self.model.embed(missing)
            self.embed_seconds += time.perf_counter() - started
            print(f"  embedded {len(missing)} new texts in {time.perf_counter() - started:.1f}s",
                  file=sys.stderr)
            for t in missing:
                self.index[self.key(t)] = len(self.keys)
                self.keys.append(self.key(t))
            self.vectors = np.concatenate([self.vectors, new.astype(np.float32)])
            (self.folder / "keys.json").write_text(json.dumps(self.keys))
            np.save(self.folder / "vectors.npy", self.vectors)
        if not texts:
            return np.zeros((0, 384), dtype=np.float32)
        return self.vectors[[self.index[self.key(t)] for t in texts]]


# ----------------------------------------------------------------------------------------------
# Data
@dataclass
class Skill:
    id: str
    name: str
    title: str
    description: str
    body: str
    sections: list[tuple[str, str]]

    @property
    def headings(self) -> list[str]:
        return [t for t, _ in self.sections if t]


def load(folder: Path) -> tuple[list[Skill], list[dict]]:
    library = [json.loads(line) for line in (folder / "library.jsonl").open()]
    queries = [json.loads(line) for line in (folder / "queries.jsonl").open()]
    skills = []
    for item in library:
        doc, _ = read_skill_file(folder / item["path"])
        name = doc.name if doc else item["name"]
        body = doc.body if doc else ""
        skills.append(Skill(item["id"], name, _humanise(name), (doc.description if doc else "").strip(),
                            body, skill_sections(body)))
    return skills, queries


# ----------------------------------------------------------------------------------------------
# Text families to embed. Each returns, per skill, a list of texts (may be empty).
def section_texts(s: Skill, max_sections: int | None, chars: int, with_text: bool = True,
                  skip_empty_heading: bool = False) -> list[str]:
    out = []
    secs = s.sections if max_sections is None else s.sections[:max_sections]
    for heading, text in secs:
        if skip_empty_heading and not heading:
            continue
        snippet = " ".join(text.split())[:chars] if with_text else ""
        if with_text and (snippet or heading):
            out.append(f"{s.title} — {heading}: {snippet}" if heading else f"{s.title}: {snippet}")
        elif not with_text and heading:
            out.append(f"{s.title} — {heading}")
    return out


FAMILIES: dict[str, Callable[[Skill], list[str]]] = {
    "nd": lambda s: [f"{s.title}: {s.description}"],  # current first text
    "d": lambda s: [s.description],
    "ndh": lambda s: [f"{s.title}: {s.description} Sections: " + "; ".join(s.headings[:20])],
    "h1": lambda s: [f"{s.title}: " + "; ".join(s.headings[:30])] if s.headings else [],
    "lead": lambda s: [f"{s.title}: " + " ".join(s.body.split())[:1200]],
    "sec600x8": lambda s: section_texts(s, 8, 600),  # current sections
    "sec200x8": lambda s: section_texts(s, 8, 200),
    "sec300x4": lambda s: section_texts(s, 4, 300),
    "headx8": lambda s: section_texts(s, 8, 0, with_text=False),
}


def family_vectors(cache: EmbCache, skills: list[Skill], family: str):
    """(matrix of vectors, owner index per row, number of texts)."""
    texts, owner = [], []
    for i, s in enumerate(skills):
        for t in FAMILIES[family](s):
            texts.append(t)
            owner.append(i)
    return cache.get(texts), np.array(owner, dtype=int), len(texts)


def pooled(sims: np.ndarray, owner: np.ndarray, n_items: int, how: str = "max") -> np.ndarray:
    """Per-item pooling of chunk similarities (Q x chunks -> Q x items); -1 where no chunk."""
    out = np.full((sims.shape[0], n_items), -1.0, dtype=np.float32)
    if how == "max":
        for j in range(n_items):
            cols = np.where(owner == j)[0]
            if len(cols):
                out[:, j] = sims[:, cols].max(axis=1)
    elif how == "top2":
        for j in range(n_items):
            cols = np.where(owner == j)[0]
            if len(cols):
                top = -np.sort(-sims[:, cols], axis=1)[:, :2]
                out[:, j] = top.mean(axis=1)
    return out


# ----------------------------------------------------------------------------------------------
# BM25
class BM25:
    def __init__(self, texts: list[str], k1: float = 1.2, b: float = 0.75) -> None:
        import bm25s

        tokens = [tokenize(t) for t in texts]
        self.k1 = k1
        self.r = bm25s.BM25(k1=k1, b=b)
        self.r.index(tokens, show_progress=False)
        df: dict[str, int] = {}
        for doc in tokens:
            for t in set(doc):
                df[t] = df.get(t, 0) + 1
        n = len(texts)
        self.idf = {t: math.log(1 + (n - c + 0.5) / (c + 0.5)) for t, c in df.items()}
        self.n = n

    def scores(self, query: str) -> tuple[np.ndarray, float]:
        terms = [t for t in dict.fromkeys(tokenize(query)) if t in self.idf]
        if not terms:
            return np.zeros(self.n, dtype=np.float32), 1.0
        best = sum(self.idf[t] * (self.k1 + 1) for t in terms)
        return np.asarray(self.r.get_scores(terms), dtype=np.float32), best

    def matrix(self, queries: list[str]) -> tuple[np.ndarray, np.ndarray]:
        raw, best = zip(*(self.scores(q) for q in queries))
        return np.stack(raw), np.array(best, dtype=np.float32)


def keyword_text(s: Skill, scheme: str) -> str:
    t, d, h, b = s.title, s.description, " ".join(s.headings), s.body
    if scheme == "current":
        return "\n".join([t, t, t, d, d, h, b[:20_000]])
    if scheme == "flat":
        return "\n".join([t, d, b])
    if scheme == "nd":
        return "\n".join([t, d])
    if scheme == "nd_x2":
        return "\n".join([t, t, d, d])
    if scheme == "ndh":
        return "\n".join([t, d, h])
    if scheme == "cur_body5k":
        return "\n".join([t, t, t, d, d, h, b[:5_000]])
    if scheme == "cur_body2k":
        return "\n".join([t, t, t, d, d, h, b[:2_000]])
    if scheme == "body":
        return "\n".join([h, b[:20_000]])
    raise KeyError(scheme)


# ----------------------------------------------------------------------------------------------
# Evaluation
def ranks_of(scores: np.ndarray, queries: list[dict], ids: list[str]) -> list[int | None]:
    """Rank (0-based) of the first expected item per query; None for none-queries."""
    order = np.argsort(-scores, axis=1, kind="stable")
    out: list[int | None] = []
    for qi, q in enumerate(queries):
        exp = set(q["expected"])
        if not exp:
            out.append(None)
            continue
        pos = [r for r, j in enumerate(order[qi]) if ids[j] in exp]
        out.append(pos[0] if pos else 10**6)
    return out


def metrics(ranks: list[int | None], queries: list[dict], subset: list[int] | None = None,
            kind: str | None = None) -> dict[str, float]:
    idx = subset if subset is not None else range(len(queries))
    rs = [ranks[i] for i in idx if queries[i]["expected"] and (kind is None or queries[i]["kind"] == kind)]
    n = max(len(rs), 1)
    return {"R@1": sum(r == 0 for r in rs) / n, "R@3": sum(r < 3 for r in rs) / n,
            "MRR": sum(1 / (r + 1) for r in rs) / n, "n": len(rs)}


def folds(queries: list[dict], seed: int = 13) -> list[list[int]]:
    rng = random.Random(seed)
    a, b = [], []
    for kind in ("direct", "indirect", "none"):
        idx = [i for i, q in enumerate(queries) if q["kind"] == kind]
        rng.shuffle(idx)
        a += idx[: len(idx) // 2]
        b += idx[len(idx) // 2:]
    return [sorted(a), sorted(b)]


def objective(m: dict[str, float]) -> float:
    return m["R@1"] + m["R@3"] + m["MRR"]


def cv(grid: dict, score_fn: Callable, queries, ids, fold_sets) -> tuple[dict, dict]:
    """2-fold: pick best params on one fold, test on the other; returns (test metrics, picks)."""
    cache = {}
    for key, params in grid.items():
        cache[key] = ranks_of(score_fn(**params), queries, ids)
    tests, picks = [], []
    for tr, te in ((fold_sets[0], fold_sets[1]), (fold_sets[1], fold_sets[0])):
        best = max(cache, key=lambda k: objective(metrics(cache[k], queries, tr)))
        picks.append(best)
        tests.append((metrics(cache[best], queries, te), len(te)))
    # pooled test metrics over both halves
    tot = {m: sum(t[0][m] * t[0]["n"] for t in tests) / sum(t[0]["n"] for t in tests)
           for m in ("R@1", "R@3", "MRR")}
    return tot, {"picks": picks, "all": cache}


def fmt(m: dict[str, float]) -> str:
    return f"{m['R@1']:.3f} {m['R@3']:.3f} {m['MRR']:.3f}"


def row(label: str, scores: np.ndarray, queries, ids, texts: int | str = "", extra: str = "") -> list[int | None]:
    r = ranks_of(scores, queries, ids)
    a, d, i = metrics(r, queries), metrics(r, queries, kind="direct"), metrics(r, queries, kind="indirect")
    f = folds(queries)
    f0, f1 = metrics(r, queries, f[0]), metrics(r, queries, f[1])
    print(f"{label:46} {fmt(a)} | dir {d['R@1']:.3f} {d['R@3']:.3f} | ind {i['R@1']:.3f} {i['R@3']:.3f}"
          f" | halves R@1 {f0['R@1']:.3f}/{f1['R@1']:.3f} | texts {texts} {extra}")
    return r


# ----------------------------------------------------------------------------------------------
# Fusion
def rank_matrix(scores: np.ndarray) -> np.ndarray:
    """0-based rank of every item per query (ties broken by index)."""
    order = np.argsort(-scores, axis=1, kind="stable")
    ranks = np.empty_like(order)
    rows = np.arange(scores.shape[0])[:, None]
    ranks[rows, order] = np.arange(scores.shape[1])[None, :]
    return ranks


def rrf(parts: list[tuple[float, np.ndarray]], k: float = 60, depth: int | None = None,
        valid: list[np.ndarray | None] | None = None) -> np.ndarray:
    out = np.zeros_like(parts[0][1], dtype=np.float64)
    for n, (w, s) in enumerate(parts):
        r = rank_matrix(s)
        contrib = w / (k + r + 1)
        mask = np.ones_like(contrib, dtype=bool)
        if depth is not None:
            mask &= r < depth
        if valid is not None and valid[n] is not None:
            mask &= valid[n]
        out += np.where(mask, contrib, 0.0)
    return out


def norm(s: np.ndarray, how: str) -> np.ndarray:
    if how == "minmax":
        lo, hi = s.min(axis=1, keepdims=True), s.max(axis=1, keepdims=True)
        return (s - lo) / np.maximum(hi - lo, 1e-9)
    if how == "z":
        return (s - s.mean(axis=1, keepdims=True)) / np.maximum(s.std(axis=1, keepdims=True), 1e-9)
    if how == "max":  # divide by the query's best
        return s / np.maximum(s.max(axis=1, keepdims=True), 1e-9)
    raise KeyError(how)


def current_system(dense_chunks: np.ndarray, owner: np.ndarray, bm: np.ndarray, n_items: int,
                   candidates: int = 50) -> np.ndarray:
    """Replicates HybridIndex.search: dense = best of the top 2*candidates chunks, BM25 top
    `candidates` with score > 0, plain RRF k=60 over those lists only."""
    Q = dense_chunks.shape[0]
    fused = np.zeros((Q, n_items))
    for q in range(Q):
        top = np.argsort(-dense_chunks[q])[: candidates * 2]
        best: dict[int, float] = {}
        for c in top:
            j = owner[c]
            if dense_chunks[q, c] > best.get(j, -2):
                best[j] = dense_chunks[q, c]
        for r, j in enumerate(sorted(best, key=best.__getitem__, reverse=True)):
            fused[q, j] += 1 / (60 + r + 1)
        pos = np.where(bm[q] > 0)[0]
        take = pos[np.argsort(-bm[q, pos], kind="stable")][:candidates]
        for r, j in enumerate(take):
            fused[q, j] += 1 / (60 + r + 1)
    # items with no evidence at all rank last
    return fused


# ----------------------------------------------------------------------------------------------
# Summary run
def gated_ranks(scores: np.ndarray, allowed: np.ndarray, queries: list[dict], ids: list[str]):
    """Ranks when only `allowed` (Q x N bool) items may be returned; none-queries answered =
    any item allowed."""
    order = np.argsort(-scores, axis=1, kind="stable")
    ranks, answered = [], 0
    for qi, q in enumerate(queries):
        kept = [j for j in order[qi] if allowed[qi, j]]
        if not q["expected"]:
            answered += bool(kept)
            ranks.append(None)
            continue
        pos = [r for r, j in enumerate(kept) if ids[j] in q["expected"]]
        ranks.append(pos[0] if pos else 10**6)
    return ranks, answered


def report(label: str, ranks, queries, texts, none_answered: str, cvtxt: str = "") -> None:
    a = metrics(ranks, queries)
    d, i = metrics(ranks, queries, kind="direct"), metrics(ranks, queries, kind="indirect")
    f = folds(queries)
    h0, h1 = metrics(ranks, queries, f[0]), metrics(ranks, queries, f[1])
    print(f"| {label} | {a['R@1']:.3f} | {a['R@3']:.3f} | {a['MRR']:.3f} | {none_answered} | {texts} | "
          f"{d['R@1']:.3f}/{d['R@3']:.3f} | {i['R@1']:.3f}/{i['R@3']:.3f} | "
          f"{h0['R@1']:.3f}/{h1['R@1']:.3f} | {cvtxt} |")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--set", type=Path, default=DEFAULT_SET)
    parser.add_argument("--section", choices=("ranking", "abstain"), default="ranking")
    parser.add_argument("--corpus-root", type=Path, default=Path("/tmp/corpus-root"),
                        help="abstain: memory root of the whole-corpus index (benchmarks/routing.py)")
    args = parser.parse_args()
    if args.section == "abstain":
        abstain_section(args.set, args.corpus_root)
        return
    skills, queries = load(args.set)
    ids, n = [s.id for s in skills], len(skills)
    cache = EmbCache()
    qtexts = [q["query"] for q in queries]
    qv = cache.get(qtexts)
    fam = {f: family_vectors(cache, skills, f) for f in ("nd", "sec600x8", "sec300x4", "lead", "h1")}

    def dense(f: str) -> np.ndarray:
        v, o, _ = fam[f]
        return pooled(qv @ v.T, o, n)

    def with_sections(f: str, penalty: float) -> np.ndarray:
        s = dense(f)
        return np.maximum(dense("nd"), np.where(s <= -1, -1, s - penalty))

    def count(*fs: str) -> int:
        return sum(fam[f][2] for f in fs)

    def kw(body: int) -> tuple[np.ndarray, np.ndarray]:
        return BM25(["\n".join([s.title] * 3 + [s.description] * 2 + [" ".join(s.headings),
                                                                      s.body[:body]])
                     for s in skills]).matrix(qtexts)

    def zfuse(d: np.ndarray, b: np.ndarray, a: float = 0.5) -> np.ndarray:
        return a * norm(d, "z") + (1 - a) * norm(b, "z")

    f = folds(queries)
    none_total = sum(not q["expected"] for q in queries)
    everything = np.ones((len(queries), n), dtype=bool)
    print("| variant | R@1 | R@3 | MRR | none answered | texts embedded | direct R@1/R@3 | "
          "indirect R@1/R@3 | half A/B R@1 | 2-fold CV (tuned on one half, tested on other) |")
    print("|---|---|---|---|---|---|---|---|---|---|")

    # Current system (replica of HybridIndex.search + SkillLibrary.search)
    b20, best20 = kw(20_000)
    v0, o0, _ = fam["nd"]
    v1, o1, _ = fam["sec600x8"]
    chunk_sims = np.concatenate([qv @ v0.T, qv @ v1.T], 1)
    owner = np.concatenate([o0, o1])
    cur = current_system(chunk_sims, owner, b20, n)
    dmax = pooled(chunk_sims, owner, n)
    allowed = (dmax >= 0.30) | (b20 / best20[:, None] >= 0.25)
    r, ans = gated_ranks(cur, allowed, queries, ids)
    report("current: nd+8x600 sections, BM25 body20k, RRF60 (lists 100/50), per-hit gate", r,
           queries, count("nd", "sec600x8"), f"{ans}/{none_total}")
    r, _ = gated_ranks(cur, everything, queries, ids)
    report("current, no gate", r, queries, count("nd", "sec600x8"), "-")
    sec = with_sections("sec600x8", 0.0)
    r, _ = gated_ranks(zfuse(sec, b20), everything, queries, ids)
    report("current texts, z-score fusion 0.5", r, queries, count("nd", "sec600x8"), "-")

    b3, best3 = kw(3_000)
    nd = dense("nd")
    r, _ = gated_ranks(rrf([(1, nd), (1, b3)], 60), everything, queries, ids)
    report("nd + BM25 body3k, RRF k=60", r, queries, count("nd"), "-")
    grid = {(k, w): dict(k=k, w=w) for k in (5, 10, 20, 30, 60, 100) for w in (0.5, 0.67, 1, 1.5, 2)}
    tot, info = cv(grid, lambda k, w: rrf([(w, nd), (1, b3)], k), queries, ids, f)
    print(f"|  ... weighted RRF, (k, dense weight) tuned | | | | | | | | | {fmt(tot)} picks {info['picks']} |")
    r, _ = gated_ranks(zfuse(nd, b20), everything, queries, ids)
    report("nd + BM25 body20k, z 0.5", r, queries, count("nd"), "-")
    r, _ = gated_ranks(norm(nd, "minmax") * 0.5 + norm(b3, "minmax") * 0.5, everything, queries, ids)
    report("nd + BM25 body3k, min-max 0.5", r, queries, count("nd"), "-")
    r, _ = gated_ranks(nd + 3 * b3 / best3[:, None], everything, queries, ids)
    report("nd + BM25 body3k, cos + 3*bm25/best", r, queries, count("nd"), "-")
    zrec = zfuse(nd, b3)
    r, _ = gated_ranks(zrec, everything, queries, ids)
    grid = {a: dict(a=a) for a in (0.3, 0.4, 0.5, 0.6, 0.7)}
    tot, info = cv(grid, lambda a: zfuse(nd, b3, a), queries, ids, f)
    report("**nd + BM25 body3k, z-score 0.5** (ranking)", r, queries, count("nd"), "-",
           f"weight a: {fmt(tot)} picks {info['picks']}")
    bodies = {b: kw(b)[0] for b in (1000, 2000, 3000, 5000, 10000, 20000)}
    tot, info = cv({b: dict(b=b) for b in bodies}, lambda b: zfuse(nd, bodies[b]), queries, ids, f)
    print(f"|  ... BM25 body length tuned (1k..20k) | | | | | | | | | {fmt(tot)} picks {info['picks']} |")
    for label, d, c in (("nd + max(8x600 sections)-0.05", with_sections("sec600x8", 0.05),
                         count("nd", "sec600x8")),
                        ("nd + max(4x300 sections)-0.05", with_sections("sec300x4", 0.05),
                         count("nd", "sec300x4")),
                        ("nd + max(body lead 1200ch)", with_sections("lead", 0.0), count("nd", "lead")),
                        ("nd + max(headings text)-0.05", with_sections("h1", 0.05), count("nd", "h1"))):
        r, _ = gated_ranks(zfuse(d, b3), everything, queries, ids)
        report(f"{label} + BM25 body3k, z 0.5", r, queries, c, "-")

    # Gate: answer only when the best name+description cosine reaches a floor (or BM25 covers a
    # quarter of what the query could match, the existing min_keyword escape for exact names).
    cos_max, bmn_max = nd.max(1), (b3 / best3[:, None]).max(1)
    print()
    print("gate curve on the recommended ranking (query-level: answer iff max nd cosine >= t "
          "or max BM25/best >= 0.25):")
    for t in np.round(np.arange(0.14, 0.32, 0.02), 2):
        ok = (cos_max >= t) | (bmn_max >= 0.25)
        r, ans = gated_ranks(zrec, np.repeat(ok[:, None], n, 1), queries, ids)
        m = metrics(r, queries)
        silenced = sum(1 for i, q in enumerate(queries) if q["expected"] and not ok[i])
        print(f"  t={t:.2f}: none answered {ans}/{none_total}, answerable silenced {silenced}/108, "
              f"R@1 {m['R@1']:.3f} R@3 {m['R@3']:.3f}")
    ok = (cos_max >= 0.20) | (bmn_max >= 0.25)
    r, ans = gated_ranks(zrec, np.repeat(ok[:, None], n, 1), queries, ids)
    print()
    report("**recommended: above + gate max nd cosine >= 0.20**", r, queries, count("nd"),
           f"{ans}/{none_total}")


# ----------------------------------------------------------------------------------------------
# Abstention (issue #12): which evidence says "no skill fits", measured on the real index.
def abstain_evidence(folder: Path, corpus_root: Path) -> dict[str, dict]:
    """Per library (dev, corpus) and request: every item's cosine and keyword share, as
    `HybridIndex.search(k=0, fusion="z")` gives them (cached under CACHE/abstain-*.pkl)."""
    import pickle
    import tempfile

    from skillbank import Skillbank
    from skillbank.embeddings import MiniLMEmbedding

    here = Path(__file__).resolve().parents[1] / "data"
    names = {i["id"]: i["name"] for i in (json.loads(x) for x in (folder / "library.jsonl").open())}
    queries = [json.loads(x) for x in (folder / "queries.jsonl").open()]
    requests = ([dict(q, group="answerable" if q["expected"] else "oos",
                      expected=[names[e] for e in q["expected"]]) for q in queries]
                + [dict(q, group="oos", expected=[]) for q in map(json.loads, (here / "out_of_scope.jsonl").open())]
                + [dict(q, group="held", expected=[]) for q in map(json.loads, (here / "out_of_scope_heldout.jsonl").open())])
    out = {}
    emb = None
    for label in ("dev", "corpus"):
        path = CACHE / f"abstain-{label}.pkl"
        if path.exists():
            out[label] = pickle.loads(path.read_bytes())
            continue
        emb = emb or MiniLMEmbedding(model_dir=MODEL_DIR)
        with tempfile.TemporaryDirectory() as tmp:
            root, roots = (Path(tmp), [folder / "skills"]) if label == "dev" else (
                corpus_root, [ROOT.parent / "shared" / "corpora" / "skills"])
            bank = Skillbank.open(root, skill_roots=roots, embedding_function=emb,
                                  include_bundled=False, sync=False)
            bank.skills.sync()
            index, rows = bank.skills.index, []
            vectors = emb.embed([r["query"] for r in requests])
            for vector, request in zip(vectors, requests):
                raw = index.search(request["query"], k=0, fusion="z", query_vector=vector)
                rows.append(dict(ids=[h.id for h in raw],
                                 dense=np.array([np.nan if h.dense is None else h.dense for h in raw]),
                                 kw=np.array([h.keyword or 0.0 for h in raw])))
            texts = {i: f"{_humanise(i)}: {index.metadata(i).get('description', '')}" for i in index.ids()}
            out[label] = dict(requests=requests, rows=rows, n=index.count(), texts=texts)
            bank.close()
        path.write_bytes(pickle.dumps(out[label]))
    return out


def abstain_features(data: dict, cache: EmbCache) -> list[dict]:
    """The candidate evidence per request (see the section's printout for what each means)."""
    from skillbank.memories.skills import fit

    protos = cache.get(list(fit.BACKGROUND))
    qv = cache.get([r["query"] for r in data["requests"]])
    tops = []
    feats = []
    for request, row, q in zip(data["requests"], data["rows"], qv):
        ok = ~np.isnan(row["dense"])
        order = np.argsort(-np.where(ok, row["dense"], -9))
        ds = row["dense"][order[: int(ok.sum())]]
        top = row["ids"][order[0]]
        tops.append(top)
        feats.append(dict(group=request["group"], query=request["query"], n=data["n"], top=top,
                          c1=ds[0], gap5=ds[0] - ds[4], gap20=ds[0] - ds[19],
                          z=(ds[0] - ds.mean()) / ds.std(), std=ds.std(), mean=ds.mean(),
                          kw_top=row["kw"][order[0]], bk=row["kw"].max(),
                          protos=protos @ q, expected=request["expected"],
                          dense_order=order, dense=row["dense"], kw=row["kw"], ids=row["ids"]))
    skill_vectors = cache.get([data["texts"][t] for t in tops])
    for f, v in zip(feats, skill_vectors):
        f["covers"] = protos @ v >= fit.COVERS_BACKGROUND
    return feats


def _logistic(x: np.ndarray, y: np.ndarray, iters: int = 50) -> np.ndarray:
    """Class-balanced logistic regression by Newton steps; returns weights incl. bias (last)."""
    z = np.c_[x, np.ones(len(x))]
    w = np.zeros(z.shape[1])
    cw = np.where(y == 1, 0.5 / y.mean(), 0.5 / (1 - y.mean()))
    for _ in range(iters):
        p = 1 / (1 + np.exp(-z @ w))
        g = z.T @ (cw * (p - y)) / len(y) + 1e-3 * np.r_[w[:-1], 0]
        h = (z * (cw * p * (1 - p))[:, None]).T @ z / len(y) + 1e-3 * np.eye(len(w))
        w -= np.linalg.solve(h, g)
    return w


def shipped_rule(f: dict, c1: float | None = None, per: float | None = None,
                 delta: float | None = None, margin: float | None | str = "shipped",
                 kw_top: float | None = None) -> bool:
    """`fit.fit_probability < 0.5` with the library's inputs; parameters for the grid, each
    defaulting to `fit.py`'s value (`margin=None`: no background prototypes)."""
    from skillbank.memories.skills import fit

    per = fit.CHANCE_PER_LOG_N if per is None else per
    delta = fit.NO_SHARED_WORD_MARGIN if delta is None else delta
    margin = fit.BACKGROUND_MARGIN if margin == "shipped" else margin
    c1 = f["c1"] if c1 is None else c1
    kw_top = f["kw_top"] if kw_top is None else kw_top
    # the grid keeps the chance level at 140 skills where fit.py has it and varies its growth
    base = fit.CHANCE_BASE + (fit.CHANCE_PER_LOG_N - per) * math.log(142)
    chance = max(fit.CHANCE_FLOOR, base + per * math.log(f["n"]))
    covered = f["covers"].any()
    shares = kw_top > 0 or covered
    background = float(np.where(f["covers"], -1, f["protos"]).max())
    bar = chance + (0 if shares else delta)
    if margin is not None:
        bar = max(bar, background - margin)
    return c1 < bar


def abstain_section(folder: Path, corpus_root: Path) -> None:
    from skillbank.memories.skills import fit

    cache = EmbCache()
    data = abstain_evidence(folder, corpus_root)
    feats = {label: abstain_features(d, cache) for label, d in data.items()}
    groups = {"answerable": ("answerable",), "in-sample oos": ("oos",), "held-out oos": ("held",)}

    def share(fs, groups_, test) -> float:
        chosen = [f for f in fs if f["group"] in groups_]
        return sum(map(test, chosen)) / max(len(chosen), 1)

    print("## single evidence: medians, AUC (answerable vs in-sample oos), and the share of oos "
          "emptied when a threshold empties 3/108 answerable")
    keys = ("c1", "gap5", "gap20", "z", "std", "mean", "kw_top", "bk")
    for label, fs in feats.items():
        print(f"\n{label} ({fs[0]['n']} skills)\n| evidence | answerable | oos | held-out | AUC | "
              "oos empty | held-out empty |\n|---|---|---|---|---|---|---|")
        for key in keys:
            a = np.array([f[key] for f in fs if f["group"] == "answerable"])
            o = np.array([f[key] for f in fs if f["group"] == "oos"])
            h = np.array([f[key] for f in fs if f["group"] == "held"])
            auc = float(np.mean(a[:, None] > o[None, :]) + 0.5 * np.mean(a[:, None] == o[None, :]))
            t = np.sort(a)[3]
            print(f"| {key} | {np.median(a):.3f} | {np.median(o):.3f} | {np.median(h):.3f} | "
                  f"{auc:.3f} | {np.mean(o < t):.3f} | {np.mean(h < t):.3f} |")

    print("\n## logistic fits over the query's similarity distribution (in-sample fit, threshold "
          "at 3/108 answerable emptied per library) and the niche simulation")
    lnn = lambda f: math.log(f["n"])  # noqa: E731
    variants = {"c1, ln n": ("c1",), "c1, ln n, gap5": ("c1", "gap5"),
                "c1, ln n, z": ("c1", "z"), "c1, ln n, std": ("c1", "std")}
    allf = [f for fs in feats.values() for f in fs]
    fit_on = [f for f in allf if f["group"] != "held"]
    for name, cols in variants.items():
        xs = lambda fs: np.array([[f[c] for c in cols] + [lnn(f)] for f in fs])  # noqa: E731
        mu, sd = xs(fit_on).mean(0), xs(fit_on).std(0)
        w = _logistic((xs(fit_on) - mu) / sd, np.array([f["group"] == "answerable" for f in fit_on], float))
        score = lambda fs: np.c_[(xs(fs) - mu) / sd, np.ones(len(fs))] @ w  # noqa: E731
        t = min(np.sort(score([f for f in fs if f["group"] == "answerable"]))[3] for fs in feats.values())
        line = []
        for label, fs in feats.items():
            a = score([f for f in fs if f["group"] == "answerable"])
            o, h = score([f for f in fs if f["group"] == "oos"]), score([f for f in fs if f["group"] == "held"])
            niche = [dict(f, **_niche(f, 30)) for f in fs if f["group"] == "answerable"]
            niche = [f for f in niche if f["c1"] is not None]
            line.append(f"{label}: wrongly emptied {np.mean(a < t):.3f}, oos {np.mean(o < t):.3f}, "
                        f"held-out {np.mean(h < t):.3f}, niche emptied {np.mean(score(niche) < t):.3f}")
        raw = w[:-1] / sd
        print(f"- {name} (weights {dict(zip(cols + ('ln n',), raw.round(1)))}): " + "; ".join(line))
    line = []
    for label, fs in feats.items():
        niche = [dict(f, **_niche(f, 30)) for f in fs if f["group"] == "answerable"]
        niche = [f for f in niche if f["c1"] is not None]
        line.append(f"{label}: niche emptied {np.mean([shipped_rule(f) for f in niche]):.3f}")
    print("- shipped rule: " + "; ".join(line))

    print("\n## the shipped rule's grid (chosen on in-sample columns only; held-out shown after)")
    print("| chance per ln n | no-word margin | background margin | dev wrongly | dev oos | "
          "corpus wrongly | corpus oos | dev held-out | corpus held-out |\n|---|---|---|---|---|---|---|---|---|")
    for per in (0.025, 0.028, 0.03):
        for delta in (0.0, 0.1, 0.15):
            for margin in (None, 0.0, 0.02, 0.04):
                cells = []
                for label, fs in feats.items():
                    rule = lambda f: shipped_rule(f, per=per, delta=delta, margin=margin)  # noqa: E731
                    cells.append((share(fs, groups["answerable"], rule), share(fs, groups["in-sample oos"], rule),
                                  share(fs, groups["held-out oos"], rule)))
                (dw, do, dh), (cw, co, ch) = cells
                shipped = (fit.CHANCE_PER_LOG_N, fit.NO_SHARED_WORD_MARGIN, fit.BACKGROUND_MARGIN)
                mark = " **shipped**" if (per, delta, margin) == shipped else ""
                print(f"| {per}{mark} | {delta} | {'off' if margin is None else margin} | {dw:.3f} | "
                      f"{do:.3f} | {cw:.3f} | {co:.3f} | {dh:.3f} | {ch:.3f} |")


def _niche(f: dict, drop: int) -> dict:
    """The request's evidence if its expected skill had no neighbours: the `drop` items most
    similar to it (other than an expected one) removed from the library."""
    order = [i for i in f["dense_order"] if not np.isnan(f["dense"][i])]
    target = [i for i in order if f["ids"][i] in f["expected"]]
    if not target:
        return dict(c1=None)
    others = [i for i in order if f["ids"][i] not in f["expected"]][drop:]
    ds = np.sort(np.r_[f["dense"][target[0]], f["dense"][others]])[::-1]
    return dict(c1=ds[0], gap5=ds[0] - ds[4], gap20=ds[0] - ds[19], z=(ds[0] - ds.mean()) / ds.std(),
                std=ds.std(), mean=ds.mean(), n=f["n"] - drop, kw_top=f["kw"][target[0]])


if __name__ == "__main__":
    main()
