"""Feedback and review: votes, approve, reject, retire.

A mixin of ``GuidelineMemory``.
"""

from __future__ import annotations

import logging
from typing import Any, Callable

from skillbank.errors import InvalidInputError, NotFoundError
from skillbank.memories.guidelines.files import IN_PLAY
from skillbank.records import Guideline, utcnow

log = logging.getLogger("skillbank.guidelines")


class GuidelineReview:
    """Status changes a person or an agent asks for (see the module docstring)."""

    # Feedback and review -------------------------------------------------------------------------
    def _change(self, gid: str, update: Callable[[Guideline], dict[str, Any] | None]) -> Guideline:
        self._check_id(gid)
        with self._lock, self.write_lock:
            self._refresh()
            g = self._items.get(gid)
            if g is None:
                raise NotFoundError(
                    f"no guideline {gid!r}; find ids with bank.guidelines.search(task) or list()")
            changes = update(g)
            if not changes:
                return g
            return self._save(g.model_copy(update={**changes, "updated": utcnow()}),
                              reembed=False)

    def vote(self, gid: str, helpful: bool = True) -> Guideline:
        """Count whether a guideline helped; retire it when harmful - helpful reaches the margin."""
        def apply(g: Guideline) -> dict[str, Any]:
            changes: dict[str, Any] = {"helpful": g.helpful + (1 if helpful else 0),
                                       "harmful": g.harmful + (0 if helpful else 1)}
            if (changes["harmful"] - changes["helpful"] >= self.retire_margin
                    and g.status in IN_PLAY):
                changes["status"] = "retired"
                log.info("guideline %s retired by votes", gid)
            return changes
        return self._change(gid, apply)

    def approve(self, gid: str) -> Guideline:
        """pending -> active; applies the supersessions it proposed. Active: no change."""
        def apply(g: Guideline) -> dict[str, Any] | None:
            if g.status == "active":
                return None
            if g.status != "pending":
                raise InvalidInputError(
                    f"guideline {gid} is {g.status}; only pending guidelines can be approved "
                    "(add the rule again to bring it back)")
            return {"status": "active"}
        with self._lock, self.write_lock:
            g = self._change(gid, apply)
            now = utcnow()
            for old_id in g.supersedes:
                old = self._items.get(old_id)
                if old is not None and old.status in IN_PLAY and old.superseded_by in (None, gid):
                    self._mark_superseded(old_id, gid, now)
            return g

    def reject(self, gid: str) -> Guideline:
        """pending -> retired."""
        def apply(g: Guideline) -> dict[str, Any] | None:
            if g.status == "retired":
                return None
            if g.status != "pending":
                raise InvalidInputError(
                    f"guideline {gid} is {g.status}; only pending guidelines can be rejected "
                    "(use retire() for an active one)")
            return {"status": "retired"}
        return self._change(gid, apply)

    def retire(self, gid: str) -> Guideline:
        """Stop serving a guideline (active or pending -> retired); the file is kept."""
        def apply(g: Guideline) -> dict[str, Any] | None:
            if g.status in ("retired", "superseded"):
                return None
            return {"status": "retired"}
        return self._change(gid, apply)


