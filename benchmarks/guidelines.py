"""Critique -> guideline quality: skillbank's guideline memory vs. notes-as-files, same run.

    python benchmarks/guidelines.py                       # dev set, the bank's settings
    python benchmarks/guidelines.py --merge-threshold 0.5 # the recommended merge threshold
    python benchmarks/guidelines.py --data heldout --json out.json
    python benchmarks/guidelines.py --llm openai:gpt-4o-mini   # your model and key

`--llm PROVIDER:MODEL` measures the LLM distiller instead: any chat model LangChain's
`init_chat_model` can build (its provider package and API key are yours to supply; nothing here
calls a model by default), wrapped by `skillbank.adapters.langchain.ChatModelDistiller`.

Diagnostic (clearly labelled in the output): `--oracle-distiller` extracts the true rules from
the labels, an upper bound for the memory given perfect extraction. How far the deterministic
signals can go at all is measured by `benchmarks/experiments/guideline_bounds.py`.

Every critique of `<set>/<data>/critiques.jsonl` goes, in time order, through
`bank.guidelines.learn(critique, task=..., response=..., score=...)` with the deterministic
`RuleDistiller` and the real all-MiniLM-L6-v2 model. The prediction file for the set's `score.py`
is then built from what the memory did:

* assignments: critique id -> ids of the guidelines its rules created, merged into or
  superseded with (the ids in the learn report's added / merged / superseded / pending entries);
* guidelines: every guideline file, "active" when its status is active, "retired" otherwise
  (superseded, retired and pending alike: none of them is served by search, so none is part of
  what the agent is told);
* retrievals: task id -> ids of `bank.guidelines.search(task, k=10)`.

Also printed: merge precision (merges that joined a guideline of the same true rule, by the
labels), merge recall (of the critiques, with at least one rule kept, whose true rule already had
a guideline: the share that merged into one of those) and the unit set of short and compound
critiques
(`benchmarks/instruction_set.py`: instructions kept as active rules, contradiction pairs
superseded the right way), with the same model and distiller. Guards on supersession: the
guidelines superseded although none of their critiques' rules is one the set marks superseded,
and precision / recall of the plain-language overrule reading on the hand-labelled pairs of
`benchmarks/data/overrule_pairs.jsonl` (rules of both sets that share words, and pairs a
reviewer wrote to break the reading), per source.

Baseline (the memory-as-files approach): every actionable critique sentence (the same distiller
decides which) is stored as its own note, nothing is merged or retired, and a task retrieves the
notes nearest by dense cosine, with the same model.
"""

from __future__ import annotations

import argparse
import importlib.util
import json
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))
import instruction_set  # noqa: E402
from _common import SHARED, default_model_dir  # noqa: E402

DEFAULT_SET = SHARED / "benchmarks" / "critique-guidelines"
KS = (1, 3, 5, 10)


def oracle_distiller(rules: list[dict], crits: list[dict], **thresholds: float) -> Any:
    """Diagnostic only (it reads the labels): a distiller that turns each critique into the true
    rules it expresses, worded exactly as in rules.jsonl, and relates rules like RuleDistiller.
    It measures the memory's merging, supersession and retrieval given a perfect extraction
    step (what a good LLM distiller approaches), separately from the deterministic extraction.
    """
    from skillbank.distill import CandidateRule, RuleDistiller, guess_topic
    from skillbank.distill.topics import _when_to_use

    text_of = {r["rule_id"]: r["guideline"] for r in rules}
    rules_of = {c["critique"]: c["rule_ids"] for c in crits}

    class OracleDistiller(RuleDistiller):
        def rules_from_critique(self, critique: str, *, task: str | None = None,
                                response: str | None = None, score: float | None = None
                                ) -> list[CandidateRule]:
            out = []
            for rule_id in rules_of.get(critique, []):
                text = text_of[rule_id]
                topic = guess_topic(text, task, critique)
                out.append(CandidateRule(text=text, topic=topic, source_sentence=critique,
                                         when_to_use=_when_to_use(text, topic, task)))
            return out or [CandidateRule(text=critique, actionable=False)]

    return OracleDistiller(**thresholds)


def load_scorer(set_dir: Path) -> Any:
    """The set's own score.py, imported as a module (standard library only)."""
    spec = importlib.util.spec_from_file_location("critique_guidelines_score", set_dir / "score.py")
    if spec is None or spec.loader is None:
        raise SystemExit(f"no score.py in {set_dir}")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def load_data(set_dir: Path, data: str) -> tuple[list[dict], list[dict], list[dict]]:
    folder = Path(data) if Path(data).is_dir() else set_dir / data
    read = lambda name: [json.loads(x) for x in (folder / name).open(encoding="utf-8") if x.strip()]  # noqa: E731
    rules, crits, tasks = read("rules.jsonl"), read("critiques.jsonl"), read("tasks.jsonl")
    crits.sort(key=lambda c: c["t"])
    return rules, crits, tasks


def run_memory(crits: list[dict], tasks: list[dict], embedding: Any, distiller: Any = None,
               **settings: Any) -> tuple[dict, dict]:
    """Stream the critiques through a fresh bank's guideline memory; return predictions, stats."""
    from skillbank import Skillbank

    with tempfile.TemporaryDirectory() as tmp:
        bank = Skillbank.open(tmp, embedding_function=embedding, include_bundled=False,
                              sync=False, distiller=distiller, **settings)
        memory = bank.guidelines
        memory.sync()
        started = time.perf_counter()
        assignments: dict[str, list[str]] = {}
        actions: dict[str, int] = {}
        labels: dict[str, set[str]] = {}  # guideline id -> true rules of the critiques it holds
        merges = {"labelled": 0, "right": 0, "opportunities": 0, "found": 0}
        for crit in crits:
            report = memory.learn(crit["critique"], task=crit.get("task"),
                                  response=crit.get("response_excerpt"), score=crit.get("score"))
            assignments[crit["cid"]] = report.ids("added", "merged", "superseded", "pending")
            truth = set(crit.get("rule_ids") or [])
            # Merge recall: a critique whose true rule already has a guideline (by the labels)
            # is an opportunity; found when one of its rules merged into such a guideline.
            known = {gid for gid, rules in labels.items() if truth & rules}
            if truth and known and report.ids("added", "merged", "superseded", "pending"):
                merges["opportunities"] += 1
                merges["found"] += any(e.action == "merged" and e.guideline_id in known
                                       for e in report.entries)
            for entry in report.entries:
                actions[entry.action] = actions.get(entry.action, 0) + 1
                if entry.action == "merged" and truth and labels.get(entry.guideline_id):
                    merges["labelled"] += 1  # right when it joined a guideline of its own rule
                    merges["right"] += bool(truth & labels[entry.guideline_id])
                if entry.guideline_id:
                    labels.setdefault(entry.guideline_id, set()).update(truth)
        learn_seconds = time.perf_counter() - started
        guidelines = {g.id: {"text": g.text, "status": "active" if g.status == "active" else "retired",
                             "memory_status": g.status, "topic": g.topic,
                             "reinforcements": g.reinforcements}
                      for g in memory.list(namespace="*")}
        started = time.perf_counter()
        retrievals = {t["tid"]: [h.id for h in memory.search(t["task"], k=max(KS))] for t in tasks}
        search_ms = (time.perf_counter() - started) * 1000 / max(1, len(tasks))
        superseded = {gid: {"text": g["text"], "rules": sorted(labels.get(gid, ()))}
                      for gid, g in guidelines.items() if g["memory_status"] == "superseded"}
        stats = {"learn_seconds": learn_seconds, "search_ms": search_ms, "actions": actions,
                 "merges": merges, "superseded": superseded,
                 "counts": memory.counts(),
                 "settings": {"merge_threshold": bank.settings.merge_threshold,
                              "related_threshold": bank.settings.related_threshold}}
        bank.close()
    return {"assignments": assignments, "guidelines": guidelines, "retrievals": retrievals}, stats


def run_instruction_set(embedding: Any, distiller: Any = None) -> dict[str, Any]:
    """The unit set of short and compound critiques (see benchmarks/instruction_set.py)."""
    from skillbank import Skillbank

    with tempfile.TemporaryDirectory() as tmp:
        bank = Skillbank.open(tmp, embedding_function=embedding, include_bundled=False,
                              distiller=distiller)
        try:
            return instruction_set.run(bank.guidelines, instruction_set.load_rows())
        finally:
            bank.close()


def run_baseline(crits: list[dict], tasks: list[dict], embedding: Any) -> tuple[dict, dict]:
    """Every actionable critique sentence is a note of its own; dense cosine retrieval."""
    from skillbank.distill import RuleDistiller

    distiller = RuleDistiller()
    started = time.perf_counter()
    notes: list[tuple[str, str]] = []
    assignments: dict[str, list[str]] = {}
    for crit in crits:
        ids: list[str] = []
        seen: set[str] = set()
        for rule in distiller.rules_from_critique(crit["critique"], task=crit.get("task"),
                                                  response=crit.get("response_excerpt"),
                                                  score=crit.get("score")):
            sentence = (rule.source_sentence or rule.text).strip()
            if not rule.actionable or sentence in seen:
                continue
            seen.add(sentence)
            note_id = f"note-{len(notes):04d}"
            notes.append((note_id, sentence))
            ids.append(note_id)
        assignments[crit["cid"]] = ids
    vectors = embedding.embed([text for _, text in notes]) if notes else np.zeros((0, 384))
    queries = embedding.embed([t["task"] for t in tasks])
    retrievals = {}
    for task, query in zip(tasks, queries):
        order = np.argsort(-(vectors @ query))[: max(KS)] if len(notes) else []
        retrievals[task["tid"]] = [notes[i][0] for i in order]
    guidelines = {note_id: {"text": text, "status": "active"} for note_id, text in notes}
    stats = {"learn_seconds": time.perf_counter() - started, "notes": len(notes)}
    return {"assignments": assignments, "guidelines": guidelines, "retrievals": retrievals}, stats


ROWS = (
    ("active guidelines", lambda m: m["counts"]["pred_active_guidelines"], "{:d}"),
    ("all guidelines", lambda m: m["counts"]["pred_guidelines"], "{:d}"),
    ("active / true active rules", lambda m: m["counts"]["active_ratio"], "{:.2f}"),
    ("rule coverage", lambda m: m["counts"]["rule_coverage"], "{:.3f}"),
    ("redundant active", lambda m: m["counts"]["redundant_active_guidelines"], "{:d}"),
    ("spurious active", lambda m: m["counts"]["spurious_active_guidelines"], "{:d}"),
    ("B-cubed F1", lambda m: m["clustering"]["bcubed_f1"], "{:.3f}"),
    ("B-cubed precision (strict)", lambda m: m["clustering"]["bcubed_strict"]["precision"], "{:.3f}"),
    ("B-cubed recall (strict)", lambda m: m["clustering"]["bcubed_strict"]["recall"], "{:.3f}"),
    ("labelled critiques assigned", lambda m: m["clustering"]["labelled_critiques_assigned"], "{:.3f}"),
    ("noise critiques absorbed", lambda m: m["clustering"]["noise_critiques_absorbed"], "{:.3f}"),
    ("Recall@1", lambda m: m["retrieval"]["@1"]["recall"], "{:.3f}"),
    ("Recall@3", lambda m: m["retrieval"]["@3"]["recall"], "{:.3f}"),
    ("Recall@5", lambda m: m["retrieval"]["@5"]["recall"], "{:.3f}"),
    ("Precision@5", lambda m: m["retrieval"]["@5"]["precision"], "{:.3f}"),
    ("Recall@10", lambda m: m["retrieval"]["@10"]["recall"], "{:.3f}"),
    ("stale retrieval rate @5", lambda m: m["retrieval"]["@5"]["stale_retrieval_rate"], "{:.3f}"),
    ("supersede pairs ok", lambda m: m["supersession"]["pairs_ok"], "{:d}"),
)


#: Pairs of rules, labelled by hand: does the newer rule overrule the older one? `source`
#: "fix": rules of the two critique sets that share words, and the session notes' false
#: supersessions, labelled in session 14 together with the fix they measure; "review": pairs a
#: reviewer of that fix wrote to break it (mostly real corrections), before its last changes.
OVERRULE_PAIRS = Path(__file__).resolve().parent / "data" / "overrule_pairs.jsonl"


def overrule_pairs(path: Path = OVERRULE_PAIRS) -> dict[str, dict[str, Any]]:
    """Precision and recall of the plain-language overrule reading (no model) per source."""
    from skillbank.distill.supersession import overrules

    rows = [json.loads(line) for line in path.open(encoding="utf-8") if line.strip()]
    out: dict[str, dict[str, Any]] = {}
    for source in dict.fromkeys(r.get("source", "fix") for r in rows):
        mine = [r for r in rows if r.get("source", "fix") == source]
        said = [bool(overrules(r["new"], r["old"], r.get("sentence") or r["new"])) for r in mine]
        right = sum(s and r["overrules"] for s, r in zip(said, mine))
        wrong = [f"{'false overrule' if s else 'missed'}: {r['new']!r} / {r['old']!r}"
                 for s, r in zip(said, mine) if s != r["overrules"]]
        out[source] = {"pairs": len(mine), "overrules": sum(r["overrules"] for r in mine),
                       "precision": right / max(1, sum(said)),
                       "recall": right / max(1, sum(r["overrules"] for r in mine)),
                       "false": wrong}
    return out


MERGE_PAIRS = Path(__file__).resolve().parent / "data" / "merge_pairs.jsonl"


def merge_pairs(embedding: Any, path: Path = MERGE_PAIRS) -> dict[str, Any]:
    """Each pair learnt as two critiques (the older first) in a namespace of its own: does the
    newer one join the older one's guideline? For pairs of two instructions ("same": false) a
    merge or a supersession loses one (the guard); for one instruction said twice a merge is
    right and keeping both is a duplicate, nothing lost."""
    from skillbank import Skillbank

    rows = [json.loads(line) for line in path.open(encoding="utf-8") if line.strip()]
    joined: list[bool] = []
    with tempfile.TemporaryDirectory() as tmp, Skillbank.open(
            tmp, embedding_function=embedding, include_bundled=False, sync=False) as bank:
        for i, row in enumerate(rows):
            namespace = f"pair-{i}"
            first = set(bank.guidelines.learn(row["a"], namespace=namespace).ids(
                "added", "merged", "superseded"))
            report = bank.guidelines.learn(row["b"], namespace=namespace)
            joined.append(any(e.action in ("merged", "superseded") and
                              (e.guideline_id in first or e.superseded_id in first)
                              for e in report.entries))
    distinct = [(r, j) for r, j in zip(rows, joined) if not r["same"]]
    same = [(r, j) for r, j in zip(rows, joined) if r["same"]]
    kinds: dict[str, list[int]] = {}
    for row, j in zip(rows, joined):
        kinds.setdefault(f"{'same' if row['same'] else 'distinct'}: {row['kind']}", []).append(j)
    return {"distinct": len(distinct), "lost": [r for r, j in distinct if j],
            "same": len(same), "merged": sum(j for _r, j in same),
            "kinds": {k: (sum(v), len(v)) for k, v in sorted(kinds.items())}}


def table(metrics: dict[str, dict], stats: dict[str, dict]) -> str:
    names = list(metrics)
    head = f"| metric | {' | '.join(names)} | ratio |"
    lines = [head, "|" + "---|" * (len(names) + 2)]
    for label, get, fmt in ROWS:
        values = [get(metrics[n]) for n in names]
        ratio = ""
        if len(values) == 2 and isinstance(values[1], (int, float)) and values[1]:
            ratio = f"{values[0] / values[1]:.2f}x"
        lines.append(f"| {label} | {' | '.join(fmt.format(v) for v in values)} | {ratio} |")
    lines.append("| learn time (s) | " + " | ".join(f"{stats[n]['learn_seconds']:.1f}" for n in names)
                 + " | |")
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--set", type=Path, default=DEFAULT_SET, help="the benchmark folder")
    parser.add_argument("--data", default="dev", help="dev, heldout, or a folder of the 3 files")
    parser.add_argument("--model-dir", default=None)
    parser.add_argument("--json", type=Path, help="write metrics, stats and predictions here")
    parser.add_argument("--pred", type=Path, help="write skillbank's prediction file here")
    parser.add_argument("--merge-threshold", type=float, default=None,
                        help="override settings.merge_threshold (default: the bank's setting)")
    parser.add_argument("--related-threshold", type=float, default=None,
                        help="override settings.related_threshold")
    parser.add_argument("--oracle-distiller", action="store_true",
                        help="diagnostic: extract the true rules from the labels (an upper bound "
                             "for the memory given perfect extraction; not a result)")
    parser.add_argument("--llm", metavar="PROVIDER:MODEL", default=None,
                        help="distil with this LangChain chat model (init_chat_model spec), "
                             "e.g. openai:gpt-4o-mini; needs its provider package and API key")
    args = parser.parse_args(argv)
    if args.llm and args.oracle_distiller:
        parser.error("--llm and --oracle-distiller are two different distillers: pick one")

    from skillbank.embeddings import MiniLMEmbedding

    scorer = load_scorer(args.set)
    rules, crits, tasks = load_data(args.set, args.data)
    embedding = MiniLMEmbedding(model_dir=args.model_dir or default_model_dir())

    distiller = None
    if args.llm:
        from langchain.chat_models import init_chat_model

        from skillbank.adapters.langchain import ChatModelDistiller

        distiller = ChatModelDistiller(init_chat_model(args.llm, temperature=0))
    elif args.oracle_distiller:
        from skillbank.settings import Settings

        distiller = oracle_distiller(
            rules, crits,
            same_threshold=args.merge_threshold or Settings.merge_threshold,
            related_threshold=args.related_threshold or Settings.related_threshold)
    distiller_name = ("ORACLE (reads the labels: a diagnostic)" if args.oracle_distiller
                      else f"LLMDistiller ({args.llm})" if args.llm else "RuleDistiller")
    memory_pred, memory_stats = run_memory(crits, tasks, embedding, distiller,
                                           merge_threshold=args.merge_threshold,
                                           related_threshold=args.related_threshold)
    baseline_pred, baseline_stats = run_baseline(crits, tasks, embedding)
    metrics = {
        "skillbank": scorer.score(rules, crits, tasks, memory_pred, KS),
        "notes baseline": scorer.score(rules, crits, tasks, baseline_pred, KS),
    }
    stats = {"skillbank": memory_stats, "notes baseline": baseline_stats}
    settings = memory_stats["settings"]
    print(f"critique-guidelines/{args.data}: {len(crits)} critiques, {len(rules)} true rules, "
          f"{len(tasks)} tasks; model all-MiniLM-L6-v2; distiller "
          f"{distiller_name}"
          f"; "
          f"merge_threshold {settings['merge_threshold']}, "
          f"related_threshold {settings['related_threshold']}")
    print(table(metrics, stats))
    print(f"\nskillbank actions: {memory_stats['actions']}; final statuses: "
          f"{memory_stats['counts']}; search {memory_stats['search_ms']:.1f} ms/task")
    if args.llm and getattr(distiller, "last_error", None):
        print(f"LLM distiller fell back to the rule distiller at least once; last error: "
              f"{distiller.last_error}")
    pairs = metrics["skillbank"]["supersession"]["pairs"]
    print("supersede pairs: " + ", ".join(f"{k} {v['final_state']}" for k, v in pairs.items()))
    merges = memory_stats["merges"]
    print(f"merges into a guideline of labelled critiques: {merges['labelled']}, of which right "
          f"(same true rule) {merges['right']} = "
          f"{merges['right'] / max(1, merges['labelled']):.2f} merge precision; merge recall "
          f"{merges['found']}/{merges['opportunities']} = "
          f"{merges['found'] / max(1, merges['opportunities']):.2f} (critiques whose true rule "
          f"already had a guideline and that merged into one of them)")
    # Guard: a guideline superseded although none of its critiques' rules is one the set marks
    # superseded is an instruction the agent is no longer told.
    marked = {r["supersedes"] for r in rules if r.get("supersedes")}
    wrong = {gid: g for gid, g in memory_stats["superseded"].items() if not marked & set(g["rules"])}
    print(f"superseded guidelines: {len(memory_stats['superseded'])}, of which wrongly (none of "
          f"their critiques' rules is marked superseded) {len(wrong)}")
    for g in wrong.values():
        print(f"  wrongly superseded: {g['text']!r} (rules {', '.join(g['rules']) or 'none'})")
    for source, seen in overrule_pairs().items():
        print(f"overrule pairs ({OVERRULE_PAIRS.name}, {source}: {seen['pairs']} labelled, "
              f"{seen['overrules']} overruling): precision {seen['precision']:.3f}, "
              f"recall {seen['recall']:.3f}")
        if source == "fix":
            for pair in seen["false"]:
                print(f"  {pair}")
    pairs = merge_pairs(embedding)
    print(f"merge pairs ({MERGE_PAIRS.name}): two instructions joined into one (lost) "
          f"{len(pairs['lost'])}/{pairs['distinct']}; one instruction said twice merged "
          f"{pairs['merged']}/{pairs['same']}")
    print("  joined per kind: " + "; ".join(f"{k} {j}/{n}" for k, (j, n) in pairs["kinds"].items()))
    for row in pairs["lost"]:
        print(f"  lost: {row['a']!r} / {row['b']!r}")
    instructions = run_instruction_set(embedding, distiller)
    print(f"\ninstruction set ({instruction_set.DATA.name}: {instructions['critiques']} critiques, "
          f"{instructions['instructions']} instructions, {instructions['pairs']} contradiction "
          f"pairs): kept as active rules {instructions['kept']}/{instructions['instructions']} = "
          f"{instructions['kept_rate']:.3f}; pairs superseded the right way "
          f"{instructions['pairs_right']}/{instructions['pairs']}; merged inside a critique "
          f"{len(instructions['merged_inside_a_critique'])}; compound critiques' instructions in "
          f"their own top 5 {instructions['compound_in_top5']}/"
          f"{instructions['compound_instructions']}")
    for lost in instructions["lost"]:
        print(f"  lost: {lost}")
    for wrong in instructions["wrong_pairs"]:
        print(f"  wrong pair: {wrong}")
    if args.pred:
        args.pred.write_text(json.dumps(memory_pred, indent=1))
    if args.json:
        args.json.write_text(json.dumps({"metrics": metrics, "stats": stats,
                                         "predictions": {"skillbank": memory_pred,
                                                         "notes baseline": baseline_pred}},
                                        indent=1, default=str))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
