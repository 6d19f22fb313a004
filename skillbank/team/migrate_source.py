"""Which source a root is in `sb_imports`, for `skillbank migrate` (`skillbank.team.migrate`).

`sb_imports` keeps, per deployment and source, how far each part of a root was imported (the
journal's byte offsets, the number of audit events, the usage counts). The source is the root's
`.skillbank-id`, and two defects users met came from trusting that alone:

- A root copied with `cp -r` (a starter root handed to a colleague; docs/team.md names `cp -r`
  as a way to get a root) carries the original's id. Migrated into the same deployment, the
  copy was read from the original's offsets: its own experiences and audit events were skipped
  and the run said "Nothing to import". Now the place the id was first imported from is kept
  (`origin`: the root's folder and the id file's inode, as `index_ownership.check_not_a_copy`
  tells a copy); a root with the same id whose folder and id file both differ is a copy and is
  imported as a source of its own (`<id>@<folder>`), from its beginning, unless the original's
  folder no longer holds a root with that id (then the root was moved to a new disk or
  restored to a new path, and its origin is updated). What it shares with
  the original (the history before the copy) is matched by content where the part allows it
  (`shared`: the journal's lines, the audit events and the drafts ledger), so it is not
  imported twice. Why not refuse the copy: refusing leaves its records behind until someone
  renames the id, and a rename would import the same shared history anyway; importing it as
  its own source loses nothing and needs nobody.
- A root without an id file (made by an older skillbank, or the file lost) was keyed by its
  path, and the first command that created the id made the next run import everything again
  (usage and audit doubled). Migrate now creates the id itself (it holds the root's write
  lock) and takes over what an earlier run recorded under the root's path.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any

ORIGIN = "origin"  # the `sb_imports` part that records where a source's id was imported from


@dataclass(frozen=True)
class Source:
    """A root as `sb_imports` knows it."""

    key: str
    #: The root's id was first imported from another root (this one is a copy of it): what the
    #: two share is matched by content, not by position.
    copy_of: str | None = None


def _here(root: Path) -> dict[str, Any]:
    """The root's folder, its id file's inode (a move keeps the inode, a copy does not) and
    the machine (`moved_away` looks for the original folder only on the one it was on)."""
    import socket

    from skillbank.index_ownership import IDENTITY_FILE

    return {"path": str(root.resolve()), "ino": (root / IDENTITY_FILE).stat().st_ino,
            "host": socket.gethostname()}


def _same_root(origin: Any, here: dict[str, Any]) -> bool:
    if not isinstance(origin, dict):
        return False
    return origin.get("path") == here["path"] or origin.get("ino") == here["ino"]


def resolve(conn: Any, root: Path, deployment: str) -> Source:
    """The source `root` is imported as (call with the deployment's migrate lock held, and the
    root's write lock: the id file may be created here)."""
    from psycopg.types.json import Jsonb

    from skillbank.index_ownership import moved_away, root_identity

    legacy = str(root.resolve())  # what runs before the id was written keyed the root by
    identity = root_identity(root)
    here = _here(root)
    _adopt_legacy(conn, deployment, legacy, identity)
    origin = _origin(conn, deployment, identity)
    as_copy = f"{identity}@{here['path']}"
    if origin is None or _same_root(origin, here):
        key, copy_of = identity, None
    elif _origin(conn, deployment, as_copy) is None and moved_away(origin, identity):
        key, copy_of = identity, None  # moved: the origin is updated to where it is now
    else:  # a copy (kept as one even once its original is gone: its offsets are its own)
        key, copy_of = as_copy, str(origin.get("path"))
    if _origin(conn, deployment, key) != here:
        conn.execute(
            "INSERT INTO sb_imports (deployment, source, part, position) VALUES (%s, %s, %s, %s) "
            "ON CONFLICT (deployment, source, part) DO UPDATE SET position = excluded.position",
            (deployment, key, ORIGIN, Jsonb(here)))
    return Source(key, copy_of)


def _origin(conn: Any, deployment: str, key: str) -> Any:
    row = conn.execute("SELECT position FROM sb_imports WHERE deployment = %s AND source = %s "
                       "AND part = %s", (deployment, key, ORIGIN)).fetchone()
    return row[0] if row else None


def _adopt_legacy(conn: Any, deployment: str, legacy: str, identity: str) -> None:
    """Rows an earlier run kept under the root's path (it had no id then) move to its id,
    unless the id has rows of its own."""
    if legacy == identity:
        return
    held = conn.execute("SELECT 1 FROM sb_imports WHERE deployment = %s AND source = %s "
                        "LIMIT 1", (deployment, identity)).fetchone()
    if held is None:
        conn.execute("UPDATE sb_imports SET source = %s WHERE deployment = %s AND source = %s",
                     (identity, deployment, legacy))


def imported_events(conn: Any, deployment: str) -> set[str]:
    """The digests of the deployment's journal events (a copy's shared lines are among them)."""
    return {row[0] for row in conn.execute(
        "SELECT digest FROM sb_experience_events WHERE deployment = %s AND digest IS NOT NULL",
        (deployment,))}


def imported_audit(conn: Any, deployment: str) -> set[tuple[Any, ...]]:
    """The deployment's audit events, as the fields a copy's shared events repeat."""
    return {tuple(row) for row in conn.execute(
        "SELECT at, principal, action, kind, item_id FROM sb_audit WHERE deployment = %s",
        (deployment,))}


def audit_key(event: Any) -> tuple[Any, ...]:
    from datetime import datetime

    at = datetime.fromisoformat(event.at) if isinstance(event.at, str) else event.at
    return (at, event.principal, event.action, event.kind, event.id)


def imported_ledger(conn: Any, deployment: str) -> list[Any]:
    return [row[0] for row in conn.execute(
        "SELECT entry FROM sb_draft_ledger WHERE deployment = %s", (deployment,))]
