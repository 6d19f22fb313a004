"""Rewrite an embedded Chroma's `chroma.sqlite3` without forgotten text, from a child process.

Why a child (hunt-mcpmany #1, session 24): `forget` used to open the file with Python's own
`sqlite3` module (clear the write-ahead log's metadata, merge FTS5, VACUUM) while Chroma's Rust
bindings, a second copy of SQLite linked into the same process, had it open. POSIX advisory
locks belong to a process, not to a connection: the two copies never saw each other's locks,
each deleted the journal the other was writing ("disk I/O error", code 5898), and closing the
Python connection dropped every lock the process held on the file, Chroma's included
(sqlite.org/howtocorrupt.html §2.2 and §2.1). With several MCP sessions at work the file was
damaged for good within seconds ("database disk image is malformed", `PRAGMA integrity_check`:
"Rowid 386 out of order"): the root's write lock orders skillbank's writes, but Chroma reads,
and the log it applies to its SQLite segment during a read, run outside it.

A child process has locks of its own, so SQLite's locking between processes applies: the child
waits while Chroma reads or writes (busy timeout, then a few more tries), and Chroma waits for
the child's transactions and `VACUUM` in turn. The module is stdlib only: the child runs it as
a script (`python -I -S chroma_erase.py`), with none of skillbank, numpy or Chroma imported.
"""

from __future__ import annotations

import json
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

#: Tries of a step that SQLite answered "database is locked" after its busy timeout.
TRIES = 5


def erase_in_child(path: Path, collection: str | None, ids: list[str], *,
                   timeout: float = 30.0) -> str | None:
    """Run `rewrite` on `path` in a child process; None when it succeeded, else why not.

    `timeout` is SQLite's busy timeout in the child (each step tries TRIES times); the child
    as a whole gets TRIES times that, and is killed past it (a VACUUM cut short leaves a hot
    journal, which the next opener rolls back: the file stays whole)."""
    job = json.dumps({"path": str(path), "collection": collection, "ids": ids,
                      "timeout": timeout})
    if not sys.executable:
        return "no Python interpreter to run the eraser with (sys.executable is empty)"
    try:
        done = subprocess.run([sys.executable, "-I", "-S", str(Path(__file__).resolve())],
                              input=job, capture_output=True, text=True,
                              timeout=timeout * (TRIES + 1) + 60, check=False)
    except (OSError, subprocess.SubprocessError) as exc:
        return f"{type(exc).__name__}: {exc}"
    if done.returncode != 0:
        said = (done.stderr or "").strip().splitlines()
        return said[-1] if said else f"the eraser exited with {done.returncode}"
    return None


def rewrite(path: str, collection: str | None, ids: list[str], timeout: float) -> None:
    """Clear the `metadata` of the ids' write-ahead log rows, merge the FTS5 index and VACUUM
    with `secure_delete` on (see `skillbank.forgetting`). Runs in the child process only."""
    import sqlite3

    con = sqlite3.connect(path, timeout=timeout, isolation_level=None)
    try:
        con.execute("PRAGMA secure_delete = ON")
        _retried(con, lambda: _clear_log(con, collection, ids))
        try:
            _retried(con, lambda: con.execute(
                "INSERT INTO embedding_fulltext_search(embedding_fulltext_search) "
                "VALUES('optimize')"))
        except sqlite3.OperationalError as exc:
            if "no such table" not in str(exc):  # an older layout without the FTS table
                raise
        _retried(con, lambda: con.execute("VACUUM"))
    finally:
        con.close()


def _clear_log(con: Any, collection: str | None, ids: list[str]) -> None:
    con.execute("BEGIN IMMEDIATE")
    try:
        for item in ids:
            pattern = item.replace("\\", "\\\\").replace("%", "\\%").replace("_", "\\_") + "#%"
            query = ("UPDATE embeddings_queue SET metadata = NULL WHERE metadata IS NOT NULL "
                     "AND (id = ? OR id LIKE ? ESCAPE '\\')")
            if collection:
                con.execute(query + " AND topic LIKE ?", (item, pattern, f"%{collection}"))
            else:
                con.execute(query, (item, pattern))
        con.execute("COMMIT")
    except BaseException:
        if con.in_transaction:
            con.execute("ROLLBACK")
        raise


def _retried(con: Any, step: Any) -> None:
    """`step()`, again after a pause while SQLite says the file is locked or busy (Chroma in the
    parent held it past the busy timeout, or a deadlock SQLite broke by failing us at once)."""
    import sqlite3

    for attempt in range(TRIES):
        try:
            step()
            return
        except sqlite3.OperationalError as exc:
            if "locked" not in str(exc) and "busy" not in str(exc) or attempt == TRIES - 1:
                raise
            if con.in_transaction:
                con.execute("ROLLBACK")
            time.sleep(0.05 * (attempt + 1))


def main() -> int:
    job = json.load(sys.stdin)
    try:
        rewrite(job["path"], job.get("collection"), list(job["ids"]), float(job["timeout"]))
    except Exception as exc:  # noqa: BLE001 - reported to the parent on stderr
        print(f"{exc}", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
