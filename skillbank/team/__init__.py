"""Team mode: a bank whose shared state lives in PostgreSQL instead of the root's files.

With a `database_url` setting (`SKILLBANK_DATABASE_URL`), `attach_store` gives an opened bank
the PostgreSQL column of `skillbank.store` for what several workers on several machines must
share at once:

- the write lock: a PostgreSQL advisory lock per deployment (not `<root>/.write.lock`);
- the change feed: LISTEN/NOTIFY (not `<root>/.changes/`), so another worker re-reads a memory
  within a second of an acknowledged write;
- usage counters: one row per item, incremented in place, read by every worker at once
  (the file log is summed only when a process opens it);
- the audit log: a table.

The memories do not change: they were already handed their lock and counters by the facade,
and keep using them through the same methods. Without a `database_url` nothing here is imported
(psycopg is the optional extra `skillbank[team]`). The memories' records are in the store too
(the bank hands each memory its part): the experience journal, guideline records, skill drafts
and forgotten ids; skills are served from a git repository (docs/team.md).
"""

from __future__ import annotations

from typing import Any

MEMORIES = ("skills", "experiences", "guidelines")


def attach_store(bank: Any, write_lock_timeout: float) -> Any:
    """Move the bank's lock, change feed, usage counters and audit log onto PostgreSQL."""
    from skillbank.index_ownership import deployment_of
    from skillbank.store import open_store

    store = open_store(bank.root, bank.settings.database_url,
                       deployment=deployment_of(bank.settings, shared=True),
                       statement_timeout=bank.settings.database_statement_timeout)
    bank.store = store
    bank.write_lock = store.write_lock(timeout=write_lock_timeout)
    bank.changes = store.change_feed()
    for memory in MEMORIES:
        bank._usage_logs[memory] = store.usage(memory)
    bank.audit = store.audit()
    return store
