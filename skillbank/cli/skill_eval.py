"""`skillbank skills eval [NAME]`: run a skill's trigger evals against the whole library (#26).

A thin face over `skillbank.memories.skills.trigger_evals`: finds each skill's trigger-eval file
(the Agent Skills `{"query", "should_trigger"}` format), routes every query with
`skills.search`, and reports misfires both ways.
"""

from __future__ import annotations

from pathlib import Path
from typing import Annotated, Any, Optional

import typer

from skillbank.cli.common import short, state, table, text
from skillbank.cli.skills import app


@app.command(name="eval")
def eval_(
    ctx: typer.Context,
    name: Annotated[Optional[str], typer.Argument(
        help="Skill name (default: every skill that keeps a trigger-eval file).")] = None,
    file: Annotated[Optional[Path], typer.Option(
        "--file", help="The eval file (JSON array or JSON lines of {query, should_trigger}); "
        "default: the skill's evals/trigger_evals.json.")] = None,
    k: Annotated[int, typer.Option("-k", "--k", min=1, max=20,
                                   help="A query triggers the skill when it is among the "
                                   "first K hits.")] = 1,
    fail_on_miss: Annotated[bool, typer.Option(
        "--fail-on-miss", help="Exit 1 when any query misfires (a miss or a false trigger), "
        "for CI.")] = False,
) -> None:
    """Run trigger evals: should-trigger queries that route elsewhere, and should-not queries
    that route to the skill.

    Over every skill, an eval file that cannot be read or has bad entries, or that a skill held
    for review keeps, is reported as an error row (--json: `errors`) while the other skills
    are still run; the exit code is then 2. For one NAME, a bad file (or a --file that is a
    folder) is invalid input: exit 2.
    Misfires are results, not errors (exit 0): with --fail-on-miss they exit 1, so a CI job can
    fail on them (it could not: misses exited 0 like a clean run)."""
    from skillbank.errors import InvalidInputError, NotFoundError
    from skillbank.memories.skills import trigger_evals

    st = state(ctx)
    if file is not None and name is None:
        raise InvalidInputError("--file needs the skill NAME it tests")
    skills = st.bank(sync=["skills"]).skills
    targets: list[tuple[str, Path]] = []
    if name is not None:
        folder = Path(skills.load(name).path).parent
        found = file or trigger_evals.find_file(folder)
        if found is None:
            raise NotFoundError(f"skill {name!r} keeps no trigger evals (looked for "
                                f"{', '.join(trigger_evals.TRIGGER_FILES)} in {folder}); "
                                "pass --file")
        targets.append((name, found))
    else:
        for skill in skills.list():
            found = trigger_evals.find_file(Path(skill.path).parent)
            if found is not None:
                targets.append((skill.name, found))
    # One named skill: a bad file is the whole answer (raised: exit 2, the error on stderr).
    reports, errors = _run_all(skills, targets, k, strict=name is not None)
    if name is None:  # a skill held or not loaded keeps its eval file: an error row, not silence
        every = skills.list(include_held=True)
        errors += trigger_evals.held(every)
        errors += trigger_evals.not_loaded(skills.sync(asked=False).findings,
                                           {Path(s.path).parent for s in every})
    _show(st, reports, errors, k)
    if errors:
        raise typer.Exit(2)
    if fail_on_miss and any(r.misses or r.false_triggers for r in reports):
        raise typer.Exit(1)


def _run_all(skills: Any, targets: list[tuple[str, Path]], k: int, *, strict: bool
             ) -> tuple[list[Any], list[dict[str, str]]]:
    """Each skill's report; a file that does not load, or a query the search refuses, is an
    error entry, not the end of the run (one colleague's half-written file must not hide every
    other skill's results; a refused query still did: hunt-badinput #1, session 26)."""
    from skillbank.errors import InvalidInputError
    from skillbank.memories.skills import trigger_evals

    reports, errors = [], []
    for skill, path in targets:
        try:
            cases = trigger_evals.load(path)
            reports.append(trigger_evals.run(skills, skill, cases, str(path), k=k))
        except InvalidInputError as exc:
            if strict:
                raise
            errors.append({"skill": skill, "file": str(path), "error": str(exc)})
    return reports, errors


def _show(st: Any, reports: list[Any], errors: list[dict[str, str]], k: int) -> None:
    def human() -> None:
        if not reports and not errors:
            st.out.print("No skill keeps trigger evals (evals/trigger_evals.json).")
            return
        rows = [[r.skill, f"{r.passed}/{len(r.results)}", len(r.misses), len(r.false_triggers)]
                for r in reports]
        rows += [[e["skill"], text("error", "red"), "-", "-"] for e in errors]
        st.out.print(table(f"trigger evals (triggered = among the first {k} hits)",
                           ["skill", "passed", "misses", "false triggers"], rows))
        for r in reports:
            for res in r.misses:
                where = ", ".join(res.routed_to) or "nothing fits"
                st.out.print(text(f"  {r.skill}: missed {short(res.query, 70)!r} -> {where}",
                                  "yellow"))
            for res in r.false_triggers:
                st.out.print(text(f"  {r.skill}: fired on {short(res.query, 70)!r}", "red"))
        for e in errors:
            st.out.print(text(f"  {e['skill']}: not run: {e['error']}", "red"), soft_wrap=True)

    st.out.emit({"skills": [r.as_dict() for r in reports], "errors": errors,
                 "passed": sum(r.passed for r in reports),
                 "total": sum(len(r.results) for r in reports)}, human)
