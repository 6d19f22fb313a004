"""What `skillbank migrate` tells its user beside what it imported: what it left behind, and a
deployment that looks mistyped.

Both were silent (team hunt, session 19): a personal root's own skills stayed behind with
`"skipped": []` (docs: "Skills are not imported", but a user migrating expects their skills to
follow), and `--deployment teem` imported into a deployment no worker had ever opened, exit 0,
"Team workers index the experiences on their next sync".

Why a warning and not a refusal for a deployment that holds nothing yet: importing before the
first worker starts is a real order of work (a team set up from one person's root), nothing is
lost by a typo (the rows wait under that name; run migrate again with the right one) and a
refusal would make every first import pass a flag. The warning names the deployments the
database does hold, so a typo is seen at once.
"""

from __future__ import annotations

import shlex
from pathlib import Path
from typing import Any

#: Tables whose rows show that a deployment is in use: a worker wrote to it (events, rules,
#: audit, usage, the change feed, index checkpoints, drafts) or migrate imported into it.
_IN_USE = ("sb_experience_events", "sb_guidelines", "sb_audit", "sb_usage", "sb_changes",
           "sb_index_checkpoints", "sb_drafts", "sb_imports")


def skills_left(root: Path) -> list[str]:
    """The skills in the root's own library (`<root>/skills/**/SKILL.md`), by folder."""
    library = root / "skills"
    if not library.is_dir():
        return []
    found = {path.parent.relative_to(library).as_posix() for path in library.rglob("SKILL.md")
             if ".git" not in path.parts}
    return sorted(found)


def skills_warning(root: Path, names: list[str], skills_repo: str | None = None) -> str | None:
    """What to do with the skills left behind, worded for the deployment: with a skills
    repository (`skills_repo`), push them there for review; without one (docs/team.md's
    setup), the workers serve their root's `skills/` folder, so copy them there. The git
    wording was given to every deployment: its workers' `save_skill` created and served a skill
    at once, no proposal, and the step that works there was not named (hunt-skillteam #4,
    session 32). Without `skills_repo` the git step is still named, as an "if": migrate runs
    from a member's root, which may not know the team's settings.

    The `skills copy` command carries `--no-remember`: without it, the first `--skills-dir`
    a command gets is recorded as a skill root of the team root (operating.md), so copying one
    skill made the team's workers serve the member's whole personal skills folder, the skills
    written there later included (hunt-teamport #3, session 35). The path is shell-quoted: the
    command is meant to be pasted as it is."""
    if not names:
        return None
    shown = ", ".join(names[:10]) + (f" and {len(names) - 10} more" if len(names) > 10 else "")
    head = f"{len(names)} skill(s) in {root / 'skills'} were not imported ({shown})"
    if skills_repo:
        return (f"{head}: this team serves skills from its git repository ({skills_repo}), not "
                "from PostgreSQL. Push them there for review: copy each folder into a clone of "
                "the skills repository, commit, push a branch and have a reviewer merge it (or "
                "save them through a worker's save_skill, which proposes them)")
    return (f"{head}: skills are files, not PostgreSQL rows, and no skills repository is "
            "configured here, so the team's workers serve the skills folder of their root. "
            "Copy each folder into <team root>/skills (the workers watch it and serve it at "
            "once), or run `skillbank --root TEAM-ROOT --skills-dir "
            f"{shlex.quote(str(root / 'skills'))} --no-remember skills copy NAME` for each "
            "(--no-remember: without it the team root records your skills folder as one of its "
            "own and its workers serve every skill in it), or save each through a worker's "
            "save_skill. If the team serves skills from a git repository (skills_repo), push "
            "them to that skills repository for review instead")


def held_nothing(conn: Any, deployment: str) -> bool:
    """Whether no worker has written to `deployment` and nothing was imported into it yet."""
    return not any(conn.execute(f"SELECT 1 FROM {table} WHERE deployment = %s LIMIT 1",
                                (deployment,)).fetchone() for table in _IN_USE)


def deployments_in_use(conn: Any, near: str, limit: int = 10) -> list[str]:
    """The deployments this database holds, those most like `near` first (the one a mistyped
    `--deployment` meant; alphabetical order named ten others on a database holding many)."""
    import difflib

    union = " UNION ".join(f"SELECT DISTINCT deployment FROM {table}" for table in _IN_USE)
    names = [row[0] for row in conn.execute(
        f"SELECT deployment FROM ({union}) AS d ORDER BY deployment LIMIT 10000").fetchall()
        if row[0] != near]
    close = difflib.get_close_matches(near, names, n=limit, cutoff=0.6)
    return [*close, *[n for n in names if n not in close]][:limit]


def new_deployment_warning(deployment: str, others: list[str]) -> str:
    known = (f"this database holds {', '.join(repr(d) for d in others)}" if others
             else "this database holds no other deployment yet")
    return (f"deployment {deployment!r} held nothing before this run (no worker has written to "
            f"it, nothing was imported into it); {known}. If your workers serve another one "
            "(their --deployment, the root's skillbank.toml), run migrate again with that name: "
            f"what went into {deployment!r} stays unseen by them")
