"""The change feed on PostgreSQL: LISTEN/NOTIFY instead of `<root>/.changes/*.log`.

`wrote(kind)` inserts a row into `sb_changes` and notifies `skillbank_changes` in the same
transaction, so the notification goes out exactly when the write it announces is committed.
Each store holds one listening connection in a daemon thread; a notification from another
token of the same deployment sets that memory's flag, and `others_wrote(kind)` reads and
clears it — no query on the read path, and another worker learns of a write within
milliseconds (the acceptance bound is 1 s).

Notifications are not queued while a listener is disconnected, so after the connection drops
(PostgreSQL restarted) the listener reconnects and flags every memory as changed: a worker may
re-read once for nothing, never miss a write.
"""

from __future__ import annotations

import logging
import secrets
import threading
import time

import psycopg

from skillbank.store.postgres.db import Database

log = logging.getLogger("skillbank.store.postgres")
CHANNEL = "skillbank_changes"
ALL = "*"


class PostgresChangeFeed:
    def __init__(self, db: Database, deployment: str) -> None:
        self.db = db
        self.deployment = deployment
        self.token = secrets.token_hex(8)
        self._lock = threading.Lock()
        self._changed: set[str] = set()
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
            self._changed.discard(kind)

    def wrote(self, kind: str) -> None:
        with self.db.transaction() as conn:
            conn.execute("INSERT INTO sb_changes (deployment, kind, token) VALUES (%s, %s, %s)",
                         (self.deployment, kind, self.token))
            conn.execute("SELECT pg_notify(%s, %s)",
                         (CHANNEL, f"{self.deployment}\t{kind}\t{self.token}"))

    # Readers ------------------------------------------------------------------------------------
    def others_wrote(self, kind: str) -> bool:
        with self._lock:
            if kind in self._changed:
                self._changed.discard(kind)
                return True
            return False

    def wait(self, kind: str, timeout: float) -> bool:
        """Block until another process writes to `kind` (or `timeout` passes)."""
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            if self.others_wrote(kind):
                return True
            time.sleep(0.01)
        return self.others_wrote(kind)

    def _flag(self, kind: str) -> None:
        with self._lock:
            if kind == ALL:
                self._changed.update(self._started | {"skills", "guidelines", "experiences"})
            else:
                self._changed.add(kind)

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
                            deployment, _, rest = note.payload.partition("\t")
                            kind, _, token = rest.partition("\t")
                            if deployment == self.deployment and token != self.token:
                                self._flag(kind)
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
