"""`skillbank demo`: a short tour of skillbank on the embedded default (no API key, no network).

It opens a fresh temporary memory root (or `--root`), syncs the skills that ship with skillbank
plus any roots given, shows the catalog, routes sample tasks and loads one skill; then it runs the
learning loop: critiques become guidelines (added, merged, superseded, ignored), a later task gets
them back, a failure is recorded and recalled for a related task, and finally the memory block a
model would see. Everything goes through the public `Skillbank` facade.
"""

from __future__ import annotations

import shutil
import tempfile
import time
from pathlib import Path
from typing import Any, Sequence

#: Sample tasks routed against the bundled skills (the last one should find nothing).
ROUTING_TASKS = (
    "This test fails again with an error I think we have seen before",
    "The user keeps correcting my spelling; remember their preference",
    "Write a reusable skill for generating release notes",
    "Check this SKILL.md for problems before I publish it",
    "Clean up stale and duplicate memories",
    "Start a multi-step data cleaning task like last time",
    "What is the capital of France?",
)
#: The routed task whose skill is loaded to show step two of disclosure (a skill with resources).
LOAD_TASK = ROUTING_TASKS[3]

#: Critiques of earlier answers, in the order they arrived. The second repeats a rule of the first
#: in other words (merged), the third only praises (nothing to learn), the fourth reverses the
#: first (American spelling supersedes British).
CRITIQUES: tuple[dict[str, Any], ...] = (
    {"task": "Write the README introduction for the billing service",
     "critique": "Use British spelling in the docs (colour, organise, licence). "
                 "Also start with a one-line summary."},
    {"task": "Draft the release notes for version 1.4",
     "critique": "You should have started with a one-line summary. "
                 "And lead with breaking changes before new features."},
    {"task": "Summarise the incident report for the team",
     "critique": "Great job, this is perfect!", "score": 5},
    {"task": "Write the API guide for the payments endpoint",
     "critique": "We have switched to American spelling: use American spelling "
                 "(color, organize, license) from now on."},
)
LATER_TASK = "Write the changelog and upgrade notes for version 2.0"

FAILURE: dict[str, Any] = {
    "task": "Deploy the billing service to staging with its database migrations",
    "outcome": "failure",
    "steps": [
        {"action": "git pull && make build", "observation": "build ok"},
        {"action": "alembic upgrade head",
         "observation": "ERROR: column invoices.currency already exists; migration aborted "
                        "halfway, staging database left in a broken state"},
        {"action": "restore staging database", "observation": "no backup found"},
    ],
    "feedback": "The deploy broke staging: a migration failed halfway and there was no backup "
                "to roll back to. Back up the database before running migrations, and check "
                "that the backup restores.",
    "when_to_use": "Before deploying a service whose release includes database migrations",
    "tags": ["deploy", "database"],
}
RELATED_TASK = "Roll out the orders API to production; the release adds a database migration"
CONTEXT_TASK = "Deploy the orders service and write its release notes"
CONTEXT_BUDGET = 600
CATALOG_BUDGET = 1200  # every bundled skill fits (400 dropped 3 of the 7, #27)


def _text(value: Any, style: str = "") -> Any:
    from rich.text import Text

    return Text("" if value is None else str(value), style=style)


def _short(value: Any, limit: int) -> str:
    flat = " ".join(str(value or "").split())
    return flat if len(flat) <= limit else flat[: limit - 1].rstrip() + "…"


def _table(*columns: str | tuple[str, dict[str, Any]], title: str | None = None) -> Any:
    from rich.table import Table

    table = Table(title=title, title_justify="left", pad_edge=False, expand=False)
    for column in columns:
        name, options = (column, {}) if isinstance(column, str) else column
        table.add_column(name, **options)
    return table


class _Tour:
    def __init__(self, console: Any) -> None:
        self.console = console
        self.step = 0

    def section(self, title: str, subtitle: str = "") -> None:
        from rich.rule import Rule

        self.step += 1
        self.console.print()
        self.console.print(Rule(_text(f"{self.step}. {title}", "bold cyan"), align="left"))
        if subtitle:
            self.console.print(_text(subtitle, "dim"))

    def line(self, value: Any, style: str = "") -> None:
        self.console.print(_text(value, style), soft_wrap=False)


def run_demo(root: str | Path | None = None, skill_roots: Sequence[str | Path] = (),
             model_dir: str | Path | None = None, include_bundled: bool = True,
             embedding_function: Any = None, console: Any = None) -> dict[str, Any]:
    """Run the tour, printing to `console` (a rich Console); returns a summary of what happened."""
    from rich.console import Console

    from skillbank.bank import Skillbank

    console = console or Console(highlight=False)
    tour = _Tour(console)
    started = time.perf_counter()
    temporary = root is None
    root_path = Path(tempfile.mkdtemp(prefix="skillbank-demo-")) if temporary else Path(root)
    summary: dict[str, Any] = {"root": str(root_path), "temporary": temporary}
    try:
        if temporary:
            # A throwaway root gets plain defaults: SKILLBANK_CHROMA_URL or a tuned setting in
            # the environment must not send the demo into someone's real memory server.
            from skillbank.settings import Settings

            settings = Settings(root=root_path, skill_roots=tuple(Path(r) for r in skill_roots),
                                model_dir=Path(model_dir) if model_dir else None)
            bank = Skillbank(settings, embedding_function=embedding_function,
                             include_bundled=include_bundled)
        else:
            bank = Skillbank.open(root_path, skill_roots=[str(r) for r in skill_roots],
                                  model_dir=model_dir, embedding_function=embedding_function,
                                  include_bundled=include_bundled, sync=False)
        try:
            _skills_part(tour, bank, summary)
            _learning_part(tour, bank, summary)
        finally:
            bank.close()
    finally:
        if temporary:
            shutil.rmtree(root_path, ignore_errors=True)
    summary["seconds"] = round(time.perf_counter() - started, 2)
    console.print()
    where = ("a temporary root, now removed — pass --root DIR to keep it"
             if temporary else f"{root_path}")
    tour.line(f"Done in {summary['seconds']:.1f} s. Memory was kept in {where}.", "bold green")
    return summary


# ------------------------------------------------------------------------------------------ skills


def _skills_part(tour: _Tour, bank: Any, summary: dict[str, Any]) -> None:
    roots = [str(r) for r in bank.skill_roots]
    tour.section("Skill library", "SKILL.md folders are the truth; Chroma + BM25 index them.")
    tour.line(f"memory root   {bank.root}")
    for root in roots:
        tour.line(f"skill root    {root}")
    report = bank.skills.sync()
    bank.guidelines.sync()
    bank.experiences.sync()
    embedding = getattr(bank.embedding_function, "name", lambda: "custom")()
    tour.line(f"synced {len(report.added)} skills ({report.embedded} texts embedded with "
              f"{embedding}) in {report.seconds:.1f} s", "green")
    errors = [f for f in report.findings if f.severity == "error"]
    if errors:
        tour.line(f"{len(errors)} files could not be loaded (see `skillbank skills sync`)", "yellow")
    summary["skills"] = len(bank.skills.names())

    catalog = bank.skills.catalog(budget_tokens=CATALOG_BUDGET)
    tour.section("Catalog", f"What a model sees first: names and descriptions within "
                            f"{CATALOG_BUDGET} tokens.")
    width = max((len(e.name) for e in catalog.entries), default=5)
    room = max(30, tour.console.width - width - 6)  # one line per skill
    table = _table(("skill", {"no_wrap": True}), ("description", {"no_wrap": True}))
    for entry in catalog.entries[:12]:
        table.add_row(_text(entry.name, "bold"), _text(_short(entry.description, room)))
    tour.console.print(table)
    more = len(catalog.entries) - min(len(catalog.entries), 12)
    tour.line(f"{len(catalog.entries)} entries, {catalog.tokens} tokens"
              + (f", {catalog.omitted} omitted to fit the budget" if catalog.omitted else "")
              + (f" ({more} not shown here)" if more else ""), "dim")
    summary["catalog"] = {"entries": len(catalog.entries), "tokens": catalog.tokens,
                          "omitted": catalog.omitted}

    summary["search"] = bank.search_mode()
    tour.section("Routing", f"{_search_words(bank, summary['search'])}; a score floor means "
                            "\"no skill fits\" is a possible answer.")
    results = [(task, bank.skills.search(task, k=2)) for task in ROUTING_TASKS]
    longest = max((len(h.name) for _, hits in results for h in hits), default=10)
    names = {"no_wrap": True, "min_width": min(longest, 32)}  # skill names never wrap
    wide = tour.console.width >= 100  # room for the runner-up too
    columns: list[Any] = [("task", {"min_width": 30}), ("best skill", names), "why"]
    table = _table(*columns, *([("runner-up", names)] if wide else []))
    routes: dict[str, str | None] = {}
    for task, hits in results:
        routes[task] = hits[0].name if hits else None
        best = _text(hits[0].name, "bold") if hits else _text("— none fits", "dim")
        cells = [_text(task), best, _text(hits[0].why if hits else "")]
        if wide:
            cells.append(_text(hits[1].name if len(hits) > 1 else "", "dim"))
        table.add_row(*cells)
    tour.console.print(table)
    summary["routes"] = routes

    name = routes.get(LOAD_TASK) or (bank.skills.names() or [None])[0]
    if name is None:
        return
    skill = bank.skills.load(name)
    tour.section(f"Loaded skill: {skill.name}", "Step two of disclosure: the body, then "
                                                 "resources one at a time.")
    lines = skill.body.strip().splitlines()
    for line in lines[:14]:
        # Verbatim: indentation and code kept, long lines left to the terminal (no re-wrap).
        tour.console.print(_text(line.rstrip()), soft_wrap=True)
    if len(lines) > 14:
        tour.line(f"… {len(lines) - 14} more lines", "dim")
    if skill.resources:
        table = _table("resource", ("bytes", {"justify": "right"}), "sha256")
        for resource in skill.resources[:8]:
            table.add_row(_text(resource.path), _text(resource.size), _text(resource.sha256[:12]))
        tour.console.print(table)
    else:
        tour.line("resources: none (this skill is a single SKILL.md)", "dim")
    summary["loaded"] = {"name": skill.name, "lines": len(lines),
                         "resources": [r.path for r in skill.resources]}


def _search_words(bank: Any, mode: str) -> str:
    """How the routing table was searched. Without the model the demo said "Hybrid search
    (dense + keyword)" over a keyword-only table that left half the answerable tasks unrouted
    (README's first command run outside /work, where ../shared does not exist: hunt-docs #1,
    session 23)."""
    if mode != "keyword":
        return "Hybrid search (dense + keyword)"
    from skillbank.model_state import known_unavailable

    if known_unavailable(bank.embedding_function):
        return "Keyword search only (no embedding model; stderr says why)"
    return "Keyword search only for now (the skills are still being embedded)"


# ---------------------------------------------------------------------------------------- learning

ACTION_STYLES = {"added": "green", "merged": "cyan", "superseded": "magenta", "ignored": "dim",
                 "pending": "yellow"}


def _learning_part(tour: _Tour, bank: Any, summary: dict[str, Any]) -> None:
    tour.section("Critiques become guidelines", "Each critique is distilled into rules, then "
                                                "compared with what is already known.")
    table = _table("#", "action", ("rule / detail", {"ratio": 1}))
    actions: list[dict[str, Any]] = []
    for number, item in enumerate(CRITIQUES, 1):
        tour.line(f"{number}. on \"{_short(item['task'], 60)}\": “{_short(item['critique'], 150)}”",
                  "italic")
        report = bank.guidelines.learn(item["critique"], task=item["task"], score=item.get("score"))
        for entry in report.entries:
            detail = entry.text or ""
            if entry.action == "superseded" and entry.superseded_id:
                old = _guideline_text(bank, entry.superseded_id)
                detail = f"{detail}  (replaces: {_short(old, 60)})" if old else detail
            elif entry.action == "ignored":
                detail = f"{detail} — {entry.detail}" if entry.detail else detail
            elif entry.action == "merged":
                # The merge's own detail names the stems it matched on ('one-lin'): internal
                # evidence, not something to show a person (#27).
                detail = f"{detail}  (the same rule as {entry.guideline_id}: reinforced)"
            table.add_row(_text(number), _text(entry.action, ACTION_STYLES.get(entry.action, "")),
                          _text(_short(detail, 150)))
            actions.append({"critique": number, "action": entry.action,
                            "id": entry.guideline_id, "text": entry.text,
                            "superseded_id": entry.superseded_id})
    tour.console.print(table)
    counts = bank.guidelines.counts()
    tour.line("guidelines now: " + ", ".join(f"{v} {k}" for k, v in counts.items() if v), "dim")
    summary["learn"] = actions

    tour.section("A later task gets them back", f"“{LATER_TASK}”")
    hits = bank.guidelines.search(LATER_TASK, k=4)
    if hits:
        table = _table("id", "topic", ("guideline", {"ratio": 1}))
        for hit in hits:
            table.add_row(_text(hit.id, "dim"), _text(hit.record.topic), _text(hit.record.text))
        tour.console.print(table)
    else:
        tour.line("no guideline applies", "dim")
    tour.line("Superseded and retired rules are never returned.", "dim")
    summary["recalled_guidelines"] = [h.record.text for h in hits]

    tour.section("Experience: a failure is remembered", f"“{FAILURE['task']}”")
    eid = bank.experiences.record(**FAILURE)
    tour.line(f"recorded {eid} ({FAILURE['outcome']}): {_short(FAILURE['feedback'], 110)}")
    # Distilled for real, by the deterministic rule distiller (no model): what it returns is
    # what is shown, and what is recalled below.
    lesson_ids = bank.experiences.distill(eid)
    distiller = type(bank.distiller).__name__
    tour.line(f"distilled {len(lesson_ids)} lesson{'s' if len(lesson_ids) != 1 else ''} with "
              f"{distiller} (no model):", "dim")
    for lesson_id in lesson_ids:
        for lesson in bank.experiences.get(lesson_id).lessons:
            tour.console.print(_text(f"  {lesson_id} [{lesson.kind}] {lesson.text}"),
                               soft_wrap=True)
    tour.line(f"related task: “{RELATED_TASK}”", "italic")
    hits = bank.experiences.recall(RELATED_TASK, k=3)
    if hits:
        table = _table("id", "outcome", ("what was remembered", {"ratio": 1}))
        for hit in hits:
            record = hit.record
            what = (f"lesson: {record.lessons[0].text}" if record.kind == "lesson" and record.lessons
                    else f"task: {record.task}")
            table.add_row(_text(hit.id, "dim"), _text(record.outcome, "red" if record.outcome ==
                                                      "failure" else ""), _text(_short(what, 150)))
        tour.console.print(table)
    else:
        tour.line("nothing recalled", "dim")
    summary["experience"] = {"recorded": eid, "lessons": list(lesson_ids),
                             "recalled": [h.id for h in hits]}

    tour.section("The memory block for a task", f"bank.context_for(“{CONTEXT_TASK}”, "
                                                f"budget_tokens={CONTEXT_BUDGET})")
    memory = bank.context_for(CONTEXT_TASK, budget_tokens=CONTEXT_BUDGET)
    from rich import box
    from rich.panel import Panel

    tour.console.print(Panel(_text(memory.text or "(nothing relevant)"), box=box.ROUNDED,
                             border_style="dim", padding=(0, 1)))
    tour.line(f"{memory.tokens}/{CONTEXT_BUDGET} tokens · ids to rate: {', '.join(memory.ids)}"
              + (f" · {memory.omitted} omitted for the budget" if memory.omitted else ""), "dim")
    summary["context"] = {"tokens": memory.tokens, "ids": memory.ids, "omitted": memory.omitted}


def _guideline_text(bank: Any, guideline_id: str) -> str:
    try:
        return bank.guidelines.get(guideline_id).text
    except Exception:  # the demo must not fail over a detail line
        return ""
