"""`skillbank migrate`'s later turns of a conversation: written only over the version they extend.

A conversation's later turn on the root arrives as the whole record it makes (`migrate._whole`),
and the deployment's log stores an `add` as the record's new version, whatever the deployment
held. Users met it (hunt-expimport #3, session 38): after a first run the conversation went on
in the team ("TEAM TURN: add catering") and on the root ("ROOT TURN: book flights"); the rerun
wrote the root's version over the team's, so the team's turn was gone, and the run said
"Imported 1 experience changes". A turn is now written only while the deployment's copy is
still the version the root's turn extends (as migrate put it there: its namespace, the lessons
the team forgot dropped). Otherwise the team changed it since: its version stands and the
report names the turn under skipped, as `experiences import` keeps a stored version and warns
"other-version". Neither side's steps are spliced into the other: a conversation that went two
ways is not one record any more, and nothing says which turn came first.
"""

from __future__ import annotations

import copy
from typing import Any

from skillbank.store.deltas import UPDATE, updated_id


def record_id(event: dict[str, Any]) -> str | None:
    """The id of the record a later turn writes (an `update`, or an `add` flagged "update")."""
    if event.get("op") == UPDATE:
        return updated_id(event)
    record = event.get("record") if event.get("op") == "add" else None
    if isinstance(record, dict) and event.get("update") and isinstance(record.get("id"), str):
        return record["id"]
    return None


def root_before(journal: Any, event: dict[str, Any], loc: str,
                seen: dict[str, dict[str, Any]]) -> dict[str, Any] | None:
    """The root's version of the record a later turn (`event`, at `loc`) extends, as the root
    holds it: the one this run read last (`seen`), else its `base`, else the last version
    before `loc` in the root's files (a turn the root wrote whole). None: not a later turn, or
    its earlier version is not in the root's files any more."""
    rid = record_id(event)
    if rid is None:
        return None
    if rid in seen:
        return seen[rid]
    if event.get("op") == UPDATE and isinstance(event.get("base"), str):
        version = journal.load_version(rid, event["base"])
        return version.record if version is not None and version.loc == event["base"] else None
    before = _loc_before(journal, rid, loc)
    version = journal.load_version(rid, before) if before else None
    return version.record if version is not None and version.loc == before else None


def _loc_before(journal: Any, rid: str, loc: str) -> str | None:
    """Where the root's files hold `rid`'s last version before `loc` ("<file>:<offset>")."""
    from skillbank.store.files.experiences import _names

    name, _, offset = loc.rpartition(":")
    needle, latest = rid.encode(), None
    for path in journal._files():
        if path.name > name:
            break
        at = 0
        with path.open("rb") as handle:
            for raw in handle:
                if path.name == name and at >= int(offset):
                    break
                if needle in raw and _names(raw) == rid:
                    latest = f"{path.name}:{at}"
                at += len(raw)
    return latest


def team_changed(conn: Any, deployment: str, rid: str, before: dict[str, Any] | None,
                 drop: set[str] | None) -> bool:
    """Whether the deployment's copy of `rid` is no longer `before` (the root's version the
    turn extends; `drop`: the texts of its lessons the team forgot, which the team dropped from
    its copy). A record the deployment does not hold, or a turn whose earlier version is
    unknown, is written as before."""
    if before is None:
        return False
    row = conn.execute("SELECT record FROM sb_experiences WHERE deployment = %s AND id = %s",
                       (deployment, rid)).fetchone()
    if row is None or not isinstance(row[0], dict):
        return False
    return _comparable(row[0], None) != _comparable(before, drop)


def _comparable(record: dict[str, Any], drop: set[str] | None) -> Any:
    """A record as both sides compare it: not its namespace (where a run put it, `--namespace`
    or not), without the lessons the team forgot, as PostgreSQL stores it (no NUL)."""
    from skillbank.store.postgres.db import without_nul

    out = copy.deepcopy(record)
    out.pop("namespace", None)
    if drop:
        from skillbank.forgetting import without_lessons

        without_lessons(out, drop)
    return without_nul(out)


def skipped_note(rid: str) -> str:
    """The report's line for a turn left out because the team changed the record since."""
    return (f"{rid}: a later turn of this conversation on the root, not imported: the "
            "deployment's version changed since it was imported (a turn recorded in the team); "
            "the deployment keeps its version (other-version)")
