"""The change feed on PostgreSQL: LISTEN/NOTIFY instead of `<root>/.changes/*.log`.

`wrote(kind)` notifies `skillbank_changes` (in a transaction of its own, or in the write's, as
the guideline records do), so the notification goes out exactly when the write it announces is
committed. Nothing is stored: no reader ever read a change back from a table (the listener
learns from NOTIFY, and after a reconnect flags everything instead of replaying), so the rows
`sb_changes` once got on every write only grew; migration 5 empties it.
Each store holds one listening connection in a daemon thread; a notification from another
token of the same deployment sets that memory's flag, and `others_wrote(kind)` reads and
clears it — no query on the read path, and another worker learns of a write within
milliseconds (the acceptance bound is 1 s).

Notifications are not queued while a listener is disconnected, so after the connection drops
(PostgreSQL restarted) the listener reconnects and flags every memory as changed: a worker may
re-read once for nothing, never miss a write.
"""

from __future__ import annotations

import json
import logging
import secrets
import threading
import time

import psycopg

from skillbank.store.postgres.db import Database

log = logging.getLogger("skillbank.store.postgres")
CHANNEL = "skillbank_changes"
ALL = "*"
#: Longest id list sent in a notification (PostgreSQL caps a payload at 8000 bytes).
MAX_IDS_BYTES = 7000


def _ids(listed: str) -> "set[str] | None":
    if listed == "*":
        return None
    try:
        found = json.loads(listed)
    except ValueError:
        return None
    return {str(i) for i in found} if isinstance(found, list) else None


class PostgresChangeFeed:
    def __init__(self, db: Database, deployment: str) -> None:
        self.db = db
        self.deployment = deployment
        self.token = secrets.token_hex(8)
        self._lock = threading.Lock()
        # Per memory: the ids other workers wrote since this one last took them, or None for
        # "unknown, re-read everything" (no ids sent, too many, or the listener reconnected).
        self._changed: dict[str, set[str] | None] = {}
        self._started: set[str] = set()
        self._stop = threading.Event()
        self._listening = threading.Event()
        self._thread = threading.Thread(target=self._listen, daemon=True,
                                        name="skillbank-listen")
        self._thread.start()
        self._listening.wait(timeout=db.timeout)

    # Writers ------------------------------------------------------------------------------------
    def start(self, kind: str) -> None:
        with self._lock:
            self._started.add(kind)
            self._changed.pop(kind, None)

    def wrote(self, kind: str, ids: list[str] | None = None) -> None:
        """Announce a committed write; with the `ids` it touched, readers refresh only those."""
        listed = "*" if ids is None else json.dumps(ids, separators=(",", ":"))
        if len(listed) > MAX_IDS_BYTES:
            listed = "*"  # NOTIFY payloads stop at 8000 bytes: say "everything"
        with self.db.transaction() as conn:
            conn.execute("SELECT pg_notify(%s, %s)",
                         (CHANNEL, f"{self.deployment}\t{kind}\t{self.token}\t{listed}"))

    # Readers ------------------------------------------------------------------------------------
    def others_wrote(self, kind: str) -> bool:
        with self._lock:
            return self._changed.pop(kind, False) is not False

    def take(self, kind: str) -> "set[str] | None | bool":
        """What other workers wrote to `kind` since the last call: False (nothing), a set of
        item ids (refresh just those), or None (re-read everything)."""
        with self._lock:
            return self._changed.pop(kind, False)

    def wait(self, kind: str, timeout: float) -> bool:
        """Block until another process writes to `kind` (or `timeout` passes)."""
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            if self.others_wrote(kind):
                return True
            time.sleep(0.01)
        return self.others_wrote(kind)

    def _flag(self, kind: str, ids: "set[str] | None" = None) -> None:
        with self._lock:
            if kind == ALL:
                for one in self._started | {"skills", "guidelines", "experiences"}:
                    self._changed[one] = None
                return
            known = self._changed.get(kind, set())
            if ids is None or known is None:
                self._changed[kind] = None
            else:
                self._changed[kind] = known | ids

    def _listen(self) -> None:
        backoff = 0.2
        first = True
        while not self._stop.is_set():
            try:
                with psycopg.connect(self.db.url, autocommit=True,
                                     connect_timeout=max(2, int(self.db.timeout))) as conn:
                    conn.execute(f"LISTEN {CHANNEL}")
                    if not first:
                        self._flag(ALL)  # what was written while we were away is unknown
                    first, backoff = False, 0.2
                    self._listening.set()
                    while not self._stop.is_set():
                        for note in conn.notifies(timeout=0.5):
                            deployment, kind, token, listed = (
                                note.payload.split("\t", 3) + ["*"] * 3)[:4]
                            if deployment == self.deployment and token != self.token:
                                self._flag(kind, _ids(listed))
            except psycopg.Error as exc:
                if self._stop.is_set():
                    return
                log.warning("skillbank: lost the PostgreSQL change feed (%s); reconnecting",
                            str(exc).strip().splitlines()[0] if str(exc).strip() else exc)
                self._listening.set()  # do not hold up start-up; reads re-sync when it is back
                self._flag(ALL)
                self._stop.wait(backoff)
                backoff = min(backoff * 2, 2.0)

    def close(self) -> None:
        self._stop.set()
        self._thread.join(timeout=2)
