"""One verified connection to the owner of a root, and how its failures are told apart.

A call that failed before the owner's reply began never ran (`_NotRun`, `_OwnerChanged`): the
client sends it again, to this owner or the next. One whose reply had begun may have run: only
the caller can decide to repeat it (`client.OwnerLostError`).
"""

from __future__ import annotations

import contextlib
import secrets
import threading
from pathlib import Path
from typing import Any

import orjson

from skillbank.sharing import endpoint as ep
from skillbank.sharing import wire


class _OwnerChanged(Exception):
    """The socket now belongs to a newer owner; reconnect (the call was refused unrun)."""


class _OwnerRaised(Exception):
    """The owner ran the call and it raised `error`: never a transport failure to retry (the
    owner's FileNotFoundError was taken for a missing socket, and the call sent again without
    end)."""

    def __init__(self, error: BaseException) -> None:
        super().__init__(str(error))
        self.error = error


class _NotRun(Exception):
    """The connection closed before the owner's reply began: the call never ran."""


class _Untrusted(Exception):
    """The process on the socket could not prove it is the root's owner."""


class _Connection:
    """One verified connection to an owner process, shared by the threads of the client.

    A thread that finds it dead (or refused by a closing owner) retires it: it is closed when
    the last call on it ends. Closing it at once cut the other threads' calls still running on
    it, and they were told "it may or may not have been applied" for writes the closing owner
    finished (hunt-handoff #1, session 33)."""

    def __init__(self, endpoint: ep.Endpoint, timeout: float) -> None:
        import httpx

        self.endpoint = endpoint
        self.timeout = timeout
        # Every phase has a deadline: the owner streams a space every half second while it
        # works, so `read` bounds silence, not the length of a call.
        self._http = httpx.Client(
            transport=httpx.HTTPTransport(uds=endpoint.socket),
            base_url="http://skillbank-owner",
            headers={"x-skillbank-token": endpoint.token, "content-type": "application/json"},
            timeout=httpx.Timeout(timeout),
        )
        self.members: dict[str, dict[str, list[str]]] = {}
        self.namespace = "default"
        self.skill_roots: list[Path] = []
        self.served: dict[str, Any] | None = None
        self._users = 0
        self._retired = False
        self._state = threading.Lock()

    @contextlib.contextmanager
    def _in_use(self) -> Any:
        with self._state:
            if self._retired:  # another thread retired it (and may have closed it) meanwhile:
                raise _OwnerChanged()  # nothing was sent; the next connection takes the call
            self._users += 1
        try:
            yield
        finally:
            with self._state:
                self._users -= 1
                last = self._retired and not self._users
            if last:
                self._http.close()

    def retire(self) -> None:
        """No new calls go here; closed once the calls on it have ended."""
        with self._state:
            self._retired = True
            idle = not self._users
        if idle:
            self._http.close()

    def hello(self, timeout: float | None = None) -> None:
        nonce = secrets.token_hex(16)
        response = self._http.post("/hello", content=orjson.dumps({"nonce": nonce}),
                                   timeout=timeout if timeout is not None else self.timeout)
        if response.status_code != 200:
            raise _Untrusted(f"the owner refused our secret (HTTP {response.status_code})")
        data = orjson.loads(response.content)
        if not secrets.compare_digest(str(data.get("proof", "")), self.endpoint.proof(nonce)):
            raise _Untrusted("the process on the socket does not know the root's secret")
        if data.get("root_id") != self.endpoint.root_id:
            raise _Untrusted(f"the process on the socket serves another memory root "
                             f"({data.get('root')})")
        self.members = data["members"]
        self.namespace = data.get("namespace", "default")
        self.skill_roots = [Path(p) for p in data.get("skill_roots", [])]
        self.served = data.get("served") if isinstance(data.get("served"), dict) else None

    def call(self, payload: bytes) -> Any:
        with self._in_use():
            return self._call(payload)

    def _call(self, payload: bytes) -> Any:
        import httpx

        try:
            response = self._http.send(self._http.build_request("POST", "/call",
                                                                content=payload), stream=True)
        except (httpx.ReadError, httpx.WriteError, httpx.RemoteProtocolError) as exc:
            # Closed before any reply began: the owner starts a call's work only after its
            # reply's headers are out, so this call never ran (a closing owner shut a
            # kept-alive connection as the call arrived on it: CI of session 32).
            raise _NotRun() from exc
        try:
            if response.status_code == 401:
                # A new owner on the same socket path, with a new secret, or the owner is
                # closing: the call was not run.
                raise _OwnerChanged()
            content = response.read()
        finally:
            response.close()
        data = orjson.loads(content)
        if "error" in data:
            raise _OwnerRaised(wire.decode_error(data["error"]))
        return wire.decode(data["ok"])

    def changes(self, since: int, wait: float) -> dict[str, Any]:
        """The owner's skill change events after `since` (a long poll of up to `wait` s)."""
        with self._in_use():
            return self._changes(since, wait)

    def _changes(self, since: int, wait: float) -> dict[str, Any]:
        response = self._http.post("/changes", content=orjson.dumps({"since": since,
                                                                     "wait": wait}))
        if response.status_code == 401:
            raise _OwnerChanged()
        data = orjson.loads(response.content)
        if "error" in data:
            raise _OwnerRaised(wire.decode_error(data["error"]))
        return {**data["ok"], "reports": wire.decode(data["ok"]["reports"])}

    def close(self) -> None:
        self._http.close()
