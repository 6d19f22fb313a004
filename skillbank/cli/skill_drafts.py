"""`skillbank skills propose | drafts | adopt | discard | history`: skills written from experience.

A thin face over `bank.skills` (see skillbank/memories/skills/drafts.py): proposing writes
drafts to `<root>/drafts/`, which nothing routes to until a person adopts one.
"""

from __future__ import annotations

from typing import Annotated, Any, Optional

import typer

from skillbank.cli.common import short, state, table, text
from skillbank.cli.skills import app


def _draft_rows(drafts: list[Any]) -> list[list[Any]]:
    return [[_named(d), d.revises or "-", len(d.sources), d.drafted_by, short(d.description, 70)]
            for d in drafts]


def _named(draft: Any) -> str:
    """A draft's name, and the new skill adopting it writes when that is another name (a draft
    drawn from namespaces other than the bank's own, hunt-untrusted #3, session 27)."""
    skill = getattr(draft, "skill", None) or draft.name
    return draft.name if skill in (draft.name, draft.revises) else f"{draft.name} (skill {skill})"


_DRAFT_COLUMNS = ["name", "revises", "sources", "by", ("description", {"ratio": 1})]


@app.command()
def propose(
    ctx: typer.Context,
    min_support: Annotated[int, typer.Option(
        "--min-support", min=1, help="Fewest experiences of one kind of task to draft a skill.")] = 3,
    namespace: Annotated[Optional[str], typer.Option(
        "--namespace", help="Experiences of this namespace ('*' for all; default: the bank's).")] = None,
) -> None:
    """Draft skills from recurring experience, and revisions of skills that keep failing."""
    st = state(ctx)
    bank = st.bank(sync=["skills", "experiences"])
    drafts = bank.skills.propose(namespace=namespace, min_support=min_support)

    def human() -> None:
        if not drafts:
            st.out.print("Nothing new to propose (no new group of experiences reaches "
                         f"--min-support {min_support}, and no skill keeps failing).")
            return
        st.out.print(table(f"{len(drafts)} new drafts in {bank.root / 'drafts'}", _DRAFT_COLUMNS,
                           _draft_rows(drafts)))
        st.out.print(text("Review them, then `skillbank skills adopt NAME` or "
                          "`skillbank skills discard NAME`.", "dim"))

    st.out.emit(drafts, human)


@app.command()
def drafts(
    ctx: typer.Context,
    diff: Annotated[bool, typer.Option("--diff", help="Show each revision's diff.")] = False,
) -> None:
    """Pending drafts, and skills flagged for review (used often, rarely helpful)."""
    st = state(ctx)
    bank = st.bank(sync=["skills"])
    pending = bank.skills.drafts()
    flagged = bank.skills.review()
    unreadable = _unreadable_drafts(bank)

    def human() -> None:
        if pending:
            st.out.print(table(f"{len(pending)} pending drafts", _DRAFT_COLUMNS, _draft_rows(pending)))
            for draft in pending:
                if draft.base_changed:  # adopt refuses it (hunt-author #1, session 24)
                    st.out.print(text(f"{draft.name}: {draft.revises} changed since this "
                                      "revision was drawn from it; its diff is against the "
                                      "skill as it is now, and adopting it is refused until "
                                      "it is drawn again (`skillbank skills propose`) or "
                                      "edited (`skillbank skills edit-draft`)", "yellow"))
                if diff and draft.diff:
                    st.out.print(text(draft.diff), soft_wrap=True)
        else:
            st.out.print("No pending drafts (`skillbank skills propose` writes some).")
        for finding in unreadable:
            st.out.print(text(f"could not read {finding.path}: {finding.message}", "red"))
        if flagged:
            st.out.print(table(f"{len(flagged)} skills flagged for review", [
                "name", "uses", "helped", "failed"],
                [[s.name, s.usage.uses, s.usage.successes, s.usage.failures] for s in flagged]))

    st.out.emit({"drafts": pending, "flagged_for_review": [s.name for s in flagged],
                 "unreadable_drafts": unreadable}, human)


def _unreadable_drafts(bank: Any) -> list[Any]:
    """Draft folders that cannot be read as drafts (`skills.draft_problems`): they were left
    out of the list without a word (hunt-ui #8, session 27); [] for a caller who may not
    review drafts."""
    from skillbank.errors import PermissionDeniedError

    try:
        return list(bank.skills.draft_problems())
    except PermissionDeniedError:
        return []


@app.command()
def adopt(
    ctx: typer.Context,
    name: Annotated[str, typer.Argument(help="Draft name (as listed by `skills drafts`).")],
) -> None:
    """Move a draft into the bank's skills (a revision keeps the previous version)."""
    st = state(ctx)
    skill = st.bank(sync=["skills"]).skills.adopt(name)
    from skillbank.cli.skills import written

    st.out.emit(skill, lambda: st.out.print(text(written("adopted", skill), "green")))


@app.command("edit-draft")
def edit_draft(
    ctx: typer.Context,
    name: Annotated[str, typer.Argument(help="Draft name (as listed by `skills drafts`).")],
    file: Annotated[str, typer.Option(
        "--file", metavar="PATH", help="The draft's new SKILL.md ('-': standard input).")],
) -> None:
    """Replace a draft's SKILL.md before adopting it (in team mode every worker sees it)."""
    import sys
    from pathlib import Path

    from skillbank.errors import InvalidInputError

    st = state(ctx)
    try:
        body = sys.stdin.read() if file == "-" else Path(file).read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as exc:
        raise InvalidInputError(f"cannot read the edited draft {file} ({exc}); nothing "
                                "was changed") from None
    draft = st.bank(sync=None).skills.edit_draft(name, body)
    st.out.emit(draft, lambda: st.out.print(text(f"edited draft {draft.name}", "green")))


@app.command()
def discard(
    ctx: typer.Context,
    name: Annotated[str, typer.Argument(help="Draft name (as listed by `skills drafts`).")],
) -> None:
    """Drop a draft; it is not proposed again for the same experiences."""
    st = state(ctx)
    draft = st.bank(sync=None).skills.discard(name)
    st.out.emit(draft, lambda: st.out.print(text(f"discarded draft {draft.name}", "green")))


@app.command()
def history(
    ctx: typer.Context,
    name: Annotated[str, typer.Argument(help="Skill name (in the bank's own library).")],
    restore: Annotated[Optional[str], typer.Option(
        "--restore", metavar="VERSION", help="Make this version current again.")] = None,
) -> None:
    """Earlier versions of a skill (files under <skill>/.versions/); --restore one."""
    st = state(ctx)
    bank = st.bank(sync=["skills"])
    if restore is not None:
        skill = bank.skills.restore(name, restore)
        st.out.emit(skill, lambda: st.out.print(text(f"restored {name} to {restore}", "green")))
        return
    versions = bank.skills.history(name)
    in_git = versions_in_git(bank, name)

    def human() -> None:
        if in_git is not None:
            st.out.print(text(in_git, "dim"))
        if not versions:
            if in_git is None:
                st.out.print(f"{name} has no earlier versions.")
            return
        st.out.print(table(f"{len(versions)} earlier versions of {name}",
                           ["version", "reason", ("description", {"ratio": 1})],
                           [[v.version, v.reason, short(v.description, 60)] for v in versions]))

    st.out.emit(versions, human)


def versions_in_git(bank: Any, name: str) -> str | None:
    """Where a skill's versions are in git mode (None without skills in git): the skills
    repository's commits. `skills history` said "no earlier versions" of a skill revised
    through a merged proposal, and `skills versions` offered `skills restore`, which git mode
    refuses (hunt-git #5, session 27)."""
    repo = bank.skills.repo_status()
    if repo is None:
        return None
    return (f"In git mode {name}'s versions are the commits of the skills repository "
            f"{repo['remote']}: `git log -p {repo['branch']} -- {name}/` in a clone of it lists "
            f"them. Restore one there: commit it on a branch and have a reviewer merge it into "
            f"{repo['branch']} (`skillbank skills restore` is refused in git mode).")
