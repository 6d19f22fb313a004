"""One `requestState` key for every process that serves one memory (hunt-sampling #2, session 36).

On 2026-07-28 sessions `learn_from_critique` asks the client's model through the SDK's
input-required flow: the first round answers with a `requestState` the SDK seals, and the
client's retry carries it back with the model's reply. Left to itself the SDK seals with a key
made at start and held by that process only (`RequestStateSecurity.ephemeral()`), so a retry
that reached another team worker behind the load balancer, another `skillbank serve --transport
http` on the same root, or the same server after a restart failed with "Invalid or expired
requestState" and the critique was lost.

Here every process of one memory seals with the same secret:

- team mode (a `database_url`): a row of `sb_secrets` in the deployment's PostgreSQL, made once
  by whichever worker asks first (`PostgresStore.shared_secret`);
- an embedded root: `<root>/.request-state.key` (0600), made once: written whole to a temp file
  and linked into place, so a process that loses the race reads the winner's key.

The audience names the deployment (or the root's folder), so a state sealed for one memory is
refused by another even if someone gave both the same secret. The SDK's time-to-live stays
600 s (`TTL`): a retry later than that is refused whichever process gets it (docs/mcp.md).

The key is read when the first state is sealed or opened, not at start: a server whose clients
never sample never touches the file, and a root that cannot be written fails only that call.
"""

from __future__ import annotations

import logging
import os
import secrets
import threading
import time
from pathlib import Path
from typing import Any, Callable

from mcp.server.request_state import (AESGCMRequestStateCodec, InvalidRequestState,
                                      RequestStateSecurity)

log = logging.getLogger("skillbank.mcp")

KEY_FILE = ".request-state.key"
#: The name of the deployment's secret in PostgreSQL (`sb_secrets`).
SECRET_NAME = "mcp-request-state"
#: Seconds a sealed state stays good: the SDK's default, kept (docs/mcp.md says so).
TTL = 600.0
#: Seconds a key that could not be read (PostgreSQL down) is not asked for again.
RETRY_SECONDS = 10.0


def root_secret(root: Path) -> bytes:
    """The root's requestState secret, made on first use; race-free between processes."""
    path = Path(root) / KEY_FILE
    try:
        found = path.read_bytes().strip()
        if len(found) >= 32:
            return found
    except FileNotFoundError:
        pass
    from skillbank.fsutil import make_root

    make_root(Path(root), embedded=False)  # private when new, as the bank makes it
    fresh = secrets.token_hex(32).encode("ascii")
    tmp = path.with_name(f"{KEY_FILE}.{secrets.token_hex(4)}.tmp")
    fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL | getattr(os, "O_NOFOLLOW", 0), 0o600)
    try:
        with os.fdopen(fd, "wb") as handle:
            handle.write(fresh + b"\n")
            handle.flush()
            os.fsync(handle.fileno())
        try:
            os.link(tmp, path)  # fails if another process got there first: use theirs
        except FileExistsError:
            pass
    finally:
        tmp.unlink(missing_ok=True)
    found = path.read_bytes().strip()
    if len(found) < 32:
        raise InvalidRequestState(f"{path} holds no key: delete it and it is made again")
    return found


class SharedKeyCodec:
    """The SDK's AES-GCM codec over a secret read on first use (`resolve`), then kept."""

    def __init__(self, resolve: Callable[[], bytes]) -> None:
        self._resolve = resolve
        self._codec: AESGCMRequestStateCodec | None = None
        self._lock = threading.Lock()
        self._failed: tuple[float, BaseException] | None = None  # (when, why) of the last read

    def warm(self) -> None:
        """Read the key on a thread now, so the first sampling call does not read it on the
        event loop (the SDK seals and opens synchronously; in team mode the read is a query
        that waited up to the pool's timeout with PostgreSQL down, stalling every client of the
        worker; review 2, session 36)."""
        threading.Thread(target=self._quietly, name="skillbank-state-key", daemon=True).start()

    def _quietly(self) -> None:
        try:
            self._inner()
        except Exception as exc:  # noqa: BLE001 - said when a call needs the key
            log.warning("the requestState key could not be read yet: %s", exc)

    def _inner(self) -> AESGCMRequestStateCodec:
        with self._lock:
            if self._codec is None:
                if self._failed is not None and \
                        time.monotonic() - self._failed[0] < RETRY_SECONDS:
                    raise self._failed[1]  # not asked again on every call meanwhile
                try:
                    self._codec = AESGCMRequestStateCodec([self._resolve()])
                except Exception as exc:
                    self._failed = (time.monotonic(), exc)
                    raise
            return self._codec

    def seal(self, payload: bytes) -> str:
        return self._inner().seal(payload)

    def unseal(self, token: str) -> bytes:
        try:
            inner = self._inner()
        except InvalidRequestState:
            raise
        except Exception as exc:  # noqa: BLE001 - a key that cannot be read opens nothing
            log.error("the requestState key could not be read: %s", exc)
            raise InvalidRequestState("no key") from exc
        return inner.unseal(token)


def shared_security(handle: Any, settings: Any) -> RequestStateSecurity:
    """The policy for a server over `handle` (a `BankHandle`) with the bank's `settings`.

    Team mode: the secret is the deployment's in PostgreSQL, read through the open bank's store
    on a thread as the server is built (`SharedKeyCodec.warm`); a read that failed is not tried
    again for `RETRY_SECONDS`. An embedded root: the root's key file, read without the bank on
    first use."""
    if getattr(settings, "database_url", None):
        from skillbank.index_ownership import deployment_of

        audience = f"skillbank deployment {deployment_of(settings)}"

        def resolve() -> bytes:
            return handle.get("experiences").store.shared_secret(SECRET_NAME)

        codec = SharedKeyCodec(resolve)
        codec.warm()
        return RequestStateSecurity(codec=codec, ttl=TTL, audience=audience)
    else:
        root = Path(os.path.realpath(settings.root))
        audience = f"skillbank root {root}"

        def resolve() -> bytes:
            return root_secret(root)
    return RequestStateSecurity(codec=SharedKeyCodec(resolve), ttl=TTL, audience=audience)
