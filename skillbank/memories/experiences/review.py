"""Trust and removal: the quarantine of untrusted records, its review, and `forget`.

An experience recorded with `trusted=False` (an MCP client without trust, any untrusted face) is
stored with status "pending", and so are the lessons it brings or that are distilled from it:
recall filters on status "active", so nothing pending reaches `recall`, `context_for` or a
duplicate fold until a trusted caller approves it. `approve` and `forget` are single journal
events naming the record and the lesson records it brought, so a crash applies all of the
event or none of it (a torn line is never replayed), and `sync` on the next open honours them.
"""

from __future__ import annotations

import threading
from typing import Any, Callable

from skillbank import index_mirror
from skillbank.audit import note
from skillbank.forgetting import erase_experiences as erase
from skillbank.forgetting import erasing
from skillbank.errors import InvalidInputError, NotFoundError, PermissionDeniedError
from skillbank.index import HybridIndex
from skillbank.index_outage import ChromaUnavailableError
from skillbank.records import Experience, utcnow

class ReviewMixin:
    """`pending`, `approve`, `reject` and `forget` of `ExperienceMemory` (trusted callers)."""

    index: HybridIndex
    write_lock: threading.RLock
    #: Called with the ids whose text a forget (or a reject) removed, under the write lock:
    #: the forgotten records and the experience a forgotten lesson was taken out of. The bank
    #: sets it to delete the skill drafts drawn from them (memories never import each other):
    #: only the facade's `bank.forget` did, so `bank.experiences.forget` left the drafts, with
    #: the forgotten text, adoptable (hunt-drafts #2, session 26).
    on_forgotten: Callable[[list[str]], Any] | None = None

    def pending(self, namespace: str | None = None, limit: int = 50) -> list[Experience]:
        """Quarantined records waiting for review, newest first ("*": every namespace).

        Only those the caller may review (`Scope.can_review`): a contributor, trusted or not,
        gets none (see `skillbank.scope`)."""
        return self.list(namespace, limit=limit, status="pending")

    def _owned_lessons(self, record: Experience, status: str | None = None) -> list[str]:
        """Ids of the lesson records an experience brought (their `source` is its id), as the
        journal holds them where it can say (team mode: PostgreSQL), else as the index does.

        Not this worker's copy of the index alone: a lesson distilled on another worker after
        this one last read the change feed, or while Chroma was down, was left out of an
        approve (pending for good under an active experience) or a forget (its text kept;
        review 2, session 30, and session 31's review)."""
        if record.kind != "experience":
            return []
        held = self.journal.lessons_of(record.id)  # type: ignore[attr-defined]
        if held is not None:
            return sorted(i for i, s in held if status is None or s == status)
        self._catch_up_lessons(record.id)
        out = []
        for record_id in self.index.ids():
            meta = self.index.metadata(record_id) or {}
            if meta.get("kind") == "lesson" and meta.get("source") == record.id and \
                    (status is None or meta.get("status") == status):
                out.append(record_id)
        return sorted(out)

    def _catch_up_lessons(self, record_id: str) -> None:
        """Under the write lock, on a shared index whose journal keeps no table of records
        (processes of one root on a `chroma run` server): the lessons of `record_id` as the
        index holds them now. Not while the index is detached or quiet after a timeout: the
        record's own catch-up has just met the outage (one `chroma_timeout` is enough)."""
        if not getattr(self.index, "shared", False) or index_mirror.detached(self.index):
            return
        try:
            self.index.refresh(self.index.ids_where(
                {"$and": [{"kind": "lesson"}, {"source": record_id}]}))
        except ChromaUnavailableError:
            pass  # as `_catch_up`: the decision goes on with this worker's copy

    def _checked(self, record_id: Any, verb: str) -> Experience:
        if not isinstance(record_id, str) or not record_id.strip():
            raise InvalidInputError(
                f"{verb} takes an id such as 'exp-…' or 'lsn-…' (as `pending` or `recall` show)")
        # As the shared index holds it now, under the lock: another worker may have approved,
        # rejected or forgotten it since this one last looked (hunt-teamclock #2, session 30).
        self._catch_up([record_id.strip()])
        record = self._get(record_id)  # type: ignore[attr-defined]  # out of scope: not found
        scope = self._scope()  # type: ignore[attr-defined]
        allowed = scope.can_change(record.namespace) if verb == "forget" \
            else scope.can_review(record.namespace)
        if not allowed and record.status == "pending":
            # A pending record it may not decide on is not found, as to `get`: "needs the
            # reviewer role" told a contributor another client's pending run has this id,
            # where a made-up id is not found (session 33).
            raise NotFoundError(f"no experience or lesson with id {record_id.strip()!r}")
        if not allowed:
            raise PermissionDeniedError(
                f"{verb} {record.id} needs the reviewer role for namespace {record.namespace!r}"
                f"{'' if verb != 'forget' else ' (or a trusted contributor of it)'}; "
                f"{scope.principal} is {'an untrusted ' if not scope.trusted else 'a '}"
                f"{scope.role.value}")
        return record

    def approve(self, record_id: str) -> dict[str, Any]:
        """Make a pending record active (an experience with its pending lessons): recall
        serves it from now on. Approving an active record changes nothing; a retired one is
        refused. Returns {"id", "kind", "status", "approved": [ids made active]}."""
        with self.write_lock:
            record = self._checked(record_id, "approve")
            if record.status == "retired":
                raise InvalidInputError(f"{record.id} is retired, not pending: nothing to approve")
            if record.status == "active":
                return {"id": record.id, "kind": record.kind, "status": "active", "approved": []}
            lessons = self._owned_lessons(record, status="pending")
            self._append([{"op": "approve", "id": record.id, "lessons": lessons,
                           "at": utcnow().isoformat()}])
            note(self, "approve", record.kind, record.id, namespace=record.namespace)
        return {"id": record.id, "kind": record.kind, "status": "active",
                "approved": [record.id, *lessons]}

    def reject(self, record_id: str) -> dict[str, Any]:
        """Drop a pending record (and its lessons) as `forget` does; an active one is refused
        (use `forget` for that, so a slip cannot delete reviewed memory)."""
        with self.write_lock:
            record = self._checked(record_id, "reject")
            if record.status != "pending":
                raise InvalidInputError(
                    f"{record.id} is {record.status}, not pending: only pending records are "
                    "rejected; to delete a reviewed record, forget it by id instead")
            result = self._forget(record, reason="rejected")
            note(self, "reject", record.kind, record.id, namespace=record.namespace)
        return {**result, "rejected": True}

    def forget(self, record_id: str) -> dict[str, Any]:
        """Delete an experience or lesson by id: it leaves the index and is never served again.

        Forgetting an experience also forgets the lesson records it brought (`source` is its
        id); forgetting a lesson leaves its experience, minus that lesson's text in its own
        `lessons` field. One `forget` journal event, so a crash cannot half-apply it; then its
        `add` lines are overwritten in the journal and its text erased from Chroma's file
        (`skillbank.forgetting`). Unknown id: NotFoundError. Returns
        {"id", "kind": "experience" | "lesson", "forgotten": True, "status" (before),
        "lessons": [lesson ids forgotten with it]}.
        """
        with self.write_lock:
            record = self._checked(record_id, "forget")
            result = self._forget(record, reason="forget")
            note(self, "forget", record.kind, record.id, namespace=record.namespace)
            return result

    def _forget(self, record: Experience, *, reason: str) -> dict[str, Any]:
        """Journal one `forget` event for a record and its lessons (write lock held)."""
        lessons = self._owned_lessons(record)
        with erasing(self, [record.id, *lessons]):  # a crash in here: the next sync finishes
            event = {"op": "forget", "id": record.id, "lessons": lessons, "reason": reason,
                     "at": utcnow().isoformat()}
            if record.kind == "lesson" and record.source:  # its text is in that record too
                event["source"] = record.source
            self._append([event])
            erase(self, [record.id, *lessons], record)  # its text leaves the journal, Chroma
            if self.on_forgotten is not None:  # and whatever was drawn from it (skill drafts)
                self.on_forgotten(_text_left([record.id, *lessons], record))
        return {"id": record.id, "kind": record.kind, "forgotten": True,
                "status": record.status, "lessons": lessons}


def _text_left(ids: list[str], record: Experience) -> list[str]:
    """The ids whose text a forget removed: the forgotten ones, and for a lesson its source
    experience, whose `lessons` held the text a draft drawn from it quotes (a draft's
    `sources` name experiences only, so a lesson's own id never matched: hunt-drafts #9)."""
    parent = [record.source] if record.kind == "lesson" and record.source else []
    return [*ids, *parent]
