"""Skills drafted from experience: how many, are they valid, and do held-back tasks find them.

    python benchmarks/skill_drafts.py                  # both dev sets, real MiniLM, 3 folds
    python benchmarks/skill_drafts.py --sets appworld --folds 3 --json out.json

Sets (../shared/benchmarks/experience-recall):

* `appworld` — `experiences.jsonl`: 609 lessons from AppWorld runs, each recorded as one
  experience (task, when_to_use, outcome with "comparative" as "partial", the lesson as a
  lesson: success_pattern / failure_trigger / comparison by outcome, tags). Kind of task =
  the task template (`spotify.rate_songs` of `appworld:spotify.rate_songs:5|playlists`); an
  instance = one task id.
* `alfworld` — `reflexion_alfworld.jsonl`: the 50 environments with reflections. Each
  reflection after a failed trial is a failed experience (its text as a failure lesson); an
  environment later solved adds one successful experience (the last reflection's plan as a
  success lesson). The task text is the reflection's "my plan was to …" clause (else its first
  sentence). Kind of task = `inferred_task_type` (a keyword heuristic of the set, not ground
  truth); an instance = one environment.

Reported, per set, in one run:

1. Drafting everything once: drafts, how many pass the project's validator
   (`skill_file.validate_skill`, errors) and the Agent Skills rules (name 1-64 chars of a-z 0-9
   and single hyphens, equal to its folder; description 1-1024 chars, no control characters),
   sources per draft, the share of each draft's sources from its majority kind (purity), and how
   many kinds got a draft.
2. Leave-one-out routing: instances are split into `--folds` folds within each kind. For each
   fold, a fresh bank records the other folds, proposes, adopts every draft, and each held-back
   instance's task is routed: a hit when a skill drafted mostly from its kind is in the top 1 /
   top 3 of `skills.search` (none returned counts as a miss). Baseline, same bank, same tasks:
   `experiences.recall(k=3, kind="experience")` — a hit when a recalled experience is of the
   task's kind. Only kinds that keep at least one instance in training are queried.
"""

from __future__ import annotations

import argparse
import json
import re
import statistics
import sys
import tempfile
import time
from collections import Counter, defaultdict
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))
from _common import SHARED, default_model_dir  # noqa: E402

DATA = SHARED / "benchmarks" / "experience-recall"
OUTCOME = {"success": "success", "failure": "failure", "comparative": "partial"}
LESSON_KIND = {"success": "success_pattern", "failure": "failure_trigger", "comparative": "comparison"}
_NAME = re.compile(r"^[a-z0-9](?:[a-z0-9]|-(?=[a-z0-9])){0,63}$")
_CONTROL = re.compile(r"[\x00-\x08\x0b-\x1f\x7f-\x9f]")


# ----------------------------------------------------------------------------------- the sets

def appworld_rows(folder: Path) -> list[dict[str, Any]]:
    rows = []
    for line in (folder / "experiences.jsonl").open():
        r = json.loads(line)
        if not r.get("task_id"):
            continue
        rows.append({"kind": r["task_id"].split(":")[1], "instance": r["task_id"],
                     "record": {"task": r["task"], "outcome": OUTCOME[r["outcome"]],
                                "when_to_use": r["when_to_use"], "tags": r.get("tags", [])[:8],
                                "lessons": [{"kind": LESSON_KIND[r["outcome"]],
                                             "text": r["content"][:2000],
                                             "when_to_use": r["when_to_use"]}]}})
    return rows


def _plan(text: str) -> str:
    match = re.search(r"my plan was to (.+?)\.(?:\s|$)", text)
    if match:
        return match.group(1)
    return re.split(r"(?<=\.)\s", text.strip(), maxsplit=1)[0]


def alfworld_rows(folder: Path) -> list[dict[str, Any]]:
    rows = []
    for line in (folder / "reflexion_alfworld.jsonl").open():
        env = json.loads(line)
        if not env["reflections"] or not env["inferred_task_type"]:
            continue
        task = _plan(env["reflections"][0]["text"])
        base = {"kind": env["inferred_task_type"], "instance": env["env_id"]}
        for reflection in env["reflections"]:
            rows.append({**base, "record": {
                "task": f"{task} (trial {reflection['after_trial'] + 1})", "outcome": "failure",
                "lessons": [{"kind": "failure_trigger", "text": reflection["text"][:2000]}]}})
        if env["first_success_trial"] is not None:
            last = env["reflections"][-1]["text"]
            plan = re.search(r"(In the next trial, I will .+)", last)
            rows.append({**base, "record": {
                "task": task, "outcome": "success",
                "lessons": [{"kind": "success_pattern",
                             "text": (plan.group(1) if plan else last)[:2000]}]}})
    return rows


SETS = {"appworld": appworld_rows, "alfworld": alfworld_rows}


# ---------------------------------------------------------------------------------- measuring

def open_bank(root: Path, embedding: Any) -> Any:
    from skillbank import Skillbank

    return Skillbank.open(root, skill_roots=[], embedding_function=embedding,
                          include_bundled=False, sync=False)


def record(bank: Any, rows: list[dict[str, Any]]) -> dict[str, str]:
    """Record rows; returns experience id -> kind (a folded duplicate keeps the first kind)."""
    ids = bank.experiences.record_many([r["record"] for r in rows])
    kinds: dict[str, str] = {}
    for eid, row in zip(ids, rows):
        kinds.setdefault(eid, row["kind"])
    return kinds


def agent_skills_ok(path: str) -> tuple[bool, bool]:
    """(project validator passes, Agent Skills rules hold) for one SKILL.md."""
    from skillbank.memories.skills.skill_file import read_skill_file, validate_skill

    doc, findings = read_skill_file(path)
    if doc is None:
        return False, False
    folder = Path(path).parent.name
    ours = not [f for f in validate_skill(doc, folder_name=folder) if f.severity == "error"]
    name, description = doc.frontmatter.get("name"), doc.frontmatter.get("description")
    spec = (isinstance(name, str) and bool(_NAME.match(name)) and name == folder
            and isinstance(description, str) and 1 <= len(description.strip()) <= 1024
            and not _CONTROL.search(description))
    return ours, spec


def majority(sources: list[str], kinds: dict[str, str]) -> tuple[str, float]:
    counts = Counter(kinds.get(s, "?") for s in sources)
    kind, n = counts.most_common(1)[0]
    return kind, n / max(1, len(sources))


def draft_everything(rows: list[dict[str, Any]], embedding: Any, min_support: int) -> dict[str, Any]:
    with tempfile.TemporaryDirectory() as tmp:
        bank = open_bank(Path(tmp) / "root", embedding)
        kinds = record(bank, rows)
        started = time.perf_counter()
        drafts = bank.skills.propose(min_support=min_support)
        seconds = time.perf_counter() - started
        again = bank.skills.propose(min_support=min_support)
        checks = [agent_skills_ok(d.path) for d in drafts]
        sizes = [len(d.sources) for d in drafts]
        purity = [majority(d.sources, kinds)[1] for d in drafts]
        covered = {majority(d.sources, kinds)[0] for d in drafts}
        bank.close()
    return {
        "experiences": len(kinds), "kinds": len({r["kind"] for r in rows}),
        "drafts": len(drafts), "validator_ok": sum(c[0] for c in checks),
        "agent_skills_ok": sum(c[1] for c in checks),
        "sources_min": min(sizes, default=0), "sources_median": statistics.median(sizes) if sizes else 0,
        "sources_max": max(sizes, default=0),
        "purity_mean": round(statistics.mean(purity), 3) if purity else 0.0,
        "kinds_with_a_draft": len(covered), "propose_seconds": round(seconds, 2),
        "second_propose_drafts": len(again),
    }


def folds_of(rows: list[dict[str, Any]], n: int) -> dict[str, int]:
    """instance -> fold, round-robin within each kind (sorted, so the split is reproducible)."""
    by_kind: dict[str, list[str]] = defaultdict(list)
    for row in rows:
        if row["instance"] not in by_kind[row["kind"]]:
            by_kind[row["kind"]].append(row["instance"])
    return {inst: i % n for instances in by_kind.values() for i, inst in enumerate(sorted(instances))}


def leave_out_routing(rows: list[dict[str, Any]], embedding: Any, min_support: int,
                      n_folds: int) -> dict[str, Any]:
    fold = folds_of(rows, n_folds)
    hits = {"skills": [0, 0], "experiences": [0, 0]}
    queries = no_skill = 0
    adopted = 0
    for f in range(n_folds):
        train = [r for r in rows if fold[r["instance"]] != f]
        held = {}
        for r in rows:
            if fold[r["instance"]] == f and r["instance"] not in held:
                held[r["instance"]] = r
        trained_kinds = {r["kind"] for r in train}
        with tempfile.TemporaryDirectory() as tmp:
            bank = open_bank(Path(tmp) / "root", embedding)
            kinds = record(bank, train)
            skill_kind = {}
            for draft in bank.skills.propose(min_support=min_support):
                skill_kind[bank.skills.adopt(draft.name).name] = majority(draft.sources, kinds)[0]
            adopted += len(skill_kind)
            for row in held.values():
                if row["kind"] not in trained_kinds:
                    continue
                queries += 1
                task = re.sub(r" \(trial \d+\)$", "", row["record"]["task"])
                found = [skill_kind.get(h.name) for h in bank.skills.search(task, k=3)]
                no_skill += not found
                recalled = [kinds.get(h.id) for h in bank.experiences.recall(
                    task, k=3, kind="experience", count_use=False)]
                for key, got in (("skills", found), ("experiences", recalled)):
                    hits[key][0] += bool(got) and got[0] == row["kind"]
                    hits[key][1] += row["kind"] in got
            bank.close()
    rate = lambda n: round(n / queries, 3) if queries else 0.0  # noqa: E731
    return {"folds": n_folds, "queries": queries, "skills_adopted": adopted,
            "skills_R@1": rate(hits["skills"][0]), "skills_R@3": rate(hits["skills"][1]),
            "experiences_R@1": rate(hits["experiences"][0]),
            "experiences_R@3": rate(hits["experiences"][1]),
            "no_skill_returned": no_skill}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--data", type=Path, default=DATA)
    parser.add_argument("--sets", nargs="+", choices=sorted(SETS), default=sorted(SETS))
    parser.add_argument("--folds", type=int, default=3)
    parser.add_argument("--min-support", type=int, default=3)
    parser.add_argument("--embedding", choices=["minilm", "hash"], default="minilm")
    parser.add_argument("--json", type=Path)
    args = parser.parse_args()
    if args.embedding == "hash":
        from skillbank.embeddings import HashEmbedding

        embedding = HashEmbedding()
    else:
        from skillbank.embeddings import MiniLMEmbedding

        embedding = MiniLMEmbedding(model_dir=default_model_dir())
    results = {}
    for name in args.sets:
        started = time.perf_counter()
        rows = SETS[name](args.data)
        drafting = draft_everything(rows, embedding, args.min_support)
        routing = leave_out_routing(rows, embedding, args.min_support, args.folds)
        results[name] = {"drafting": drafting, "routing": routing,
                         "seconds": round(time.perf_counter() - started, 1)}
        d, r = drafting, routing
        print(f"\n== {name}: {len(rows)} experiences recorded ({d['experiences']} after folding), "
              f"{d['kinds']} kinds of task ({results[name]['seconds']} s)")
        print(f"drafts {d['drafts']}  validator ok {d['validator_ok']}/{d['drafts']}  "
              f"Agent Skills rules ok {d['agent_skills_ok']}/{d['drafts']}  "
              f"sources per draft min/median/max {d['sources_min']}/{d['sources_median']}/"
              f"{d['sources_max']}  purity {d['purity_mean']}  kinds with a draft "
              f"{d['kinds_with_a_draft']}/{d['kinds']}  propose {d['propose_seconds']} s  "
              f"proposing again: {d['second_propose_drafts']} drafts")
        print(f"leave-one-out ({r['folds']} folds, {r['queries']} held-back tasks, "
              f"{r['skills_adopted']} skills adopted in all):")
        print(f"  drafted skills      R@1 {r['skills_R@1']:.3f}  R@3 {r['skills_R@3']:.3f}  "
              f"(no skill returned for {r['no_skill_returned']})")
        print(f"  raw experiences     R@1 {r['experiences_R@1']:.3f}  R@3 {r['experiences_R@3']:.3f}")
    if args.json:
        args.json.write_text(json.dumps(results, indent=2) + "\n")


if __name__ == "__main__":
    main()
