"""Skill drafts on PostgreSQL: `sb_drafts` (a row per draft with its files and source ids) and
`sb_draft_ledger` (every proposal, adoption and discard), shared by every worker.

A person reads and edits a draft as files, and adoption copies its folder, so each worker keeps
a working copy under its own `<root>/drafts/`. The row is the draft: `put` writes through (a
proposal, or a person's edit through `edit_draft`), and every read of the drafts starts with
`refresh`, one query, so any worker's next read has an acknowledged edit (no change feed is
needed: nothing caches a draft between reads). `refresh` makes the working copy match the row,
and tells a person's edit of the working copy from a stale copy by the digest of the row it
was last written from (`<root>/drafts/.synced/<name>`): a copy changed since that row, whose
row did not change, is an edit, written to the row (compare-and-swap on the row as read); a
copy changed while the row changed too keeps the edit under `.conflicts/<name>-<ms>/` and takes
the row's text (nothing lost, the first acknowledged edit wins). Drafts closed or forgotten
elsewhere leave the working copy. Forget means gone: `erase` deletes the rows of drafts drawn
from forgotten experiences and drops their names from the ledger (one transaction); each
worker's copy goes at its next `refresh` (the forgetting worker's at once).
"""

from __future__ import annotations

import hashlib
import json
import logging
import shutil
import time
from pathlib import Path
from typing import Any

from psycopg.types.json import Jsonb

from skillbank.store.postgres.db import Database

log = logging.getLogger("skillbank.store.postgres")
META_FILE = ".draft.json"
SYNCED = ".synced"
CONFLICTS = ".conflicts"


def digest(files: dict[str, str]) -> str:
    """One draft's files (relative path -> text), as one comparable value."""
    return hashlib.sha256(json.dumps(files, sort_keys=True, ensure_ascii=False)
                          .encode("utf-8")).hexdigest()


def read_folder(folder: Path) -> dict[str, str] | None:
    """A working copy's files (relative path -> text); None when it is not there."""
    if not folder.is_dir():
        return None
    return {p.relative_to(folder).as_posix(): p.read_text("utf-8", errors="replace")
            for p in sorted(folder.rglob("*")) if p.is_file() and not p.is_symlink()}


class PostgresDrafts:
    def __init__(self, db: Database, deployment: str, folder: str | Path) -> None:
        self.db = db
        self.deployment = deployment
        self.folder = Path(folder)

    def ledger(self) -> list[dict[str, Any]]:
        rows = self.db.execute("SELECT entry FROM sb_draft_ledger WHERE deployment = %s "
                               "ORDER BY seq", (self.deployment,))
        return [r[0] for r in rows if isinstance(r[0], dict)
                and isinstance(r[0].get("sources"), list)]

    def note(self, entry: dict[str, Any]) -> None:
        self.db.execute("INSERT INTO sb_draft_ledger (deployment, entry) VALUES (%s, %s)",
                        (self.deployment, Jsonb(entry)), fenced=True)

    def refresh(self) -> None:
        """Make `<root>/drafts/` hold exactly the pending drafts PostgreSQL holds, writing a
        person's edit of the working copy to its row first (see the module docstring)."""
        rows = self.db.execute("SELECT name, files FROM sb_drafts WHERE deployment = %s "
                               "AND NOT closed", (self.deployment,))
        pending = {name: files for name, files in rows}
        for name, files in pending.items():
            self._sync(name, files)
        if self.folder.is_dir():
            for folder in self.folder.iterdir():
                if folder.is_dir() and not folder.name.startswith(".") and \
                        folder.name not in pending and (folder / META_FILE).exists():
                    shutil.rmtree(folder, ignore_errors=True)  # closed or forgotten elsewhere
                    self._mark(folder.name, None)

    def _sync(self, name: str, row: dict[str, str]) -> None:
        folder = self.folder / name
        here = read_folder(folder)
        if here == row:
            if self._base(name) != digest(row):
                self._mark(name, row)
            return
        base = self._base(name)
        if here is not None and META_FILE in here:
            if base is None:  # a copy written before bases were kept: an edit and a stale
                base = ""  # copy look alike, so the row (acknowledged) wins, the copy is kept
            if base == digest(row):  # only the working copy changed: a person's edit
                if self._publish(name, row, here):
                    return
                fresh = self.db.execute("SELECT files FROM sb_drafts WHERE deployment = %s "
                                        "AND name = %s AND NOT closed", (self.deployment, name))
                if fresh and fresh[0][0] == here:  # another read here wrote this very edit
                    self._mark(name, here)
                    return
                self._keep_conflict(name, here)  # another edit was saved meanwhile
                if not fresh:
                    return  # closed meanwhile: the next refresh removes the copy
                row = fresh[0][0]
            elif digest(here) != base:
                self._keep_conflict(name, here)  # both changed: the row's edit came first
        self._write(name, row, here)

    def _publish(self, name: str, row: dict[str, str], here: dict[str, str]) -> bool:
        """Write the working copy's edit to the row, unless the row changed since it was read."""
        from psycopg.types.json import Jsonb

        cur = self.db.execute(
            "UPDATE sb_drafts SET files = %s, at = now() WHERE deployment = %s AND name = %s "
            "AND NOT closed AND files = %s RETURNING name",
            (Jsonb(here), self.deployment, name, Jsonb(row)), fenced=True)
        if cur:
            self._mark(name, here)
            log.info("skillbank: draft %s edited in %s; written to PostgreSQL", name, self.folder)
        return bool(cur)

    def _keep_conflict(self, name: str, here: dict[str, str]) -> None:
        from skillbank.fsutil import atomic_write, safe_join

        kept = self.folder / CONFLICTS / f"{name}-{int(time.time() * 1000)}"
        for rel, text in here.items():
            atomic_write(safe_join(kept, rel), text)
        log.warning("skillbank: draft %s was edited here while another edit was saved; this "
                    "copy's edit is kept in %s and the saved one is in %s", name, kept,
                    self.folder / name)

    def _write(self, name: str, row: dict[str, str], here: dict[str, str] | None) -> None:
        from skillbank.fsutil import atomic_write, safe_join

        folder = self.folder / name
        for rel, text in row.items():
            atomic_write(safe_join(folder, rel), text)
        for rel in set(here or {}) - set(row):
            (folder / rel).unlink(missing_ok=True)
        self._mark(name, row)

    def _base(self, name: str) -> str | None:
        try:
            return (self.folder / SYNCED / name).read_text("ascii").strip() or None
        except (OSError, UnicodeDecodeError):
            return None

    def _mark(self, name: str, files: dict[str, str] | None) -> None:
        """Note which row the working copy was last written from (None: no copy)."""
        from skillbank.fsutil import atomic_write

        path = self.folder / SYNCED / name
        if files is None:
            path.unlink(missing_ok=True)
        else:
            atomic_write(path, digest(files) + "\n")

    def put(self, name: str, files: dict[str, str], sources: list[str]) -> None:
        self.db.execute(
            "INSERT INTO sb_drafts (deployment, name, closed, files, sources) "
            "VALUES (%s, %s, false, %s, %s) ON CONFLICT (deployment, name, closed) DO UPDATE "
            "SET files = excluded.files, sources = excluded.sources, at = now()",
            (self.deployment, name, Jsonb(files), list(sources)), fenced=True)
        self._mark(name, files)

    def close(self, name: str, status: str) -> None:
        """A closed draft keeps no text here: adopted, it is a skill; discarded, it is gone."""
        self.db.execute("DELETE FROM sb_drafts WHERE deployment = %s AND name = %s",
                        (self.deployment, name), fenced=True)
        self._mark(name, None)

    def erase(self, ids: set[str]) -> list[str]:
        """Delete the drafts drawn from `ids` and their names from the ledger (adopted names
        stay: they are skills' names now); returns the names blanked."""
        wanted = sorted(ids)
        if not wanted:
            return []
        with self.db.transaction(fenced=True) as conn:
            return self.erase_in(conn, wanted)

    def erase_in(self, conn: Any, ids: list[str]) -> list[str]:
        """`erase` inside the caller's transaction (`skillbank migrate` carries a forget
        made on an embedded root with the rest of its import)."""
        wanted = sorted(ids)
        conn.execute("DELETE FROM sb_drafts WHERE deployment = %s AND sources && %s",
                     (self.deployment, wanted))
        rows = conn.execute("SELECT seq, entry FROM sb_draft_ledger WHERE deployment = %s",
                            (self.deployment,)).fetchall()
        adopted = {e.get("name") for _, e in rows if e.get("op") == "adopted"}
        names: set[str] = set()
        for seq, entry in rows:
            sources = entry.get("sources") or []
            name = entry.get("name")
            if name and name not in adopted and set(map(str, sources)) & set(wanted):
                names.add(name)
        for seq, entry in rows:
            if entry.get("name") in names:
                kept = {k: v for k, v in entry.items() if k not in ("name", "skill")}
                conn.execute("UPDATE sb_draft_ledger SET entry = %s WHERE seq = %s",
                             (Jsonb(kept), seq))
        return sorted(names)
