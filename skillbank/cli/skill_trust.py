"""`skillbank skills scan | review | versions | restore`: skills you can trust (#28).

A thin face over `bank.skills` (skillbank/memories/skills/trust.py and skill_trust_api.py):
scans, the review queue, accept/reject, pinned versions and restoring one.
"""

from __future__ import annotations

import json
import shlex
from typing import Annotated, Any, Optional

import typer

from skillbank.cli.common import short, state, table, text, when
from skillbank.cli.skills import app

_SEVERITY_STYLE = {"critical": "bold red", "high": "red", "medium": "yellow", "low": "cyan",
                   "info": "dim"}


def _status(skill: Any) -> str:
    if skill.held:
        return "held: " + (skill.review or "pending review")
    return skill.review or "served"


@app.command()
def scan(
    ctx: typer.Context,
    name: Annotated[Optional[str], typer.Argument(
        help="Skill name (default: every skill).")] = None,
    sarif: Annotated[bool, typer.Option(
        "--sarif", help="Print the findings as SARIF 2.1.0 (for code-scanning tools).")] = False,
) -> None:
    """Scan skills for security problems (cached by content); show findings and trust.

    Exits 1 when there were skills but none could be scanned (no scanner installed, or every
    scan failed), after printing what it has: a CI step must not read that as "no findings".
    The SARIF log then says so too (`invocations[0].executionSuccessful: false`, with the
    reason in `toolExecutionNotifications`)."""
    from skillbank.errors import SkillbankError
    from skillbank.memories.skills.scan import nothing_scanned

    st = state(ctx)
    bank = st.bank(sync=["skills"])
    skills = bank.skills.scan(name)
    status = bank.skills.scan_status()
    failure = nothing_scanned(skills, status)
    if not failure and not status["available"]:  # what is shown comes from earlier scans
        from rich.markup import escape

        from skillbank.memories.skills.scan import INSTALL_HINT

        st.out.note(escape(f"no scanner: {INSTALL_HINT}"))
    if sarif:
        from skillbank.memories.skills.scan import sarif as to_sarif

        st.out.plain(json.dumps(to_sarif(skills, failure), indent=2))
    else:
        _show_scans(st, skills)
    if failure:
        raise SkillbankError(failure)  # exit 1: it could not be done


def _show_scans(st: Any, skills: list[Any]) -> None:
    """The scan table and each finding (or, with --json, the Skill records)."""

    def human() -> None:
        rows = [[s.name, s.trust, s.scan, len(s.findings), _status(s)] for s in skills]
        st.out.print(table(f"{len(skills)} skills", ["name", "trust", "scan", "findings",
                                                     ("status", {"ratio": 1})], rows))
        for s in skills:
            for f in s.findings:
                where = f"{f.file or 'SKILL.md'}{f':{f.line}' if f.line else ''}"
                st.out.print(text(f"  {s.name}: {f.severity} {f.rule} — {short(f.title, 70)} "
                                  f"({where})", _SEVERITY_STYLE.get(f.severity)))

    st.out.emit(skills, human)


@app.command("review")
def review_skill(
    ctx: typer.Context,
    name: Annotated[Optional[str], typer.Argument(
        help="Skill name (without it: the skills waiting for review).")] = None,
    decision: Annotated[Optional[str], typer.Argument(
        metavar="[accept|reject]", help="accept (pins its files) or reject.")] = None,
    reason: Annotated[Optional[str], typer.Option("--reason", help="Why, for the record.")] = None,
    version: Annotated[Optional[str], typer.Option(
        "--version", help="The version you read (`skills versions NAME`); accepting is refused "
        "if the files changed since.")] = None,
) -> None:
    """The review queue, or accept/reject a team or third-party skill (pins its file digests)."""
    st = state(ctx)
    bank = st.bank(sync=["skills"])
    if name is None:
        queue = bank.skills.review_queue()
        flagged = bank.skills.outcome_flags()

        def human_queue() -> None:
            if flagged:  # rollback by outcome: changed skills that work worse than before
                st.out.print(table(f"{len(flagged)} skills worse since a change",
                                   ["name", "success now", "before", ("restore", {"ratio": 1})],
                                   [[f["name"], f"{f['success_rate']:.0%} of {f['judged']}",
                                     f"{f['previous_success_rate']:.0%} of "
                                     f"{f['previous_judged']}", f["hint"]] for f in flagged]))
            if not queue:
                st.out.print("No skill is waiting for review.")
                return
            st.out.print(table(f"{len(queue)} skills held for review",
                               ["name", "trust", "scan", ("why", {"ratio": 1})],
                               [[s.name, s.trust, s.scan, s.review] for s in queue]))
            st.out.print(text("Read them (`skillbank skills show NAME`), then `skillbank skills "
                              "review NAME accept` or `… reject`.", "dim"))

        st.out.emit({"held": queue, "flagged_by_outcome": flagged}, human_queue)
        return
    if decision not in ("accept", "reject"):
        raise typer.BadParameter("say accept or reject after the skill name", param_hint="DECISION")
    skill = bank.skills.review_skill(name, decision, reason or "", version)
    st.out.emit(skill, lambda: st.out.print(text(
        f"{decision}ed {name} ({skill.trust}); {_status(skill)}", "green")))


@app.command()
def versions(
    ctx: typer.Context,
    name: Annotated[str, typer.Argument(help="Skill name.")],
) -> None:
    """A skill's versions: the current one and earlier kept or accepted ones."""
    from skillbank.cli.skill_drafts import versions_in_git

    st = state(ctx)
    bank = st.bank(sync=["skills"])
    found = bank.skills.skill_versions(name)
    in_git = versions_in_git(bank, name)  # restore is refused there (hunt-git #5, session 27)

    def human() -> None:
        st.out.print(table(f"versions of {name}",
                           ["version", "saved (UTC)", ("reason", {"ratio": 1})],
                           [[v.version, when(v.saved, zone=False), v.reason]
                            for v in found]))
        st.out.print(text(in_git or f"Restore one with `skillbank skills restore "
                          f"{shlex.quote(name)}@VERSION`.", "dim"))

    st.out.emit(found, human)


@app.command()
def restore(
    ctx: typer.Context,
    target: Annotated[str, typer.Argument(metavar="NAME@VERSION",
                                          help="As listed by `skills versions NAME`.")],
) -> None:
    """Make an earlier version of a skill current again."""
    st = state(ctx)
    name, at, version = target.partition("@")
    if not at or not name or not version:
        raise typer.BadParameter("write NAME@VERSION, e.g. csv-report@3f2a9c0d1e4b5a6f")
    skill = st.bank(sync=["skills"]).skills.restore_version(name, version)
    st.out.emit(skill, lambda: st.out.print(text(f"restored {name} to {version} ({skill.path})",
                                                 "green")))
