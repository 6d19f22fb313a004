"""Change notifications: tell clients when skill files and guideline topics change.

The bank keeps its skill index in step with the files (a watcher re-syncs within about a second);
this monitor turns those changes into MCP notifications, using only the facade's public API, so
it works the same over a bank that another process owns:

- every `interval` seconds, while some client is connected, a worker thread computes the
  served resource list (skill files with their digests, guideline topics) and, for topics,
  a digest of each playbook;
- when the set of URIs changed: `notifications/resources/list_changed`;
- when a URI's content changed: `notifications/resources/updated` for it.

The first look at a client's scope is taken as the client registers, before its request goes
on (`ChangeMonitor.baseline`): taken at the thread's next tick, it absorbed a change made in
the session's first second, never notified (hunt-mcphttp #2, session 36).

What a client is served depends on its scope (a token's namespace and the ones it reads), so
the list is computed once per distinct `Scope.listing_key` among the clients to notify (the
namespaces read and the pending items shown: tokens of one team share it; the skill files,
which every scope sees, once per poll), each in such a scope, and each client hears only of its
own scope's changes. The guideline part is recomputed only when the memory's `change_marker`
moved (review F3, session 24: a poll cost 1.2 s with 50 tokens connected). The poll thread
ran with no scope: it saw only the server's own namespace, so a token's new or changed
guideline topics were never notified (hunt-mcpmany #2, session 24); computing every
namespace for everyone would have told each namespace's sessions of the others' topics. A
handshake session's scope is that of its first request; a listen stream's that of its
`subscriptions/listen` (`ScopedBus`), as its caller stands now: before each poll's look and
each delivery, a token principal is checked against the tokens file again (a JWT against its
expiry), so a narrowed `reads` narrows what it hears, and a removed token's listen stream is
ended and its session hears nothing more. They kept the scope they started with: a removed
member's open stream went on hearing the team's topic names (hunt-team #1, session 25). A
`resources/subscribe` to a
URI its scope does not serve is accepted and never fires (as the SDK's listen streams treat
unknown URIs): refusing it would tell a client which URIs exist in other namespaces.

Delivery follows the client's protocol era. Sessions that did the `initialize` handshake
(2025-11-25 and before) get list changes, and updates for the URIs they `resources/subscribe`d
to, on their session. 2026-07-28 clients get both through `subscriptions/listen` streams (the
SDK's bus filters by what each stream asked for).

The thread runs while some client can be notified, and stops when the last one goes; a later
one starts a new thread. Without that, every server a process ever served kept a thread polling
its bank every second until the process exited. Who counts:

- over stdio and in process, the SDK's lifespan is one client's connection (`SkillbankServer`
  counts it);
- over HTTP the lifespan is the app's life, so it is not counted (the monitor polled for good
  after the first request, with no session at all: 4.5% of a core on an idle server, soak #6).
  What counts there is each connection that can be sent a notification, for as long as the
  SDK keeps it: a handshake session (until the client ends it or it times out) or a 2026-07-28
  `subscriptions/listen` stream (one request). A modern client's other requests, and every
  request of a stateless server (no session to send on), start nothing.
"""

from __future__ import annotations

import hashlib
import logging
import os
import threading
import weakref
from contextvars import ContextVar
from typing import Any, Callable

import anyio
import anyio.from_thread
import anyio.lowlevel
import anyio.to_thread
from mcp.server.subscriptions import ListenHandler, ResourcesListChanged, ResourceUpdated
from mcp.shared.subscriptions import SUBSCRIPTION_ID_META_KEY
from mcp_types import SubscriptionsListenResult
from mcp_types.version import MODERN_PROTOCOL_VERSIONS

from skillbank import scope as scopes
from skillbank.mcp_server import resources as res
from skillbank.mcp_server.identity import UNCONFIRMED, standing

log = logging.getLogger("skillbank.mcp")

POLL_ENV = "SKILLBANK_MCP_POLL_SECONDS"
#: Key in an SDK connection's `state`: the monitor counts this connection already.
_HELD = "skillbank.monitor.held"
#: A client's scope, as the monitor groups clients: the `Scope` its requests ran in, or None
#: (no scope active: the bank's own default, as over stdio without --namespace).
Audience = Any
_EVERYONE = object()
#: How the `subscriptions/listen` request running now can be ended (`EndableListenHandler`).
_END_LISTEN: ContextVar[Callable[[], None] | None] = ContextVar("skillbank_end_listen",
                                                                 default=None)


def stands(check: Callable[[], Any]) -> Any:
    """The caller's scope as `check` finds it now, None when revoked (and when the check
    itself fails: a principal that cannot be confirmed hears nothing more), UNCONFIRMED while
    the tokens file is missing (muted, not dropped)."""
    try:
        return check()
    except Exception:  # noqa: BLE001 - fail closed
        log.warning("could not re-check a notified principal; treating it as revoked",
                    exc_info=True)
        return None


class EndableListenHandler(ListenHandler):
    """The SDK's `subscriptions/listen` handler, whose streams the bus can end one by one: a
    stream whose caller was revoked ends as `ListenHandler.close` ends streams, with its
    `SubscriptionsListenResult`, so the client knows it ended on purpose (hunt-team #1)."""

    async def __call__(self, ctx: Any, params: Any) -> Any:
        with anyio.CancelScope() as ending:
            mark = _END_LISTEN.set(ending.cancel)
            try:
                return await super().__call__(ctx, params)
            finally:
                _END_LISTEN.reset(mark)
        return SubscriptionsListenResult(_meta={SUBSCRIPTION_ID_META_KEY: ctx.request_id})


class _Listening:
    """One listen stream: its scope now, the check of its caller (None: nothing to re-check,
    as over stdio or with the static token), its listener, and how to end it."""

    __slots__ = ("scope", "check", "listener", "end", "muted")

    def __init__(self, scope: Audience, check: Callable[[], Any] | None,
                 listener: Callable[[Any], None], end: Callable[[], None] | None) -> None:
        self.scope, self.check, self.listener, self.end = scope, check, listener, end
        self.muted = False  # its caller cannot be confirmed now (the tokens file is missing)


class ScopedBus:
    """The SDK's in-process subscription bus, with each listener's scope: a listen stream
    registers while its `subscriptions/listen` request runs, in the caller's scope, and
    `publish(event, audience)` reaches only the streams of that scope. (A `publish(event)`
    without one, as the SDK's own helpers send, reaches every stream, as before.)"""

    def __init__(self) -> None:
        self._listeners: dict[object, _Listening] = {}

    def audiences(self) -> set[Audience]:
        return {entry.scope for entry in list(self._listeners.values())}

    def checked(self) -> bool:
        """Whether some stream's caller is re-checked (`recheck` has work)."""
        return any(entry.check is not None for entry in list(self._listeners.values()))

    def recheck(self) -> None:
        """On the event loop: each stream's scope as its caller stands now; a revoked caller's
        stream is dropped and ended."""
        for key, entry in list(self._listeners.items()):
            if entry.check is None:
                continue
            now = stands(entry.check)
            entry.muted = now is UNCONFIRMED
            if now is not None:
                entry.scope = now if not entry.muted else entry.scope
                continue
            self._listeners.pop(key, None)
            log.info("ending a listen stream: its caller %s was revoked",
                     getattr(entry.scope, "principal", "?"))
            if entry.end is not None:
                entry.end()

    async def publish(self, event: Any, audience: Audience = _EVERYONE) -> None:
        for entry in list(self._listeners.values()):
            if entry.muted or (audience is not _EVERYONE and entry.scope != audience):
                continue
            try:
                entry.listener(event)
            except Exception:  # noqa: BLE001 - one bad listener must not starve the others
                log.exception("subscription listener raised; continuing")
        await anyio.lowlevel.checkpoint()  # let the streams drain between events

    def subscribe(self, listener: Callable[[Any], None]) -> Callable[[], None]:
        token = object()
        self._listeners[token] = _Listening(scopes.active(), standing(), listener,
                                            _END_LISTEN.get())

        def unsubscribe() -> None:
            self._listeners.pop(token, None)

        return unsubscribe


class ChangeMonitor:
    """Watches what `resources/list` would return and notifies sessions of changes."""

    def __init__(self, server: Any, interval: float | None = None) -> None:
        self.server = server
        if interval is None:
            interval = float(os.environ.get(POLL_ENV, "") or 1.0)
        self.interval = max(0.05, interval)
        #: handshake-era sessions -> (their scope, the URIs each subscribed to, the check of
        #: their caller: see `recheck`)
        self._sessions: weakref.WeakKeyDictionary[
            Any, tuple[Audience, set[str], Callable[[], Any] | None]] = weakref.WeakKeyDictionary()
        self._token: Any = None
        self._thread: threading.Thread | None = None
        self._stop = threading.Event()  # the running thread's own: a stopped one stays stopped
        self._lock = threading.Lock()
        self._connections = 0
        #: the running thread's last look: audience -> {uri -> digest} (None: not started)
        self._seen: dict[Audience, dict[str, str]] | None = None
        #: handshake sessions whose caller cannot be confirmed now (the tokens file is
        #: missing): kept, with their subscriptions, but sent nothing (review F4, session 25)
        self._muted: weakref.WeakSet[Any] = weakref.WeakSet()
        #: audience -> uri -> digest as a client of it registered (`baseline`), until the
        #: thread's next look at that audience compares with it (hunt-mcphttp #2, session 36)
        self._baselines: dict[Audience, dict[str, str]] = {}

    # Registration (event loop) -------------------------------------------------------------
    @staticmethod
    def _connection(session: Any) -> Any:
        """The connection behind a request's session: the SDK builds a `ServerSession` per
        request, the `Connection` (with its standalone channel) lives as long as the client."""
        return getattr(session, "_connection", None) or session

    def attach(self, session: Any, protocol_version: str | None,
               method: str | None = None) -> None:
        """Called on every request: remember handshake connections, hold the connection while
        it can be notified (see the module's docstring), start polling if someone is."""
        modern = protocol_version in MODERN_PROTOCOL_VERSIONS
        if session is not None:
            connection = self._connection(session)
            if not modern:
                self._watch(connection)
            # A modern client is sent changes only on a listen stream; a handshake one on its
            # session, which a stateless server does not keep.
            notifiable = method == "subscriptions/listen" if modern else \
                not getattr(self.server, "stateless", False)
            if notifiable:
                self._hold(connection)
        self._start()

    async def baseline(self, session: Any, protocol_version: str | None,
                       method: str | None = None) -> None:
        """Called on every request before `attach`: when it registers a client to notify (a
        handshake connection's first request, a `subscriptions/listen` stream), or a registered
        session's scope has had no look yet, what its scope serves now is kept for the thread's
        first look at that scope to compare with.

        The thread's first look at a scope was its baseline, one interval after the thread
        started (or at the next tick of a running one, for a new principal's scope): a skill
        saved within about a second of a session's `resources/list` was folded into it and
        never notified, and the client's list stayed stale (hunt-mcphttp #2, session 36).
        Taken before the registration, so the thread cannot look at the scope without it."""
        if session is None:
            return
        audience = scopes.active()
        if protocol_version in MODERN_PROTOCOL_VERSIONS:
            if method != "subscriptions/listen":
                return
        elif getattr(self.server, "stateless", False):
            return
        else:
            with self._lock:
                entry = self._sessions.get(self._connection(session))
            if entry is not None:  # registered: only while its scope has had no look
                audience, seen = entry[0], self._seen
                if audience in self._baselines or (seen is not None and audience in seen):
                    return
                if method == "resources/list":  # it waits for the bank: so does its baseline
                    try:
                        await self.server.handle.aget("guidelines")
                    except Exception:  # noqa: BLE001 - the list says why; the first look is it
                        return
        try:
            views = await anyio.to_thread.run_sync(self.snapshot, {audience}, False)
        except Exception:  # noqa: BLE001 - no baseline: the thread's first look is it, as before
            log.debug("could not take a scope's baseline", exc_info=True)
            return
        if views is not None and audience in views:  # None: the bank is not ready yet
            with self._lock:
                self._baselines[audience] = views[audience]

    def _hold(self, connection: Any) -> None:
        """Count `connection` as a client until the SDK closes it (its `exit_stack`), once."""
        stack, state = getattr(connection, "exit_stack", None), getattr(connection, "state", None)
        if stack is None or not isinstance(state, dict) or state.get(_HELD):
            return
        state[_HELD] = True
        self.connection_opened()
        stack.callback(self.connection_closed)

    def _watch(self, connection: Any) -> set[str]:
        """The URIs `connection` subscribed to; its scope is the one of its first request's
        caller, as that caller stands now (`recheck`)."""
        with self._lock:
            return self._sessions.setdefault(connection,
                                             (scopes.active(), set(), standing()))[1]

    def subscribe(self, session: Any, uri: str) -> None:
        uris = self._watch(self._connection(session))
        with self._lock:
            uris.add(uri)
        self._start()

    def unsubscribe(self, session: Any, uri: str) -> None:
        with self._lock:
            self._sessions.get(self._connection(session), (None, set(), None))[1].discard(uri)

    def _start(self) -> None:
        try:
            token = anyio.lowlevel.current_token()
        except RuntimeError:
            return
        with self._lock:
            self._token = token
            if self._connections == 0:  # nobody to notify (an HTTP request without a session)
                return
            if self._thread is not None and self._thread.is_alive() and not self._stop.is_set():
                return
            self._stop = threading.Event()
            self._thread = threading.Thread(target=self._run, args=(self._stop,),
                                            name="skillbank-notify", daemon=True)
            self._thread.start()
            clients = self._connections
        log.debug("change monitor started (%d client(s) to notify)", clients)

    def connection_opened(self) -> None:
        with self._lock:
            self._connections += 1

    def connection_closed(self) -> None:
        """The last connection ending stops the polling thread."""
        with self._lock:
            self._connections = max(0, self._connections - 1)
            last = self._connections == 0
        if last:
            self.stop()

    def stop(self) -> None:
        """Stop polling now (the thread ends at once, or after the poll it is in); the next
        request that attaches starts a new thread."""
        with self._lock:
            running = self._thread is not None and not self._stop.is_set()
            self._stop.set()
            self._seen = None  # a new thread takes a new baseline (its own `seen`)
            self._baselines.clear()  # no client left (or one whose `baseline` is running)
        if running:
            log.debug("change monitor stopped: no client to notify")

    # Polling (worker thread) ---------------------------------------------------------------
    def view(self, audience: Audience = None) -> dict[str, str] | None:
        """uri -> digest as the running thread last saw them for `audience` (None: not yet)."""
        seen = self._seen
        return None if seen is None else seen.get(audience)

    def audiences(self) -> set[Audience]:
        """The scopes of the clients to notify: handshake sessions and listen streams."""
        with self._lock:
            found = {scope for scope, _, _ in self._sessions.values()}
        return found | self.server.bus.audiences()

    def _checked(self) -> bool:
        with self._lock:
            sessions = any(check is not None for _, _, check in self._sessions.values())
        return sessions or self.server.bus.checked()

    def recheck(self) -> None:
        """On the event loop, before each poll's look and each delivery: every client's scope
        as its caller stands now. A revoked caller's listen stream is ended and its handshake
        session forgotten (it hears nothing more; its next request is refused by the guard);
        a narrowed one hears only its narrowed scope's changes from now on."""
        self.server.bus.recheck()
        with self._lock:
            sessions = [(s, entry) for s, entry in self._sessions.items() if entry[2]]
        for session, (audience, uris, check) in sessions:
            now = stands(check)
            with self._lock:
                if now is UNCONFIRMED:
                    self._muted.add(session)
                    continue
                self._muted.discard(session)
                if now is None:
                    self._sessions.pop(session, None)
                    log.info("no more notifications for a session of %s: revoked",
                             getattr(audience, "principal", "?"))
                elif now != audience:
                    self._sessions[session] = (now, uris, check)

    def snapshot(self, audiences: set[Audience] | None = None, remember: bool = True
                 ) -> dict[Audience, dict[str, str]] | None:
        """For each audience (default: only None, the bank's own scope), uri -> digest of
        everything its `resources/list` serves from the bank (None: not ready). The skill
        files are the same for every scope; the guideline topics and playbooks are each
        scope's own, read in that scope.

        The guideline part is computed once per `Scope.listing_key` (what such a list depends
        on: tokens reading the same namespaces share it), and kept while the guideline
        memory's `change_marker` has not moved: every scope's every playbook each second cost
        24 ms per token, 1.2 s a poll with 50 tokens connected, longer than the interval
        (review F3, session 24). A `baseline` (not `remember`) reads that cache and leaves it
        as the poll thread keeps it."""
        handle = self.server.handle
        if not handle.is_ready("guidelines"):
            return None
        bank = handle.bank
        skills: dict[str, str] = {}
        for manifest in self.server.manifests.all(bank):
            for f in manifest.files:
                skills[res.skill_uri(manifest.name, f.path)] = f.sha256
        try:  # read before the views: a write in between moves it again, never lost
            marker = bank.guidelines.change_marker()
        except Exception:  # noqa: BLE001 - an owner without it: recompute every poll
            log.debug("no guideline change marker", exc_info=True)
            marker = None
        kept, known = getattr(self, "_views", (None, {}))
        if marker is None or marker != kept:
            known = {}
        views: dict[Any, dict[str, str]] = {}
        out: dict[Audience, dict[str, str]] = {}
        for audience in {None} if audiences is None else audiences:
            key = None if audience is None else audience.listing_key
            part = views.get(key, known.get(key))
            if part is None:
                try:
                    with scopes.using(audience):
                        part = _guideline_view(bank)
                except Exception:  # noqa: BLE001 - this scope is looked at again next tick
                    log.debug("change poll failed for one scope", exc_info=True)
                    continue
            views[key] = part
            out[audience] = {**skills, **part}
        if remember:
            self._views = (marker, views)  # only the keys asked now: gone scopes are forgotten
        return out

    def _run(self, stop: threading.Event) -> None:
        seen: dict[Audience, dict[str, str]] = {}  # this thread's: a new one takes a new baseline
        known: dict[Audience, dict[str, str]] = {}  # uri -> the last digest seen, gone ones too
        with self._lock:
            if not stop.is_set():
                self._seen = seen
        while not stop.wait(self.interval):
            if self._checked():
                try:
                    anyio.from_thread.run_sync(self.recheck, token=self._token)
                except Exception:  # noqa: BLE001 - the event loop is gone: as for delivery
                    log.debug("change recheck stopped", exc_info=True)
                    return
            try:
                audiences = self.audiences()
                if not audiences:  # a client that takes no changes (a plain 2026-07-28 one)
                    seen.clear()
                    known.clear()
                    continue
                current = self.snapshot(audiences)
            except Exception:  # noqa: BLE001 - a failed poll is retried at the next tick
                log.debug("change poll failed", exc_info=True)
                continue
            if current is None or stop.is_set():
                continue
            news: dict[Audience, tuple[bool, list[str]]] = {}
            for audience, view in current.items():
                previous, seen[audience] = seen.get(audience), view
                with self._lock:  # taken as a client of it registered (`baseline`)
                    registered = self._baselines.pop(audience, None)
                if previous is None:
                    previous = registered
                    if previous is None:  # none taken (the bank was not ready): this look
                        known[audience] = dict(view)
                        continue
                    known[audience] = dict(previous)
                if previous == view:
                    continue
                listed, updated = changes(previous, view, known[audience])
                if listed or updated:
                    news[audience] = (listed, updated)
            for gone in set(seen) - audiences:  # no client of that scope left
                seen.pop(gone, None)
                known.pop(gone, None)
            if not news:
                continue
            try:
                anyio.from_thread.run(self._deliver, news, token=self._token)
            except Exception:  # noqa: BLE001 - the event loop is gone: stop until re-attached
                log.debug("change delivery stopped", exc_info=True)
                return

    async def _deliver(self, news: dict[Audience, tuple[bool, list[str]]]) -> None:
        """Each client hears of its own scope's changes only, as it stands now."""
        if self._checked():
            self.recheck()
        bus: ScopedBus = self.server.bus
        for audience, (listed, updated) in news.items():
            events = ([ResourcesListChanged()] if listed else []) + \
                [ResourceUpdated(uri=uri) for uri in updated]
            for event in events:
                await bus.publish(event, audience)
        with self._lock:
            sessions = [item for item in self._sessions.items() if item[0] not in self._muted]
        for session, (audience, uris, _) in sessions:
            listed, updated = news.get(audience, (False, []))
            try:
                if listed:
                    await session.send_resource_list_changed()
                for uri in updated:
                    if uri in uris:
                        await session.send_resource_updated(uri)
            except Exception:  # noqa: BLE001 - a closed session is forgotten
                log.debug("dropping a session that could not be notified", exc_info=True)
                with self._lock:
                    self._sessions.pop(session, None)


def _guideline_view(bank: Any) -> dict[str, str]:
    """uri -> digest of each guideline topic's playbook, as the active scope is served them."""
    try:
        digests = bank.guidelines.playbook_digests()
    except AttributeError:  # an owner process of an older version: one playbook per topic
        digests = {topic: hashlib.sha256(bank.guidelines.playbook(topic).encode()).hexdigest()
                   for topic in bank.guidelines.topics()}
    return {res.GUIDELINES_PREFIX + topic: digest for topic, digest in digests.items()}


#: URIs remembered after they went (see `changes`), at most this many more than are listed.
KNOWN_SLACK = 10_000


def changes(previous: dict[str, str], current: dict[str, str], known: dict[str, str]
            ) -> tuple[bool, list[str]]:
    """(whether the list changed, the URIs whose content changed) between two polls; `known`
    (uri -> the last digest seen, updated here) remembers URIs that went away for a poll.

    An editor that truncates a SKILL.md before writing it made the skill vanish for one poll
    (an empty file is no skill) and come back changed: subscribers got two list changes and
    never the `resources/updated` for the URI they watch, as it was "new" when it came back
    (a test met it one run in three). A URI that comes back with other content is updated."""
    listed = set(current) != set(previous)
    updated = sorted(u for u, d in current.items() if known.get(u, d) != d)
    known.update(current)
    if len(known) > len(current) + KNOWN_SLACK:  # bounded: forget the oldest gone ones
        for uri in [u for u in known if u not in current][:len(known) - len(current)]:
            known.pop(uri, None)
    return listed, updated
