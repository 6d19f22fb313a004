"""Rebuild the public routing sets in this folder from their upstream repositories.

    python benchmarks/data/public/convert.py --mirror /path/to/mirrors

`--mirror` holds one bare git snapshot per upstream repository (`owner+name/repo`); every file
is read at the pinned commit below with `git show`, so the output is the same however the
snapshot was obtained. Nothing here is fitted: the conversion only reshapes what upstream wrote
into this benchmark's format (`library.jsonl` + `queries.jsonl`, or `skills/` folders), keeps
upstream's labels as they are, and drops nothing but exact duplicates (noted per set).

Formats written:
* `library.jsonl`: {"id", "name", "description", "body"} — one tool or skill. The benchmark
  writes each as a SKILL.md (name + description as frontmatter, `body` as the body), which is how
  a user would put a tool catalog into a skill library.
* `queries.jsonl`: {"qid", "query", "expected", "kind"} — `expected` the ids that serve the
  request; [] with kind "none" when upstream labels it as needing no tool at all; kind
  "near-miss" with "not": [ids] when upstream says only that those skills must not fire.
"""

from __future__ import annotations

import argparse
import csv
import io
import json
import re
import subprocess
from pathlib import Path

HERE = Path(__file__).resolve().parent

METATOOL = ("HowieHwong/MetaTool", "35e81bb7576826e980c80fed8f8c0a2b4a1e6fbb")
GORILLA = ("ShishirPatil/gorilla", "6ea57973c7a6097fd7c5915698c54c17c5b1b6c8")
VIVARIUM = ("Jason-0409-G/vivarium", "9ac46dad37852552acfe829d1b51c07a663e43e5")
SCRIPTORIUM = ("Jason-0409-G/scriptorium", "c904c39fcf4d257b688dabf7931786d3a8586bb4")
BFCL = "berkeley-function-call-leaderboard/bfcl_eval/data"


def show(mirror: Path, repo: tuple[str, str], path: str) -> str:
    git_dir = mirror / repo[0].replace("/", "+") / "repo"
    return subprocess.run(["git", "-C", str(git_dir), "show", f"{repo[1]}:{path}"],
                          check=True, capture_output=True, text=True).stdout


def ls(mirror: Path, repo: tuple[str, str], path: str) -> list[str]:
    git_dir = mirror / repo[0].replace("/", "+") / "repo"
    out = subprocess.run(["git", "-C", str(git_dir), "ls-tree", "-r", "--name-only", repo[1],
                          path], check=True, capture_output=True, text=True).stdout
    return out.split()


def slug(name: str) -> str:
    """A tool name as an Agent Skills name (lowercase letters, digits, hyphens)."""
    return re.sub(r"-+", "-", re.sub(r"[^a-z0-9]+", "-", name.lower())).strip("-")[:64]


def write_jsonl(path: Path, rows: list[dict]) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    with path.open("w") as out:
        for row in rows:
            out.write(json.dumps(row, ensure_ascii=False) + "\n")


def metatool(mirror: Path) -> None:
    """199 ChatGPT-plugin tools with one-line descriptions; MetaTool's Task 1 ("does this need a
    tool?"): 520 requests labelled positive with the tool that serves them, 520 negative (no
    tool needed)."""
    out = HERE / "metatool"
    tools = json.loads(show(mirror, METATOOL, "dataset/plugin_des.json"))
    library = [{"id": slug(n), "name": slug(n), "description": d.strip(), "body": ""}
               for n, d in tools.items()]
    ids = {slug(n) for n in tools}
    task1 = json.loads(show(mirror, METATOOL, "dataset/tmp_dataset/Task1.json"))
    queries, seen = [], set()
    for row in task1:
        text = row["query"].strip()
        if text in seen:
            continue
        seen.add(text)
        positive = row["label"] == "positive"
        tool = slug(row.get("tool") or "")
        if positive and tool not in ids:
            continue  # a tool outside the catalog: not scorable
        queries.append({"qid": f"metatool-{len(queries) + 1:04d}", "query": text,
                        "expected": [tool] if positive else [],
                        "kind": "tool" if positive else "none"})
    write_jsonl(out / "library.jsonl", library)
    write_jsonl(out / "queries.jsonl", queries)
    (out / "LICENSE").write_text(show(mirror, METATOOL, "LICENSE"))


def _parameters(fn: dict) -> str:
    props = (fn.get("parameters") or {}).get("properties") or {}
    lines = [f"- `{k}` ({v.get('type', '')}): {v.get('description', '')}".rstrip()
             for k, v in props.items()]
    return "## Parameters\n\n" + "\n".join(lines) + "\n" if lines else ""


def bfcl(mirror: Path) -> None:
    """Python functions of BFCL's `simple_python` and `multiple` categories as one catalog
    (description as the one-liner, the parameter list as the body); the requests of both
    categories with the function upstream's ground truth calls."""
    out = HERE / "bfcl"
    library: dict[str, dict] = {}
    queries = []

    def add(fn: dict) -> None:
        key = slug(fn["name"])
        if key not in library:  # same name, first definition kept (upstream repeats a few)
            library[key] = {"id": key, "name": key, "description": fn["description"].strip(),
                            "body": _parameters(fn), "function": fn["name"]}

    for category in ("simple_python", "multiple"):
        rows = [json.loads(x) for x in show(mirror, GORILLA,
                                            f"{BFCL}/BFCL_v4_{category}.json").splitlines() if x]
        answers = {json.loads(x)["id"]: json.loads(x)["ground_truth"] for x in show(
            mirror, GORILLA, f"{BFCL}/possible_answer/BFCL_v4_{category}.json").splitlines() if x}
        for row in rows:
            for fn in row["function"]:
                add(fn)
            called = [slug(name) for call in answers[row["id"]] for name in call]
            text = row["question"][0][-1]["content"].strip()
            queries.append({"qid": row["id"], "query": text, "expected": sorted(set(called)),
                            "kind": category})
    write_jsonl(out / "library.jsonl", list(library.values()))
    write_jsonl(out / "queries.jsonl", queries)
    (out / "LICENSE").write_text(show(mirror, GORILLA, "LICENSE"))


def skill_sets(mirror: Path) -> None:
    """Two companion skill sets by one author (genomics analysis, paper writing): 13 SKILL.md
    files with bodies, copied whole, and every `evals/trigger_evals.json` they ship (the Agent
    Skills trigger-eval format, English and Chinese). A query that should trigger skill X is
    answerable with X; one that only should *not* trigger X is a near-miss for X (it may well
    belong to a sibling skill, so it is not counted as out of scope)."""
    out = HERE / "agent-skills-jason"
    queries: dict[str, dict] = {}
    for repo in (VIVARIUM, SCRIPTORIUM):
        for path in ls(mirror, repo, "skills"):
            parts = path.split("/")
            if len(parts) == 3 and parts[2] == "SKILL.md":
                target = out / "skills" / parts[1] / "SKILL.md"
                target.parent.mkdir(parents=True, exist_ok=True)
                target.write_text(show(mirror, repo, path))
            if parts[-1] == "trigger_evals.json":
                skill = parts[1]
                for row in json.loads(show(mirror, repo, path)):
                    text = row["query"].strip()
                    entry = queries.setdefault(text, {"query": text, "expected": [], "not": []})
                    (entry["expected"] if row["should_trigger"] else entry["not"]).append(skill)
        name = repo[0].split("/")[1]
        (out / f"LICENSE-{name}").write_text(show(mirror, repo, "LICENSE"))
    rows = []
    for i, entry in enumerate(queries.values(), 1):
        entry["not"] = [s for s in entry["not"] if s not in entry["expected"]]
        entry.update(qid=f"jason-{i:03d}", kind="skill" if entry["expected"] else "near-miss")
        rows.append({k: entry[k] for k in ("qid", "query", "expected", "kind", "not")})
    library = [{"id": p.parent.name, "name": p.parent.name,
                "path": str(p.relative_to(out))} for p in sorted(out.glob("skills/*/SKILL.md"))]
    write_jsonl(out / "library.jsonl", library)
    write_jsonl(out / "queries.jsonl", rows)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--mirror", type=Path, required=True)
    args = parser.parse_args()
    metatool(args.mirror)
    bfcl(args.mirror)
    skill_sets(args.mirror)


if __name__ == "__main__":
    main()
