"""Skill drafts on PostgreSQL: `sb_drafts` (a row per draft with its files and source ids) and
`sb_draft_ledger` (every proposal, adoption and discard), shared by every worker.

A person reads and edits a draft as files, and adoption copies its folder, so each worker keeps
a working copy under its own `<root>/drafts/`: `refresh` writes the pending drafts PostgreSQL
holds there and removes the copies of drafts closed or forgotten elsewhere; `put` and `close`
write through. Forget means gone: `erase` deletes the rows of drafts drawn from forgotten
experiences and drops their names from the ledger (one transaction); each worker's copy goes at
its next `refresh` (the forgetting worker's at once).
"""

from __future__ import annotations

import shutil
from pathlib import Path
from typing import Any

from psycopg.types.json import Jsonb

from skillbank.store.postgres.db import Database

META_FILE = ".draft.json"


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
                        (self.deployment, Jsonb(entry)))

    def refresh(self) -> None:
        """Make `<root>/drafts/` hold exactly the pending drafts PostgreSQL holds."""
        from skillbank.fsutil import atomic_write, safe_join

        rows = self.db.execute("SELECT name, files FROM sb_drafts WHERE deployment = %s "
                               "AND NOT closed", (self.deployment,))
        pending = {name: files for name, files in rows}
        for name, files in pending.items():
            folder = self.folder / name
            try:
                here = (folder / META_FILE).read_text("utf-8")
            except OSError:
                here = None
            if here == files.get(META_FILE):
                continue  # this worker's copy (a person may have edited its SKILL.md)
            for rel, text in files.items():
                atomic_write(safe_join(folder, rel), text)
        if self.folder.is_dir():
            for folder in self.folder.iterdir():
                if folder.is_dir() and not folder.name.startswith(".") and \
                        folder.name not in pending and (folder / META_FILE).exists():
                    shutil.rmtree(folder, ignore_errors=True)  # closed or forgotten elsewhere

    def put(self, name: str, files: dict[str, str], sources: list[str]) -> None:
        self.db.execute(
            "INSERT INTO sb_drafts (deployment, name, closed, files, sources) "
            "VALUES (%s, %s, false, %s, %s) ON CONFLICT (deployment, name, closed) DO UPDATE "
            "SET files = excluded.files, sources = excluded.sources, at = now()",
            (self.deployment, name, Jsonb(files), list(sources)))

    def close(self, name: str, status: str) -> None:
        """A closed draft keeps no text here: adopted, it is a skill; discarded, it is gone."""
        self.db.execute("DELETE FROM sb_drafts WHERE deployment = %s AND name = %s",
                        (self.deployment, name))

    def erase(self, ids: set[str]) -> list[str]:
        """Delete the drafts drawn from `ids` and their names from the ledger (adopted names
        stay: they are skills' names now); returns the names blanked."""
        wanted = sorted(ids)
        if not wanted:
            return []
        with self.db.transaction() as conn:
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
                conn.execute("UPDATE sb_draft_ledger SET entry = %s WHERE seq = %s",
                             (Jsonb({k: v for k, v in entry.items() if k != "name"}), seq))
        return sorted(names)
