"""Synthetic data for the speed and scale benchmarks, built from the real data in ../shared.

* Skill libraries: copies of the 1,853 real SKILL.md files in `shared/corpora/skills`, each
  under a unique name (`<slug>-<i>`, folder and frontmatter `name` agree), cycling through the
  corpus when more skills are asked for than it holds.
* Experiences: variations of the 609 real lessons in `shared/benchmarks/experience-recall`
  (numbers, app names and a context clause changed per copy, so no two are textually equal).
* Queries: the 120 user requests of the skill-routing set, and the experience-recall tasks.

Everything is deterministic for a given seed.
"""

from __future__ import annotations

import json
import random
import re
import sys
from functools import lru_cache
from pathlib import Path
from typing import Any, Iterator

sys.path.insert(0, str(Path(__file__).resolve().parent))
from _common import SHARED  # noqa: E402

SKILL_CORPUS = SHARED / "corpora" / "skills"
ROUTING_QUERIES = SHARED / "benchmarks" / "skill-routing" / "queries.jsonl"
EXPERIENCES = SHARED / "benchmarks" / "experience-recall" / "experiences.jsonl"
RECALL_QUERIES = SHARED / "benchmarks" / "experience-recall" / "queries.jsonl"

MAX_NAME = 64
_NOT_SLUG = re.compile(r"[^a-z0-9]+")


def slugify(text: str, fallback: str = "skill") -> str:
    slug = _NOT_SLUG.sub("-", text.lower()).strip("-")
    return slug or fallback


@lru_cache(maxsize=1)
def corpus_skills() -> tuple[tuple[Any, str], ...]:
    """(SkillDocument, slug) for every corpus SKILL.md that loads, in a stable order."""
    from skillbank.memories.skills.skill_file import read_skill_file

    out = []
    for path in sorted(SKILL_CORPUS.rglob("SKILL.md")):
        doc, _ = read_skill_file(path)
        if doc is None:
            continue
        out.append((doc, slugify(doc.name or path.parent.name)))
    return tuple(out)


def unique_name(slug: str, i: int) -> str:
    suffix = f"-{i}"
    return slug[: MAX_NAME - len(suffix)].rstrip("-") + suffix


def build_skill_library(dest: Path, n: int, start: int = 0) -> list[Path]:
    """Write `n` skills (numbers `start`..`start+n-1`) under `dest`; returns the SKILL.md paths.

    Files whose frontmatter cannot be rendered again are skipped (the next corpus file is used),
    so exactly `n` skills are written.
    """
    from skillbank.memories.skills.skill_file import SkillDocument, render_skill

    corpus = corpus_skills()
    if not corpus:
        raise SystemExit(f"no loadable SKILL.md under {SKILL_CORPUS}")
    dest.mkdir(parents=True, exist_ok=True)
    paths: list[Path] = []
    cursor = start
    i = start
    while len(paths) < n:
        doc, slug = corpus[cursor % len(corpus)]
        cursor += 1
        name = unique_name(slug, i)
        frontmatter = {**doc.frontmatter, "name": name}
        try:
            text = render_skill(SkillDocument(frontmatter=frontmatter, body=doc.body))
        except Exception:  # a frontmatter value YAML cannot dump back: skip this file
            continue
        folder = dest / name
        folder.mkdir(parents=True, exist_ok=True)
        path = folder / "SKILL.md"
        path.write_text(text, encoding="utf-8")
        paths.append(path)
        i += 1
    return paths


def routing_queries() -> list[str]:
    """The 120 user requests of the skill-routing set (direct, indirect and unanswerable)."""
    return [json.loads(line)["query"] for line in ROUTING_QUERIES.open(encoding="utf-8")]


# Experiences ---------------------------------------------------------------------------------
_APPS = ["Spotify", "Venmo", "Gmail", "Amazon", "Splitwise", "Todoist", "SimpleNote", "Phone",
         "File System", "Slack", "Calendar", "GitHub", "Dropbox", "Jira", "Notion", "Stripe"]
_APP_WORD = re.compile(r"\b(" + "|".join(re.escape(a) for a in _APPS) + r")\b", re.I)
_NUMBER = re.compile(r"\b\d+\b")
_CONTEXTS = [
    "for the quarterly report", "in the staging account", "for a new team member",
    "before the end of the month", "on the shared family account", "during the migration",
    "for the Berlin office", "after the password reset", "with a rate-limited API",
    "when the previous run timed out", "for customer ticket {n}", "in batch job {n}",
    "for project {word}", "under the {word} workspace", "with pagination over {n} pages",
    "after retry number {n}", "for the {word} playlist", "using the v{n} endpoint",
]
_WORDS = ["atlas", "borealis", "cobalt", "delta", "ember", "fjord", "granite", "harbor",
          "indigo", "juniper", "kestrel", "lumen", "meridian", "nimbus", "onyx", "pylon",
          "quartz", "raven", "sierra", "tundra", "umber", "vertex", "willow", "zephyr"]
OUTCOMES = {"success": "success", "failure": "failure", "comparative": "partial"}


@lru_cache(maxsize=1)
def real_experiences() -> tuple[dict, ...]:
    return tuple(json.loads(line) for line in EXPERIENCES.open(encoding="utf-8"))


def _vary(text: str, rng: random.Random, app: str) -> str:
    text = _NUMBER.sub(lambda m: str(rng.randint(2, 999)), text)
    return _APP_WORD.sub(app, text)


def synthetic_experiences(n: int, seed: int = 7, outcome_map: dict[str, str] | None = None
                          ) -> Iterator[dict[str, Any]]:
    """`n` varied experiences as `record()` keyword arguments (task, outcome, feedback, ...).

    The i-th is a variation of real experience `i % 609`: its numbers are redrawn, its app name
    may be swapped for another, and a context clause is appended to the task, so near-duplicates
    exist (as in real use) but no two records are identical.
    """
    rows = real_experiences()
    mapping = outcome_map or OUTCOMES
    for i in range(n):
        base = rows[i % len(rows)]
        rng = random.Random(seed * 1_000_003 + i)
        app = rng.choice(_APPS) if i >= len(rows) else None
        vary = (lambda t: _vary(t, rng, app)) if app else (lambda t: t)
        context = rng.choice(_CONTEXTS).format(n=rng.randint(2, 9999), word=rng.choice(_WORDS))
        task = vary(base["task"]) if i < len(rows) else f"{vary(base['task']).rstrip('.')} {context}."
        tags = list(base.get("tags") or [])
        if app:
            tags = [app if _APP_WORD.fullmatch(t or "") else t for t in tags]
        yield {
            "task": task,
            "outcome": mapping.get(base.get("outcome", ""), "unknown"),
            "feedback": vary(base.get("content", "")),
            "when_to_use": vary(base.get("when_to_use", "")),
            "tags": tags[:8],
        }


def recall_queries(n: int = 100, seed: int = 3) -> list[str]:
    """Distinct recall queries: the 60 real ones, then varied task texts."""
    queries = [json.loads(line)["query"] for line in RECALL_QUERIES.open(encoding="utf-8")]
    rows = real_experiences()
    rng = random.Random(seed)
    while len(queries) < n:
        base = rng.choice(rows)
        text = _vary(base.get("generalized_query") or base["task"], rng, rng.choice(_APPS))
        if text not in queries:
            queries.append(text)
    return queries[:n]


# Small statistics helpers -------------------------------------------------------------------
def percentile(values: list[float], q: float) -> float:
    if not values:
        return float("nan")
    ordered = sorted(values)
    index = min(len(ordered) - 1, max(0, round(q / 100 * (len(ordered) - 1))))
    return ordered[index]


def load_note() -> str:
    """`uptime`-style load averages, to print next to every timing (this is a shared machine)."""
    import os

    try:
        one, five, fifteen = os.getloadavg()
        return f"load {one:.2f} {five:.2f} {fifteen:.2f} on {os.cpu_count()} cores"
    except OSError:
        return "load n/a"
