"""`skillbank audit`: who wrote, reviewed, voted, pruned or forgot what, and when.

Reads the root's audit log (`skillbank.audit`) directly, or in team mode (`database_url`) the
deployment's log in PostgreSQL: no index is opened, so it answers in a moment even while another
process owns the root. Filters combine (all must match); `--json`
prints one JSON document (a list of events) for scripts.
"""

from __future__ import annotations

from pathlib import Path
from typing import Annotated, Any, Optional

import typer

from skillbank.cli.common import state, table


def audit(
    ctx: typer.Context,
    principal: Annotated[Optional[str], typer.Option(
        "--principal", metavar="WHO", help="Only this principal's events.")] = None,
    action: Annotated[Optional[str], typer.Option(
        "--action", metavar="ACTION",
        help="Only this action (record, vote, forget, approve, prune, save, …).")] = None,
    since: Annotated[Optional[str], typer.Option(
        "--since", metavar="WHEN",
        help="Only events from then on: an ISO date or time (local time unless it "
        "has an offset: 2026-12-01T08:00, 2026-12-01T08:00Z), or a span (30m, 12h, 7d).")] = None,
    item_id: Annotated[Optional[str], typer.Option(
        "--id", metavar="ID", help="Only events about this item (exp-…, gl-…, skill:<name>).")
    ] = None,
    namespace: Annotated[Optional[str], typer.Option(
        "--in", metavar="NAMESPACE", help="Only events in this namespace.")] = None,
    limit: Annotated[int, typer.Option(
        min=0, help="Show at most this many (the newest).")] = 200,
) -> None:
    """Who did what: every write, review, vote, prune and forget (never the memory's text)."""
    from skillbank.audit import ACTIONS, open_log, parse_since
    from skillbank.errors import InvalidInputError
    from skillbank.settings import load_settings

    st = state(ctx)
    if action is not None and action not in ACTIONS:
        raise InvalidInputError(f"unknown action {action!r}; one of {', '.join(sorted(ACTIONS))}")
    if st.namespace:  # `--namespace NS` acts for NS alone (commands._act_for_namespace)
        if namespace not in (None, st.namespace):
            raise InvalidInputError(
                f"--namespace {st.namespace} acts for that namespace alone; audit events of "
                f"{namespace!r} are read without --namespace")
        namespace = st.namespace  # the whole log was listed, ids and principals of every user
    moment = parse_since(since, span=True) if since is not None else None
    settings = load_settings(Path(st.root) if st.root else None)
    root = settings.root
    where = {"principal": principal, "action": action, "since": moment, "item_id": item_id,
             "namespace": namespace, "limit": limit}
    if settings.database_url:  # team mode keeps the log in PostgreSQL, not in the root
        from skillbank.index_ownership import deployment_of
        from skillbank.store import open_store

        store = open_store(root, settings.database_url,
                           deployment=deployment_of(settings, shared=True),
                           statement_timeout=settings.database_statement_timeout)
        try:
            events = store.audit().query(**where)
        finally:
            store.close()
        root = f"deployment {deployment_of(settings)!r} of the team database"
    else:
        events = open_log(root).query(**where)
    rows = [e.to_json() for e in events]

    def human() -> None:
        if not rows:
            st.out.note("No audited events match." if any(
                v is not None for v in (principal, action, since, item_id, namespace))
                else f"Nothing audited yet in {root}.")
            return
        cut = f"; the newest {limit}, --limit N for more" if limit and len(rows) >= limit else ""
        st.out.print(fitting(st.out.console, f"Audit log ({len(rows)}{cut})", rows))

    st.out.emit(rows, human)


def _who(row: dict) -> str:
    # An untrusted call (an HTTP client of a server without --trust) may run under the
    # server's own principal: say so beside it.
    return row["principal"] + ("" if row["trusted"] else " (untrusted)")


def fitting(console: Any, title: str, rows: list[dict]) -> Any:
    """The audit table: one column per field when it fits the console, else who (principal,
    then role and face below it) in one column and the id folded. At 80 columns, or piped
    (rich assumes 80), the no-wrap time, role and id squeezed principal, face and namespace
    to nothing: "who did what" showed no who (hunt-team #3, session 25)."""
    from rich.measure import Measurement

    full = table(title, [("time (UTC)", {"no_wrap": True}), "principal",
                         ("role", {"no_wrap": True}), "face", "namespace", "action", "kind", "id"],
                 [[r["at"][:19].replace("T", " "), _who(r), r["role"], r["face"],
                   r["namespace"], r["action"], r["kind"], r["id"]] for r in rows])
    wide = console.options.update_width(10_000)  # the width it would take, unclamped
    if Measurement.get(console, wide, full).maximum <= console.width:
        return full
    return table(title, [("time (UTC)", {"min_width": 10}),
                         ("who", {"min_width": 8, "overflow": "fold"}),
                         ("namespace", {"overflow": "fold"}), "action", "kind",
                         ("id", {"no_wrap": False, "overflow": "fold", "min_width": 10})],
                 [[r["at"][:19].replace("T", " "), f"{_who(r)}\n{r['role']}, {r['face']}",
                   r["namespace"], r["action"], r["kind"], r["id"]] for r in rows])
