"""The memory browser's audit page: who wrote, reviewed, voted, pruned or forgot what.

The browser is the local user's window on their own root (as the CLI is), so it shows the
whole log (a browser started for one namespace: that namespace's events), filtered by what is
typed in the page; bad filters are named on the page, a 400 that shows no events (never a 500,
nor the events a bad filter did not filter: hunt-browser #4, session 31). The log is read from the bank's `audit` (an in-process bank) or from the root's files (a
client bank forwarding to the owner process: the log is plain files under the same root).
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Any

PAGE_LIMIT = 500
#: The `trusted` filter's values ("" = any).
TRUSTED = ("", "yes", "no")
#: Control characters no principal or id holds (the log's own rule, `skillbank.audit`): a NUL
#: reached PostgreSQL, which refused it as a 500 with a traceback, while the file log answered
#: 200 (hunt-ui #6, session 37). Refused here, on both stores alike, as a named problem.
_CONTROL = re.compile(r"[\x00-\x1f\x7f]")


@dataclass
class AuditFilter:
    """The page's filters as typed; `parse` checks them and names what was wrong."""

    principal: str = ""
    action: str = ""
    item_id: str = ""
    since: str = ""
    #: "yes" (trusted calls only), "no" (untrusted ones: an HTTP client of a server without
    #: --trust, an adapter marked untrusted; they may run under the server's own principal, so
    #: the principal alone does not find them), "" (both).
    trusted: str = ""
    problems: list[str] = field(default_factory=list)

    @classmethod
    def parse(cls, params: Any) -> "AuditFilter":
        from skillbank.audit import ACTIONS

        f = cls(principal=params.get("principal", "").strip(),
                action=params.get("action", "").strip(), item_id=params.get("id", "").strip(),
                since=params.get("since", "").strip(),
                trusted=params.get("trusted", "").strip().lower())
        if f.action and f.action not in ACTIONS:
            f.problems.append(f"unknown action {f.action!r}")
            f.action = ""
        for label, attr in (("principal", "principal"), ("id", "item_id")):
            if _CONTROL.search(getattr(f, attr)):
                f.problems.append(f"{label} must not contain control characters, "
                                  f"not {getattr(f, attr)!r}")
                setattr(f, attr, "")
        if f.trusted not in TRUSTED:
            f.problems.append(f"trusted must be yes, no or empty, not {f.trusted!r}")
            f.trusted = ""
        return f


def audit_log_of(bank: Any) -> Any:
    """The log `bank` writes (`skillbank.audit.log_of`)."""
    from skillbank.audit import log_of

    return log_of(bank)


def audit_page(bank: Any, f: AuditFilter) -> dict[str, Any]:
    from skillbank.audit import ACTIONS, parse_since
    from skillbank.errors import InvalidInputError

    from skillbank.moments import caller_offset

    since = None
    if f.since:
        try:  # UTC, as the table and the Experiences page's dates are: a date typed here read
            with caller_offset(0):  # as the server's local time missed rows the table showed
                since = parse_since(f.since, span=True)  # (hunt-time #3); a span: the log's clock
        except InvalidInputError as exc:
            f.problems.append(str(exc))
    if f.problems:  # a 400 showing no events: it showed the newest 500 unfiltered, as if they
        return {"f": f, "rows": [], "more": False, "actions": sorted(ACTIONS)}  # matched (#4)
    from skillbank import scope as scopes
    from skillbank.audit import reviewed_namespaces

    caller = scopes.active()  # a browser started for one namespace shows that namespace's
    if caller is not None:  # the rule every face applies (hunt-scope #2, session 28)
        reviewed = reviewed_namespaces(caller, "the audit page")
    else:
        reviewed = None
    # Every filter goes to the query, and the page's rows bound it: the page asked for the
    # whole log and filtered it here, 14-17 s at 1M rows in PostgreSQL under the lock every
    # page shares (hunt-pg #4, session 28).
    events = audit_log_of(bank).query(principal=f.principal or None, action=f.action or None,
                                      item_id=f.item_id or None, since=since,
                                      namespaces=reviewed,
                                      trusted=None if not f.trusted else f.trusted == "yes",
                                      limit=PAGE_LIMIT + 1)
    more = len(events) > PAGE_LIMIT
    rows = list(reversed(events[-PAGE_LIMIT:]))  # newest first
    return {"f": f, "rows": rows, "more": more, "actions": sorted(ACTIONS)}
