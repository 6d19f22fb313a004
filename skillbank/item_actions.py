"""What any remembered item can be asked by its id: rate it, forget it, accept its votes.

The id's prefix says which memory holds it (`gl-…` a guideline, `exp-…`/`lsn-…` an
experience or lesson, `skill:<name>` a skill); these functions route there and apply the
caller's trust and role once, so every face (CLI, MCP, adapters, a client of another process)
gets the same answer and the same refusal. Kept apart from `skillbank.bank`, which opens and
owns a root: this is what is done to what the root holds.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from skillbank.skill_ids import skill_name

if TYPE_CHECKING:
    from skillbank.bank import Skillbank


def accept_votes(bank: "Skillbank", item_id: str) -> dict[str, Any]:
    """`Skillbank.accept_votes`: only a trusted reviewer of the item's namespace may."""
    from skillbank import scope as scopes
    from skillbank.audit import note as audit_note
    from skillbank.errors import InvalidInputError, PermissionDeniedError

    if not isinstance(item_id, str) or not item_id:
        raise InvalidInputError("id must be a non-empty string such as 'exp-…' or "
                                "'skill:<name>'")
    scope = bank.caller_scope()
    if item_id.startswith("skill:"):
        name = skill_name(item_id)
        bank.skills._summary(name)  # NotFoundError for an unknown skill
        if not (scope.trusted and scope.role.allows(scopes.Role.REVIEWER)):
            raise PermissionDeniedError(
                f"accepting votes on {item_id} needs the reviewer role; {scope.principal} "
                f"is a {scope.role.value}")
        usage = bank.skills.usage.accept(name)
        audit_note(bank, "accept", "skill", item_id)
        return {"id": item_id, "kind": "skill", "usage": usage.model_dump()}
    if item_id.startswith(("exp-", "lsn-")):
        record = bank.experiences.get(item_id)  # out of scope: not found
        if not scope.can_review(record.namespace):
            raise PermissionDeniedError(
                f"accepting votes on {item_id} needs the reviewer role for namespace "
                f"{record.namespace!r}; {scope.principal} is a {scope.role.value}")
        usage = bank.experiences.usage.accept(record.id)
        audit_note(bank, "accept", record.kind, record.id, namespace=record.namespace)
        return {"id": record.id, "kind": "experience", "usage": usage.model_dump()}
    raise InvalidInputError(
        f"unknown id {item_id!r}: votes are kept apart for 'exp-…', 'lsn-…' and "
        "'skill:<name>' (a guideline's untrusted votes stay in its untrusted counters)")

def rate(bank: "Skillbank", item_id: str, helpful: bool, *, trusted: bool = True) -> dict[str, Any]:
    """`Skillbank.rate`: every memory keeps an untrusted vote apart (`counted` false)."""
    from skillbank import scope as scopes
    from skillbank.errors import InvalidInputError

    if not isinstance(helpful, bool) or not isinstance(trusted, bool):
        raise InvalidInputError("helpful and trusted must be true or false")
    if not isinstance(item_id, str) or not item_id:
        raise InvalidInputError("id must be a non-empty string such as 'gl-…', 'exp-…' or 'skill:<name>'")
    counted = scopes.caller("default", trusted).trusted  # every memory keeps these apart
    if item_id.startswith("skill:"):
        name = skill_name(item_id)
        bank.skills.record_use(name, success=helpful, trusted=trusted)
        return {"id": item_id, "kind": "skill", "helpful": helpful, "counted": counted}
    if item_id.startswith("gl-"):
        guideline = bank.guidelines.vote(item_id, helpful=helpful, trusted=trusted)
        return {"id": item_id, "kind": "guideline", "helpful": helpful,
                "status": guideline.status, "counted": counted}
    if item_id.startswith(("exp-", "lsn-")):
        bank.experiences.mark(item_id, helped=helpful, trusted=trusted)
        return {"id": item_id, "kind": "experience", "helpful": helpful, "counted": counted}
    raise InvalidInputError(
        f"unknown id {item_id!r}: rate ids as shown in memory context, e.g. 'gl-…' "
        "(guideline), 'exp-…' or 'lsn-…' (experience or lesson), 'skill:<name>'")

def forget(bank: "Skillbank", item_id: str, *, trusted: bool = True) -> dict[str, Any]:
    """`Skillbank.forget`: trusted callers only; drafts written from a forgotten
    experience go with it, and a skill leaves no copy in the trash."""
    from skillbank.errors import InvalidInputError, PermissionDeniedError

    if not isinstance(trusted, bool):
        raise InvalidInputError("trusted must be true or false")
    if not isinstance(item_id, str) or not item_id:
        raise InvalidInputError("id must be a non-empty string such as 'gl-…', 'exp-…' or 'skill:<name>'")
    from skillbank import scope as scopes

    if not scopes.caller(bank.settings.namespace, trusted).trusted:
        raise PermissionDeniedError(
            f"forgetting {item_id} needs a trusted caller; an untrusted client cannot delete "
            "memory; a trusted user can (the CLI, or a client started with trust)")
    if item_id.startswith("gl-"):
        return bank.guidelines.forget(item_id, trusted=True)
    if item_id.startswith(("exp-", "lsn-")):
        result = bank.experiences.forget(item_id)  # its drafts too (`erase_drafts_of`)
        return result if isinstance(result, dict) else {"id": item_id, "kind": "experience",
                                                         "forgotten": True}
    if item_id.startswith("skill:"):
        from skillbank.forgetting import erase_skill
        from skillbank.memories.skills.staging import remove_staging_copies

        name = skill_name(item_id)
        versions = bank.skills.known_versions(name)  # before `delete` resets its timeline
        erase_skill(bank.skills, name, bank.skills.delete(name), versions)  # gone, no trash
        with bank.write_lock:  # an adopt killed mid-copy kept one (hunt-drafts #4, session 26)
            remove_staging_copies(bank.skills.writable_root)
        return {"id": item_id, "kind": "skill", "forgotten": True,
                "detail": "deleted for good (no copy kept in the trash)"}
    raise InvalidInputError(
        f"unknown id {item_id!r}: forget ids as shown in memory context, e.g. 'gl-…' "
        "(guideline), 'exp-…' or 'lsn-…' (experience or lesson), 'skill:<name>'")


def erase_drafts_of(bank: "Skillbank", ids: list[str]) -> int:
    """Delete the skill drafts drawn from `ids` (pending, closed, and an interrupted adopt's
    staging copy): the experience memory calls it after every forget and reject, whichever
    API asked, under the write lock (`ExperienceMemory.on_forgotten`). Only the facade's
    `bank.forget` used to, so `bank.experiences.forget` left them, adoptable, with the
    forgotten text (hunt-drafts #2, #4, session 26). Returns the number of drafts deleted."""
    from skillbank.forgetting import erase_drafts
    from skillbank.memories.skills.staging import remove_staging_copies

    skills = bank.skills
    removed = erase_drafts(skills.drafts_root, ids, audit=bank.audit, drafts=skills.draft_store)
    remove_staging_copies(skills.writable_root)
    return removed
