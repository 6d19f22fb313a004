"""The store: where the memories' records, counters, locks and change feed live.

One interface (`skillbank.store.base`), two columns, each in its own folder:

    skillbank/store/files/      the embedded default: the root's files (today's behaviour)
    skillbank/store/postgres/   team mode: PostgreSQL (psycopg 3 + a pool; migrations,
                                advisory locks, LISTEN/NOTIFY)

`open_store(settings)` picks one: a `database_url` setting means PostgreSQL, anything else the
root's files. Importing this package imports neither psycopg nor Chroma: the PostgreSQL column is
imported only when a database URL is given, so `import skillbank` stays light.
"""

from __future__ import annotations

from typing import Any

from skillbank.store.base import (  # noqa: F401 - the interface, re-exported
    ChangeFeed,
    ExperienceLog,
    Store,
    StoreUnavailableError,
    UsageCounters,
    WriteLock,
)


def open_store(root: Any, database_url: str | None = None, *, deployment: str | None = None,
               **options: Any) -> Store:
    """The files store of `root`, or the PostgreSQL store at `database_url` (team mode)."""
    if database_url:
        from skillbank.store.postgres import PostgresStore

        return PostgresStore(database_url, deployment=deployment or "default", **options)
    from skillbank.store.files import FileStore

    return FileStore(root)
