"""Feedback and review: votes, approve, reject, retire, forget.

A mixin of ``GuidelineMemory``.
"""

from __future__ import annotations

import json
import logging
import os
from pathlib import Path
from typing import Any, Callable

from skillbank.audit import note
from skillbank.errors import InvalidInputError, NotFoundError, PermissionDeniedError
from skillbank.fsutil import fsync_dir
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

    def vote(self, gid: str, helpful: bool = True, *, trusted: bool = True) -> Guideline:
        """Count whether a guideline helped; retire it when harmful - helpful reaches the margin.

        An untrusted vote (``trusted=False``: a client without trust) is recorded in its own
        counters and never changes the status or the ranking: three anonymous "not helpful"
        votes must not retire a rule a person taught.
        """
        _check_flag(helpful, "helpful")
        _check_flag(trusted, "trusted")

        def apply(g: Guideline) -> dict[str, Any]:
            if not trusted:
                return {"untrusted_helpful": g.untrusted_helpful + (1 if helpful else 0),
                        "untrusted_harmful": g.untrusted_harmful + (0 if helpful else 1)}
            changes: dict[str, Any] = {"helpful": g.helpful + (1 if helpful else 0),
                                       "harmful": g.harmful + (0 if helpful else 1)}
            if (changes["harmful"] - changes["helpful"] >= self.retire_margin
                    and g.status in IN_PLAY):
                changes["status"] = "retired"
                log.info("guideline %s retired by votes", gid)
            return changes
        voted = self._change(gid, apply)
        note(self, "vote", "guideline", gid, namespace=voted.namespace)
        return voted

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
            note(self, "approve", "guideline", gid, namespace=g.namespace)
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
        rejected = self._change(gid, apply)
        note(self, "reject", "guideline", gid, namespace=rejected.namespace)
        return rejected

    def retire(self, gid: str) -> Guideline:
        """Stop serving a guideline (active or pending -> retired); the file is kept."""
        def apply(g: Guideline) -> dict[str, Any] | None:
            if g.status in ("retired", "superseded"):
                return None
            return {"status": "retired"}
        retired = self._change(gid, apply)
        note(self, "retire", "guideline", gid, namespace=retired.namespace)
        return retired



    def forget(self, gid: str, *, trusted: bool = True) -> dict[str, Any]:
        """Delete a guideline: its file moves to ``<folder>/.trash/`` and its index entry goes.

        Trusted callers only (an untrusted one gets PermissionDeniedError). The move is one
        atomic rename, done first: if the index delete fails afterwards, the next sync drops
        the entry, since files are the truth. Each forget is recorded as a JSON line in
        ``.trash/forgotten.jsonl`` (id, topic, text, time), so a deletion can be traced and the
        file restored by moving it back and running sync.
        """
        self._check_id(gid)
        _check_flag(trusted, "trusted")
        if not trusted:
            raise PermissionDeniedError(
                f"forgetting {gid} needs a trusted caller; an untrusted client can vote or "
                "propose rules, and a trusted reviewer removes them (skillbank guidelines "
                "reject/retire)")
        with self._lock, self.write_lock:
            self._refresh()
            g = self._items.get(gid)
            if g is None:
                raise NotFoundError(f"no guideline {gid!r}; find ids with search or list")
            trash = self.folder / ".trash"
            trash.mkdir(exist_ok=True)
            stamp = utcnow().strftime("%Y%m%dT%H%M%S%fZ")
            target = trash / f"{gid}-{stamp}.md"
            os.replace(g.path, target)  # atomic: the guideline is gone from disk in one step
            fsync_dir(Path(g.path).parent)
            record = {"id": gid, "topic": g.topic, "namespace": g.namespace, "status": g.status,
                      "text": g.text, "at": utcnow().isoformat(), "trash": target.name}
            with open(trash / "forgotten.jsonl", "a", encoding="utf-8") as log_file:
                log_file.write(json.dumps(record, ensure_ascii=False) + "\n")
            self._items.pop(gid, None)
            self._digests.pop(gid, None)
            self._files.pop(g.path, None)
            self._profiles.pop(gid, None)
            self._bags.pop(gid, None)
            self.index.delete([gid])
            note(self, "forget", "guideline", gid, namespace=g.namespace)
        return {"id": gid, "kind": "guideline", "forgotten": True, "trash": str(target)}


def _check_flag(value: Any, what: str) -> None:
    if not isinstance(value, bool):
        raise InvalidInputError(f"{what} must be true or false, got {value!r}")
