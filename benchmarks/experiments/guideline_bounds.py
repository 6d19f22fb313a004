"""How far can a model-free distiller go on the critique set? Upper bounds, measured.

    python benchmarks/experiments/guideline_bounds.py [--data dev]

`benchmarks/guidelines.py` measures skillbank's guideline memory against the issue's targets
(B-cubed F1 >= 0.7, task Recall@5 >= 0.8 with the deterministic distiller). This experiment asks
what the *signals* that a deterministic distiller has (all-MiniLM-L6-v2 cosine, word overlap,
the task a critique was about) allow at best, using the labels in ways no real memory can:

1. Separability: for pairs of labelled critiques of the same domain, how well does each
   similarity tell "same rule" from "different rule" (ROC AUC; 0.5 is chance)?
2. Clustering bound: batch average-linkage clustering of all labelled critiques at once (the
   memory sees them one at a time), with the number of clusters picked by the labels. Once on
   the similarities alone, once with the true domain of every critique given for free.
3. Retrieval bound: the true rules, perfectly clustered, indexed by the hand-written rule text
   and its `applies_when`, by the tasks their critiques were about, or both; and the same with
   every task's true domain given for free.

Nothing here is a result of skillbank; it is the ceiling that skillbank's figures sit under.
"""

from __future__ import annotations

import argparse
import collections
import re
import sys
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
from _common import default_model_dir  # noqa: E402
from guidelines import DEFAULT_SET, load_data, load_scorer  # noqa: E402


def unit(vectors: np.ndarray) -> np.ndarray:
    return vectors / np.maximum(np.linalg.norm(vectors, axis=1, keepdims=True), 1e-12)


def tfidf_cosine(texts: list[str]) -> np.ndarray:
    """Plain sublinear TF-IDF cosine over content words (the distiller's stopword list)."""
    from skillbank.distill.vocabulary import _STOPWORDS

    docs = [[w for w in re.findall(r"[a-z][a-z0-9_'-]+", t.lower()) if w not in _STOPWORDS]
            for t in texts]
    vocab = {w: i for i, w in enumerate(sorted({w for d in docs for w in d}))}
    df = np.zeros(len(vocab))
    for d in docs:
        for w in set(d):
            df[vocab[w]] += 1
    idf = np.log((1 + len(docs)) / (1 + df)) + 1
    matrix = np.zeros((len(docs), len(vocab)))
    for row, d in enumerate(docs):
        for w, n in collections.Counter(d).items():
            matrix[row, vocab[w]] = (1 + np.log(n)) * idf[vocab[w]]
    matrix = unit(matrix)
    return matrix @ matrix.T


def auc(scores: np.ndarray, positive: np.ndarray) -> float:
    """ROC AUC by the rank-sum (Mann-Whitney) formula, ties shared."""
    order = scores.argsort(kind="mergesort")
    ranks = np.empty(len(scores))
    sorted_scores = scores[order]
    i = 0
    while i < len(scores):
        j = i
        while j + 1 < len(scores) and sorted_scores[j + 1] == sorted_scores[i]:
            j += 1
        ranks[order[i:j + 1]] = (i + j) / 2 + 1
        i = j + 1
    n_pos, n_neg = positive.sum(), (~positive).sum()
    return float((ranks[positive].sum() - n_pos * (n_pos + 1) / 2) / (n_pos * n_neg))


def average_linkage(similarity: np.ndarray, sizes_wanted: range) -> dict[int, list[int]]:
    """Agglomerative clustering (UPGMA); labels at each wanted number of clusters."""
    n = len(similarity)
    sim = similarity.astype(float).copy()
    np.fill_diagonal(sim, -np.inf)
    alive = np.ones(n, bool)
    size = np.ones(n)
    label = list(range(n))
    out: dict[int, list[int]] = {}
    clusters = n
    while clusters > min(sizes_wanted):
        masked = np.where(alive[:, None] & alive[None, :], sim, -np.inf)
        i, j = np.unravel_index(np.argmax(masked), masked.shape)
        merged = (size[i] * sim[i] + size[j] * sim[j]) / (size[i] + size[j])
        sim[i, :], sim[:, i] = merged, merged
        sim[i, i] = -np.inf
        alive[j], size[i] = False, size[i] + size[j]
        label = [i if x == j else x for x in label]
        clusters -= 1
        if clusters in sizes_wanted:
            out[clusters] = list(label)
    return out


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--set", type=Path, default=DEFAULT_SET)
    parser.add_argument("--data", default="dev")
    parser.add_argument("--model-dir", default=None)
    args = parser.parse_args(argv)

    from skillbank.distill import RuleDistiller
    from skillbank.embeddings import MiniLMEmbedding

    scorer = load_scorer(args.set)
    rules, crits, tasks = load_data(args.set, args.data)
    model = MiniLMEmbedding(model_dir=args.model_dir or default_model_dir())
    embed = lambda texts: unit(np.asarray(model.embed(list(texts)), dtype=float))  # noqa: E731

    labelled = [c for c in crits if c["rule_ids"]]
    distiller = RuleDistiller()
    candidates = []
    for c in labelled:
        found = [r.text for r in distiller.rules_from_critique(
            c["critique"], task=c.get("task"), response=c.get("response_excerpt"),
            score=c.get("score")) if r.actionable]
        candidates.append(" ".join(found) or c["critique"])
    critique_sim = (lambda v: v @ v.T)(embed(c["critique"] for c in labelled))
    rule_sim = (lambda v: v @ v.T)(embed(candidates))
    task_sim = (lambda v: v @ v.T)(embed(c["task"] for c in labelled))
    word_sim = tfidf_cosine([c["critique"] for c in labelled])
    combined = (critique_sim + rule_sim + word_sim) / 3

    n = len(labelled)
    same_rule = np.array([[bool(set(a["rule_ids"]) & set(b["rule_ids"])) for b in labelled]
                          for a in labelled])
    same_domain = np.array([[a["domain"] == b["domain"] for b in labelled] for a in labelled])
    upper = np.triu_indices(n, 1)
    in_domain = same_domain[upper]
    print(f"critique-guidelines/{args.data}: {n} labelled critiques, {len(rules)} rules, "
          f"{len(tasks)} tasks; model all-MiniLM-L6-v2\n")
    print("1. Same rule vs other rule of the same domain, ROC AUC over critique pairs")
    print("| similarity | AUC |\n|---|---|")
    for name, sim in (("critique cosine", critique_sim), ("extracted-rule cosine", rule_sim),
                      ("task cosine", task_sim), ("TF-IDF cosine", word_sim),
                      ("mean of critique, rule, TF-IDF", combined)):
        print(f"| {name} | {auc(sim[upper][in_domain], same_rule[upper][in_domain]):.3f} |")

    print("\n2. Batch average-linkage clustering, cluster count picked by the labels")
    print("| similarity | best B-cubed F1 (P / R) | at clusters |\n|---|---|---|")
    gold = {c["cid"]: set(c["rule_ids"]) for c in labelled}
    ids = [c["cid"] for c in labelled]
    wanted = range(30, 101, 2)
    for name, sim in (("critique cosine", critique_sim),
                      ("mean of critique, rule, TF-IDF", combined),
                      ("the same + true domain given", combined - 2.0 * ~same_domain)):
        best = None
        for count, labels in average_linkage(sim, wanted).items():
            result = scorer.bcubed(ids, gold, {cid: {label} for cid, label in zip(ids, labels)})
            if best is None or result["f1"] > best[0]["f1"]:
                best = (result, count)
        assert best is not None
        print(f"| {name} | {best[0]['f1']:.3f} ({best[0]['precision']:.3f} / "
              f"{best[0]['recall']:.3f}) | {best[1]} |")

    print("\n3. Retrieval of the true rules, perfectly clustered: Recall@5")
    superseded = {r["supersedes"] for r in rules if r.get("supersedes")}
    active = [r for r in rules if r["rule_id"] not in superseded]
    sources = collections.defaultdict(list)
    for c in crits:
        for rid in c["rule_ids"]:
            sources[rid].append(c["task"])
    queries = embed(t["task"] for t in tasks)
    by_text = queries @ embed(r["guideline"] for r in active).T
    by_applies = queries @ embed(f"{r['guideline']} {r['applies_when']}" for r in active).T
    by_tasks = np.stack([(queries @ embed(sources[r["rule_id"]]).T).mean(axis=1)
                         for r in active], axis=1)
    domain_gate = np.array([[0.0 if r["domain"] == t["domain"] else -10.0 for r in active]
                            for t in tasks])

    def recall_at(scores: np.ndarray, k: int = 5) -> float:
        hits = []
        for row, task in zip(scores, tasks):
            top = {active[j]["rule_id"] for j in np.argsort(-row)[:k]}
            hits.append(len(top & set(task["relevant_rule_ids"])) / len(task["relevant_rule_ids"]))
        return float(np.mean(hits))

    print("| indexed by | R@5 | R@5, true domain given |\n|---|---|---|")
    for name, scores in (("rule text", by_text), ("rule text + applies_when", by_applies),
                         ("tasks of its critiques (mean cosine)", by_tasks),
                         ("0.7 x (rule + applies_when) + 0.3 x tasks",
                          0.7 * by_applies + 0.3 * by_tasks)):
        print(f"| {name} | {recall_at(scores):.3f} | {recall_at(scores + domain_gate):.3f} |")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
