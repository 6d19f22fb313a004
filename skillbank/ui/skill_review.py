"""The memory browser's skill review queue (#28): skills held out of routing, and skills whose
outcomes fell after a change. Data for the page only; the decisions are `bank.skills` calls."""

from __future__ import annotations

from typing import Any


def review_page(bank: Any, page: int = 1, skill: str = "") -> dict[str, Any]:
    """Held skills (pending review or rejected) with their findings, and outcome flags, a page
    of `views.TIMELINE_SIZE` skills at a time, as the Guidelines page: 1,739 held corpus skills
    were one page of 2.3 MB, two forms each (hunt-browser #6, session 31). `skill`: the page
    that lists that skill (a held skill's "held" link; it led to page 1, review 3 #2, s. 31).

    `versions`: each held skill's version as its findings were taken (`Skill.version`, one read
    of its files: the version was read a moment after the findings, and a file could change
    between, review 3 #3), shown beside it and carried by its link to its page. Accepting is
    done there, on the page of the content read, which carries the version it rendered: this
    page's Accept pinned the version listed when it was last rendered, not the one the
    reviewer had read on the skill's own pages (review 3 #1, session 31)."""
    from skillbank.ui.views import TIMELINE_SIZE

    held = bank.skills.review_queue()
    flagged = bank.skills.outcome_flags()
    status = bank.skills.scan_status()
    pages = max(1, -(-len(held) // TIMELINE_SIZE))
    where = next((i for i, s in enumerate(held) if s.name == skill), None) if skill else None
    if where is not None:
        page = where // TIMELINE_SIZE + 1
    page = min(max(page, 1), pages)
    queue = held[(page - 1) * TIMELINE_SIZE: page * TIMELINE_SIZE]
    from skillbank.ui.views import spec_errors

    # How each breaks the Agent Skills spec, as the Skills page marks it: a name such as
    # "probe-tp/files/SKILL.md" (name-chars) is served once accepted, so the reviewer is told.
    spec = {s.name: errors for s in queue if (errors := spec_errors(s))}
    versions = {s.name: s.version for s in queue if s.version}
    return {"queue": queue, "flagged": flagged, "scanner": status, "versions": versions,
            "spec": spec,
            "total": len(held), "page": page, "pages": pages,
            "here": f"/review?page={page}" if page > 1 else "/review"}
