"""The memory browser's skill review queue (#28): skills held out of routing, and skills whose
outcomes fell after a change. Data for the page only; the decisions are `bank.skills` calls."""

from __future__ import annotations

from typing import Any


def review_page(bank: Any) -> dict[str, Any]:
    """Held skills (pending review or rejected) with their findings, and outcome flags."""
    queue = bank.skills.review_queue()
    flagged = bank.skills.outcome_flags()
    status = bank.skills.scan_status()
    return {"queue": queue, "flagged": flagged, "scanner": status}
