"""`skillbank migrate`: import an embedded root into a team deployment's PostgreSQL.

A thin door to `skillbank.team.migrate` (what moves, why a rerun changes nothing, what is one
transaction). It opens no bank and no index: the team's workers index what it imported.
"""

from __future__ import annotations

from pathlib import Path
from typing import Annotated, Optional

import typer

from skillbank.cli.common import state


def migrate(
    ctx: typer.Context,
    source: Annotated[Optional[Path], typer.Option(
        "--from", metavar="DIR",
        help="The embedded root to import (default: --root, ~/.skillbank).")] = None,
    database_url: Annotated[Optional[str], typer.Option(
        "--database-url", envvar="SKILLBANK_DATABASE_URL", metavar="URL",
        help="The team deployment's PostgreSQL (postgresql://user:password@host:5432/db).")
    ] = None,
    deployment: Annotated[Optional[str], typer.Option(
        "--deployment", envvar="SKILLBANK_DEPLOYMENT", metavar="NAME",
        help="The team deployment to import into (its workers' deployment setting).")] = None,
    namespace: Annotated[Optional[str], typer.Option(
        "--namespace", metavar="NS",
        help="Put every experience and guideline imported in namespace NS (default: each keeps "
             "its own; an embedded root's are in 'default'). Tokens read it with --reads NS.")
    ] = None,
) -> None:
    """Import an embedded root (experiences, guidelines, usage, audit, forgotten ids) into a
    team deployment's PostgreSQL. Running it again changes nothing."""
    from skillbank.errors import InvalidInputError
    from skillbank.settings import load_settings
    from skillbank.team.migrate import migrate_root

    st = state(ctx)
    settings = load_settings(Path(st.root) if st.root else None)  # (skills_repo: the warning)
    root = source if source is not None else settings.root
    if not database_url:
        raise InvalidInputError("give the team deployment's PostgreSQL: --database-url "
                                "postgresql://user:password@host:5432/db (or "
                                "SKILLBANK_DATABASE_URL)")
    if not deployment:
        raise InvalidInputError("name the team deployment to import into: --deployment NAME "
                                "(or SKILLBANK_DEPLOYMENT), as its workers are configured")
    report = migrate_root(root, database_url, deployment=deployment, namespace=namespace,
                          skills_repo=settings.skills_repo)

    def human() -> None:
        st.out.plain(report.summary())
        for where in report.skipped:  # left out on purpose, it says why; else unreadable
            said = "left out" if where in report.left_out else "not imported (unreadable)"
            st.out.note(f"{said}: {where}")
        for warning in report.warnings:
            st.out.note(f"warning: {warning}")

    st.out.emit(report.to_json(), human)
