"""The memory browser's skill review queue (#28): skills held out of routing, and skills whose
outcomes fell after a change. Data for the page only; the decisions are `bank.skills` calls."""

from __future__ import annotations

from typing import Any

from skillbank.errors import SkillbankError


def review_page(bank: Any, page: int = 1) -> dict[str, Any]:
    """Held skills (pending review or rejected) with their findings, and outcome flags, a page
    of `views.TIMELINE_SIZE` skills at a time, as the Guidelines page: 1,739 held corpus skills
    were one page of 2.3 MB, two forms each (hunt-browser #6, session 31).

    `versions`: each held skill's current version (`skill_versions`, as `skills review` and
    `skills versions` name it), shown beside it and carried by its Accept form, so accepting
    pins what was listed or is refused: the page sent no version and pinned whatever files were
    on disk at the click (hunt-browser #1, session 31). A skill that cannot be versioned now
    (gone meanwhile) gets none, and its Accept is refused."""
    from skillbank.ui.views import TIMELINE_SIZE

    held = bank.skills.review_queue()
    flagged = bank.skills.outcome_flags()
    status = bank.skills.scan_status()
    pages = max(1, -(-len(held) // TIMELINE_SIZE))
    page = min(max(page, 1), pages)
    queue = held[(page - 1) * TIMELINE_SIZE: page * TIMELINE_SIZE]
    from skillbank.ui.views import spec_errors

    # How each breaks the Agent Skills spec, as the Skills page marks it: a name such as
    # "probe-tp/files/SKILL.md" (name-chars) is served once accepted, so the reviewer is told.
    spec = {s.name: errors for s in queue if (errors := spec_errors(s))}
    versions: dict[str, str] = {}
    for skill in queue:
        try:
            versions[skill.name] = bank.skills.skill_versions(skill.name)[0].version
        except (SkillbankError, IndexError):
            continue
    return {"queue": queue, "flagged": flagged, "scanner": status, "versions": versions,
            "spec": spec,
            "total": len(held), "page": page, "pages": pages,
            "here": f"/review?page={page}" if page > 1 else "/review"}
