"""The client side: a bank whose owner is another local process, with the same public API.

`BankClient` forwards `bank.skills.search(...)`, `bank.guidelines.learn(...)`,
`bank.context_for(...)` and every other public call to the owner over its socket and returns
the same record types. It loads neither Chroma nor the embedding model, so a CLI command on a
served root answers in a fraction of a second.

Failover: when the owner exits or dies, the next call takes the root's owner lock itself (and
from then on runs in process and serves the others) or connects to whichever process did. A call
the owner never began (refused, or cut before its reply began: skillbank.sharing.connection) is
simply sent again. A call the owner was running when it died is
sent again only if it cannot change memory (reads); a write then raises `OwnerLostError`, because
it may or may not have been applied — retrying it is the caller's decision.

Deadlines: connecting, the handshake and every read have a deadline of `lock_timeout` seconds
(the owner streams a space every half second while a call runs, so a long call is never cut
off). An owner that holds the root but does not answer — stopped with Ctrl-Z or SIGSTOP, or
hung — gives `OwnerNotAnsweringError` (a `BusyError`) naming its pid and what to do, never a
hang.
"""

from __future__ import annotations

import logging
import os
import threading
import time
from pathlib import Path
from typing import TYPE_CHECKING, Any, Callable

import orjson

from skillbank.errors import BusyError
from skillbank.records import Hits
from skillbank.sharing import endpoint as ep
from skillbank.sharing import prepare, served, wire
from skillbank.sharing.connection import (_Connection, _NotRun, _OwnerChanged, _OwnerRaised,
                                          _Untrusted)
from skillbank.sharing.arguments import (owner_distils, plain_chat_messages, resolve_paths,
                                         with_local_zones, without_local_callbacks)

if TYPE_CHECKING:
    from skillbank.bank import Skillbank
    from skillbank.settings import Settings

log = logging.getLogger("skillbank.sharing")

#: Calls that change nothing (or whose repetition is harmless): safe to send again after the
#: owner died while running them.
#: The name a membership test (`x in client.skills`) travels under: op "contains".
CONTAINS = "__contains__"
SAFE_TO_REPEAT = frozenset({
    CONTAINS,
    "search", "load", "list", "get", "recall", "catalog", "names", "count", "counts", "stats",
    "context_for", "read_resource", "topics", "playbook", "pending", "drafts", "history",
    "playbook_digests", "change_marker",
    "validate", "sync", "resources", "find", "export", "flush", "watch",
})


def _warm_model(bank: Any) -> None:
    try:
        bank.embedding_function(["warm up"])
    except Exception:  # noqa: BLE001 - keyword-only mode or no model: the first search says so
        log.debug("warming the model after a takeover failed", exc_info=True)


#: The longest a takeover waits for the background imports under way (skillbank.sharing.prepare).
TAKEOVER_IMPORT_WAIT = 60.0
#: How often a call cut before the owner's reply began (so never run) is sent again.
NOT_RUN_TRIES = 5

#: The least time a handshake gets (the owner streams a space every 0.5 s while it greets).
HELLO_AT_LEAST = 1.5


class OwnerLostError(BusyError):
    """The owner process died while running a call that writes; it may or may not have happened."""


class OwnerNotAnsweringError(BusyError):
    """The owner holds the root but did not answer within the deadline (stopped or hung)."""


def not_answering(root: Path, pid: int | None, seconds: float, doing: str = "",
                  maybe_applied: bool = False) -> str:
    """Why the owner did not answer, and what to do about it, for a BusyError.

    `maybe_applied`: a write it had been sent, which a resumed owner still runs: "try again"
    then stored it twice (hunt-handoff #4, session 33); the advice is to check first."""
    holder = ep.describe_holder(pid)
    state = ep.process_state(pid)
    again = ("check (e.g. list or search) whether it was applied before you run it again"
             if maybe_applied else "try again")
    if state == "stopped":
        advice = (f"it is stopped (Ctrl-Z or SIGSTOP): resume it (`fg` in its terminal, or "
                  f"`kill -CONT {pid}`) or end it, then {again}")
    else:
        advice = (f"it may be hung or overloaded: wait and {again}, or end it "
                  f"(`kill {pid}`) so that another process can take the root over")
    return (f"{holder} holds the memory root {root} but did not answer within {seconds:g} s"
            f"{doing}; {advice}")


def stopped_holding(root: Path, pid: int, state: str) -> str:
    """A process that holds the root while it opens or closes it, and is stopped."""
    return (f"{ep.describe_holder(pid)} holds the memory root {root} and is stopped while "
            f"{state} it (Ctrl-Z or SIGSTOP): resume it (`fg` in its terminal, or "
            f"`kill -CONT {pid}`) or end it, then try again")


class _MemoryProxy:
    """`client.skills`, `client.experiences`, `client.guidelines`: forwards each public call."""

    def __init__(self, client: "BankClient", target: str) -> None:
        self._client = client
        self._target = target

    def __getattr__(self, name: str) -> Any:
        if name.startswith("_"):
            raise AttributeError(name)
        if self._target == "skills" and name in ("watch", "start_watching"):
            return getattr(self._client, f"_skills_{name}")  # run here, not in the owner
        return self._client._member(self._target, name)

    def __contains__(self, item: object) -> bool:
        """`name in client.skills`, `gid in client.guidelines`: asked of the owner, as the
        caller (the API says `name in bank.skills`; the adapters' and MCP's save_skill and
        load_skill use it, and raised TypeError through a client)."""
        return bool(self._client._invoke(self._target, "contains", CONTAINS, [item], {}))

    def __repr__(self) -> str:
        return f"<{self._target} of {self._client!r}>"


class BankClient:
    """A memory root owned by another process, used through that process (same public API)."""

    def __init__(self, settings: "Settings", *, become_owner: Callable[[Any], "Skillbank"],
                 try_lock: Callable[[], Any], sync: bool = True,
                 connect_timeout: float = 30.0, distiller: Any = None,
                 asked: dict[str, Any] | None = None,
                 let_go: Callable[[Any], None] | None = None) -> None:
        self.settings = settings
        #: This process's own distiller (e.g. a chat model): it reads critiques here, and the
        #: owner stores the rules it found (a model cannot be sent to another process).
        self.distiller = distiller
        self.root = Path(settings.root)
        self._become_owner = become_owner
        self._try_lock = try_lock
        self._let_go = let_go or (lambda lock: lock.release())  # a takeover that failed
        self._sync_on_promotion = sync
        self._connect_timeout = connect_timeout
        #: How long a call may go without a byte from the owner (it streams one every 0.5 s).
        self._read_timeout = max(1.0, connect_timeout)
        self._conn: _Connection | None = None
        #: The owner's API (`owner.describe`) from its last greeting: methods, values.
        self._members: dict[str, dict[str, list[str]]] | None = None
        #: What this process asked the root to serve, and what it was told about it.
        self._asked = asked or {}
        #: Why what this process gets differs from what it asked for (None: it does not).
        self.note: str | None = None
        self._owner_distils_warned = False
        #: The last takeover by this process: from which pid, how long it took.
        self.takeover: dict[str, Any] | None = None
        self._notes: list[str] = []  # told with the next result (take_notes)
        self._last_owner: int | None = None
        self._local: "Skillbank | None" = None
        self._watching = False
        self._closed = False
        self._background: Any = None
        self._switch = threading.RLock()
        # When the last call ended (None while one runs): an idle long-lived client prepares
        # a takeover (skillbank.sharing.prepare).
        self._calls_running = 0
        self._last_call = time.monotonic()
        self._activity = threading.Lock()
        from skillbank.recording import RecordingFailures

        #: Agent runs this process's faces could not record (see skillbank.recording).
        self.recording_failures = RecordingFailures()
        self.skills = _MemoryProxy(self, "skills")
        self.experiences = _MemoryProxy(self, "experiences")
        self.guidelines = _MemoryProxy(self, "guidelines")

    # Who serves us ------------------------------------------------------------------------------
    @property
    def is_remote(self) -> bool:
        """True while calls go to another process; False once this process became the owner."""
        return self._local is None

    @property
    def owner_pid(self) -> int | None:
        conn = self._conn
        return conn.endpoint.pid if conn is not None and self._local is None else None

    def connect(self) -> "BankClient":
        """Reach the owner now (or become it): open-time errors surface at open time."""
        self._ensure()
        return self

    def _ensure(self) -> "_Connection | None":
        """A live connection, or None when this process now owns the root itself."""
        with self._switch:
            if self._closed:  # the facade's own error for the same mistake (hunt-rag #6)
                from skillbank.errors import ClosedError

                raise ClosedError.for_root(self.root)
            if self._local is not None:
                return None
            if self._conn is not None:
                return self._conn
            deadline = time.monotonic() + self._connect_timeout
            delay = 0.02
            reason = "it has not published its endpoint yet"
            endpoint = None
            while True:
                lock = self._try_lock()
                if lock is not None:
                    self._promote(lock)
                    return None
                endpoint = ep.read_endpoint(self.root)
                holder = ep.read_holder(self.root) if endpoint is None else None
                if holder is not None:  # opening, or closing (the calls it took run first)
                    if ep.process_state(holder[0]) == "stopped":
                        raise OwnerNotAnsweringError(stopped_holding(self.root, *holder[:2]))
                    if holder[1] == "closing":
                        deadline = max(deadline, time.monotonic() + holder[2] - time.time())
                    reason = (f"it is {holder[1]} the root"
                              + (" (it first finishes the calls of other processes it took)"
                                 if holder[1] == "closing" else ""))
                if endpoint is None and (other := ep.other_protocol(self.root)) is not None:
                    raise BusyError(  # waiting will not change the owner's version
                        f"{ep.describe_holder(other[1])} holds the memory root {self.root} and "
                        f"runs another version of skillbank (wire protocol {other[0]}, this process "
                        f"{ep.PROTOCOL}): restart it with the version installed here, or run "
                        "this process with that one.")
                if endpoint is not None and not ep.serves(endpoint, self.root):
                    # Copied with the root from another folder, or left by an older owner:
                    # it leads to another root's owner. This root's owner will publish its own.
                    endpoint = None
                    reason = "it has not published its endpoint yet (the one there is another root's)"
                if endpoint is not None:
                    reason = ep.check_socket(endpoint.socket) or ""
                    if not reason:
                        conn = _Connection(endpoint, timeout=self._read_timeout)
                        try:
                            # At least a few of the owner's keep-alive spaces: an owner
                            # that published its endpoint just before our deadline is
                            # answering, not hung (0.2 s cut off a live owner under load).
                            conn.hello(timeout=max(HELLO_AT_LEAST, deadline - time.monotonic()))
                        except _Untrusted as exc:
                            conn.close()
                            reason = str(exc)
                        except Exception as exc:  # noqa: BLE001 - not answering (yet)
                            conn.close()
                            if ep.process_state(endpoint.pid) == "stopped" or (
                                    time.monotonic() >= deadline):
                                raise OwnerNotAnsweringError(not_answering(
                                    self.root, endpoint.pid, self._connect_timeout)) from None
                            reason = f"it does not answer on {endpoint.socket} ({type(exc).__name__})"
                        else:
                            self._conn = conn
                            self._members = conn.members  # what _member offers from now on
                            self._last_owner = endpoint.pid
                            self._check_roots(conn)
                            prepare.start(self._idle_since, self._done)
                            return conn
                if time.monotonic() >= deadline:
                    pid = endpoint.pid if endpoint else holder[0] if holder else None
                    if holder is not None:
                        advice = ("Try again when it has ended." if holder[1] == "closing" else
                                  "It serves other processes once open (seconds; a first index "
                                  "of many skills takes longer): try again.")
                    elif (self.root / ep.ENDPOINT_FILE).exists():
                        advice = ("Wait for that process to finish starting, or stop it; if no "
                                  "skillbank process is running, remove "
                                  f"{self.root / ep.ENDPOINT_FILE} and try again.")
                    else:  # nothing published: share=False, an owner still opening the
                        # root, or a skillbank from before sharing (hunt-upgrade #4, session 23)
                        advice = ("A process that opened it with share=False keeps it to itself "
                                  "until it closes: close that process, or open the root there "
                                  "with Skillbank.open(...) (shared by default); an owner still "
                                  "starting publishes its endpoint within seconds: try again; a "
                                  "skillbank older than 2026-12-02 never does: stop it and "
                                  "start it again with the version installed here.")
                    raise BusyError(
                        f"{ep.describe_holder(pid)} holds the memory root {self.root}, but this "
                        "process cannot "
                        f"use it through that process: {reason}. {advice}")
                time.sleep(delay)
                delay = min(delay * 1.5, 0.5)

    def _promote(self, lock: Any) -> None:
        """The owner is gone and we hold the lock: open the root here and serve the others.

        Serves what the root served (`served.json`), is timed, and is announced: logged, and
        told with the next result (`take_notes`, which the MCP server sends as a log message)."""
        started = time.monotonic()
        previous = self._last_owner
        # Imports of Chroma and the rest under way in the background: wait for them (bounded)
        # rather than import the same modules on a second thread at once.
        prepare.wait_for_import(TAKEOVER_IMPORT_WAIT)
        ready = prepare.prepared.is_set()  # Chroma, the model runtime, the server imported
        if self._conn is not None:
            self._conn.retire()
            self._conn = None
        try:
            local = self._become_owner(lock)
        except BaseException:
            self._let_go(lock)
            raise
        # The model loads (mostly outside the GIL) while the sync runs, as the MCP server's
        # own start does: the first search after a takeover no longer pays for it alone.
        warm = threading.Thread(target=_warm_model, args=(local,), daemon=True,
                                name="skillbank-takeover-model")
        warm.start()
        try:
            if self._sync_on_promotion:
                local.sync(asked=False)  # told by the next asked-for sync (unasked.py)
            if self._watching:
                local.watch()
        except BaseException:
            local.close()
            raise
        self._local = local
        seconds = time.monotonic() - started
        self.takeover = {"from_pid": previous, "seconds": round(seconds, 3), "at": time.time(),
                         "prepared": ready}
        message = (f"skillbank: process {os.getpid()} took over the memory root {self.root}"
                   + (f" from process {previous}, which stopped," if previous else "")
                   + f" in {seconds:.2f} s")
        log.warning("%s", message)
        self._notes.append(message)
        self._tell(served.differences(self._asked, served.read(self.root)), os.getpid())

    def _check_roots(self, conn: _Connection) -> None:
        self._tell(served.differences(self._asked, conn.served), conn.endpoint.pid)

    def _tell(self, found: list[str], pid: int | None) -> None:
        """What this process asked for and does not get: kept in `note`, logged, and told with
        the next result."""
        self.note = served.note(self.root, pid, found)
        if self.note:
            log.warning("skillbank: %s", self.note)
            self._notes.append(self.note)

    def take_notes(self) -> list[str]:
        """What this process should be told since the last call (a takeover, what is not
        served as asked), once; the faces show it with their next result."""
        with self._switch:
            notes, self._notes = self._notes, []
        return notes

    # Calls ------------------------------------------------------------------------------------
    def _member(self, target: str, name: str) -> Any:
        """`client.experiences.record` and the like: the API the owner greeted with, looked
        up with no I/O and no lock — the call connects, or takes the root over, on its own
        thread (an `asyncio.to_thread` worker's); looking the method up on the event loop
        waited there for a takeover (hunt-async #3, session 34)."""
        if self._closed:  # the facade's own error (hunt-rag #6)
            from skillbank.errors import ClosedError

            raise ClosedError.for_root(self.root)
        local = self._local
        if local is None and self._members is None:  # never greeted (connect() does at open)
            self._ensure()
            local = self._local
        if local is not None:
            obj = local if target == "bank" else getattr(local, target)
            return getattr(obj, name)
        members = (self._members or {}).get(target, {})
        if name in members.get("methods", ()):
            def remote_method(*args: Any, **kwargs: Any) -> Any:
                distilled = None
                if (target, name) == ("guidelines", "learn") and self.distiller is not None:
                    kwargs, distilled = self._distil_here(args, kwargs)
                args, kwargs = resolve_paths(target, name, args, kwargs)
                args, kwargs = plain_chat_messages(target, name, args, kwargs)
                here = (args, kwargs)  # run as given if this process takes the root over
                args, kwargs = without_local_callbacks(target, name, args, kwargs)
                args, kwargs = with_local_zones(target, name, args, kwargs)
                if owner_distils(target, name, args, kwargs):
                    kwargs = self._owner_distils(target, name, kwargs)
                result = self._invoke(target, "call", name, args, kwargs, here=here)
                if distilled is not None and hasattr(result, "distilled_by"):
                    from skillbank.distill.llm import distilled_by

                    for key, value in distilled_by(self.distiller, distilled).items():
                        setattr(result, key, value)  # read here, not by the owner
                if self.note and isinstance(result, Hits):
                    # Search results say what is not served as asked, after the search's own
                    # note (an index outage), which this replaced before.
                    result.note = "; ".join(n for n in (result.note, self.note) if n)
                return result

            remote_method.__name__ = name
            remote_method.__qualname__ = f"{target}.{name}"
            return remote_method
        if name in members.get("values", ()):
            return self._invoke(target, "get", name, (), {})
        raise AttributeError(f"{target}.{name} is not part of the memory API served by "
                             f"{ep.describe_holder(self._last_owner)}")

    def _invoke(self, target: str, op: str, name: str, args: Any, kwargs: dict[str, Any],
                here: tuple[Any, dict[str, Any]] | None = None) -> Any:
        from skillbank import moments

        # The caller's scope goes with every call; the owner runs it as that caller.
        envelope = {"target": target, "op": op, "name": name,
                    "args": wire.encode(list(args)), "kwargs": wire.encode(kwargs),
                    "scope": self.caller_scope().to_wire(),
                    # a zone-less time it types is its local time, not the owner's: its typed
                    # times travel with their zone (`with_local_zones`); the offset now serves
                    # any other zone-less time (moments)
                    "utc_offset": moments.local_offset()}
        from skillbank.memories.skills.dependencies import current_agent_tools

        tools = current_agent_tools()  # an agent face's tool gate (#26) goes with it too
        if tools is not None:
            envelope["agent_tools"] = tools
        payload = wire.dumps(envelope)
        with self._activity:
            self._calls_running += 1
        try:
            return self._send(target, op, name, *(here or (args, kwargs)), payload)
        finally:
            with self._activity:
                self._calls_running -= 1
                self._last_call = time.monotonic()

    def _idle_since(self) -> float | None:
        return None if self._calls_running else self._last_call

    def _done(self) -> bool:
        return self._closed or self._local is not None

    def _send(self, target: str, op: str, name: str, args: Any, kwargs: dict[str, Any],
              payload: bytes) -> Any:
        import httpx

        unrun = 0
        while True:
            conn = self._ensure()
            if conn is None:  # we own the root now: run it here
                obj = self._local if target == "bank" else getattr(self._local, target)
                member = getattr(obj, name)
                return member if op == "get" else member(*args, **kwargs)
            try:
                return conn.call(payload)
            except _OwnerRaised as raised:
                raise raised.error from None
            except _NotRun as exc:
                # Cut before the reply began, so never run: sent again (to the next owner when
                # this one was closing), but not without end to an owner that cuts every time.
                self._drop(conn)
                unrun += 1
                if unrun >= NOT_RUN_TRIES:
                    raise OwnerLostError(
                        f"the process that owns {self.root} closed the connection before "
                        f"running {target}.{name}, {unrun} times; it was not applied "
                        f"({type(exc.__cause__).__name__})") from exc
            except (httpx.ConnectError, httpx.ConnectTimeout, httpx.PoolTimeout,
                    FileNotFoundError, ConnectionRefusedError, _OwnerChanged):
                # Never sent: safe to send again. A connect or pool timeout is a loaded
                # machine, not a silent owner; the reconnect is bounded by connect_timeout.
                self._drop(conn)
            except httpx.TimeoutException as exc:
                # Silent past the deadline (a live owner streams a byte every half second):
                # stopped or hung. Another try would hang again; say who and what to do.
                self._drop(conn)
                maybe = "" if op == "get" or name in SAFE_TO_REPEAT else \
                    "; it may or may not have been applied"
                raise OwnerNotAnsweringError(not_answering(
                    self.root, conn.endpoint.pid, self._read_timeout,
                    f" to {target}.{name}{maybe}", maybe_applied=bool(maybe))) from exc
            except (httpx.TransportError, orjson.JSONDecodeError) as exc:
                self._drop(conn)
                if op == "get" or name in SAFE_TO_REPEAT:
                    continue
                raise OwnerLostError(
                    f"the process that owned {self.root} stopped while running {target}.{name}; "
                    "it may or may not have been applied. Check (e.g. list or search) and run "
                    f"it again if needed ({type(exc).__name__})") from exc

    def _owner_distils(self, target: str, name: str, kwargs: dict[str, Any]) -> dict[str, Any]:
        """`kwargs` without a drafter that cannot travel (a model client's `LLMDrafter`, the MCP
        server's sampling drafter), and a warning, once, that the owner's distiller and drafter
        write the lessons and drafts: `skills.propose(drafter=...)` on a client failed ("an
        LLMDrafter cannot be sent"), and this process's own distiller was passed over without
        a word, also for a write with `distill=True` (an agent face's). Drafts say who drafted
        them (`drafted_by`)."""
        drafter = kwargs.get("drafter")
        if drafter is not None:
            try:
                wire.encode(drafter)
            except Exception:  # noqa: BLE001 - an object of this process: it stays here
                kwargs = {k: v for k, v in kwargs.items() if k != "drafter"}
                self._warn_owner_distils(f"{target}.{name}", "its drafter")
        if self.distiller is not None:
            call = f"{target}.{name}" + ("(distill=True)" if target == "experiences"
                                         and name != "distill" else "")
            self._warn_owner_distils(call, "this process's distiller")
        return kwargs

    def _warn_owner_distils(self, call: str, what: str) -> None:
        if self._owner_distils_warned:
            return
        self._owner_distils_warned = True
        log.warning("skillbank: %s runs in the process that owns %s, which distils and drafts "
                    "with its own settings: %s is not used for it (only guidelines.learn reads "
                    "a critique with this process's distiller)", call, self.root, what)

    def _distil_here(self, args: Any, kwargs: dict[str, Any]) -> tuple[dict[str, Any], Any]:
        """Read the critique with this process's distiller; the owner gets the candidate rules
        (and the caller's report says who read them: the distiller's result, or None)."""
        if kwargs.get("candidates") is not None or kwargs.get("rules") is not None:
            return kwargs, None
        given = {**dict(zip(("critique", "task", "response", "score"), args)), **kwargs}
        if not isinstance(given.get("critique"), str):
            return kwargs, None  # the owner reports the bad argument
        found = self.distiller.rules_from_critique(
            given["critique"], task=given.get("task"), response=given.get("response"),
            score=given.get("score"))
        return {**kwargs, "candidates": list(found)}, found

    def _drop(self, conn: _Connection) -> None:
        with self._switch:
            if self._conn is conn:
                self._conn = None
        conn.retire()  # other threads' calls on it run to their end (hunt-handoff #1)

    def __getattr__(self, name: str) -> Any:
        if name.startswith("_"):
            raise AttributeError(name)
        return self._member("bank", name)

    # Who is asking (skillbank.scope) ---------------------------------------------------------
    def caller_scope(self) -> Any:
        """The scope a call from here runs as: the active one, else this process's default —
        the local user, admin of `settings.namespace` (trusted, as a local process always was)."""
        from skillbank import scope as scopes

        return scopes.current(self.settings.namespace)

    def scoped(self, scope: Any) -> Any:
        """This bank as seen by one caller (`skillbank.scoped.ScopedBank`): every call, sent to
        the owner or run here, carries `scope`."""
        from skillbank.scoped import ScopedBank

        return ScopedBank(self, scope)

    # The facade's own process-local parts ---------------------------------------------------------
    @property
    def background(self) -> Any:
        """This process's writer thread: the faces' writes leave the agent's turn here too."""
        with self._switch:
            if self._background is None:
                from skillbank.background import BackgroundWriter

                self._background = BackgroundWriter(name=f"skillbank-writer:{self.root.name}")
            return self._background

    def flush(self, timeout: float | None = None) -> bool:
        """Run every write handed to this process's writer, then make the owner's durable.

        False if writes were still running after `timeout`, or if an agent run of this process
        could not be recorded since the last flush."""
        done = self._background.flush(timeout) if self._background is not None else True
        # Closed: nothing of this process's is left to make durable (as on a closed bank).
        durable = self._closed or bool(self._member("bank", "flush")())
        return self.recording_failures.report() and durable and done

    def stats(self) -> dict[str, Any]:
        """The owner's counts, with this process's own failed recordings."""
        stats = dict(self._member("bank", "stats")())
        stats["recording_failures"] = self.recording_failures.count
        stats["served_note"] = self.note
        stats["takeover"] = self.takeover
        return stats

    @property
    def skill_roots(self) -> list[Path]:
        conn = self._ensure()
        return list(self._local.skill_roots) if conn is None else list(conn.skill_roots)

    def watch(self) -> None:
        """Keep the skill index current: asks the owner to watch (and watch here if we own)."""
        self._watching = True
        self._member("bank", "watch")()

    def _skills_watch(self, stop_event: threading.Event | None = None,
                      on_sync: Callable[[Any], None] | None = None) -> None:
        """`skills.watch` on a client: block, calling `on_sync(report)` for each change the
        owner's index takes from the skill folders, until `stop_event` is set.

        Follows the owner's change events by long polls answered on its event loop, so a
        watcher ties up no thread of the owner. If this process takes the root over, it
        watches the folders itself from then on."""
        import httpx

        stop = stop_event or threading.Event()
        seen = -1  # first ask only for the current number: what came before is already synced
        conn: _Connection | None = None
        while not stop.is_set():
            current = self._ensure()
            if current is None:  # this process owns the root now
                self._local.skills.watch(stop_event=stop, on_sync=on_sync)
                return
            if current is not conn:
                conn, seen = current, -1  # a new owner numbers its events afresh
            try:
                got = conn.changes(seen, wait=min(5.0, self._read_timeout))
            except _OwnerRaised as raised:
                raise raised.error from None
            except httpx.ReadTimeout as exc:
                # Silent for lock_timeout (a live owner streams a space every half second):
                # stopped or hung. Reconnecting would wait as long again; say who, now.
                # (Connect and pool timeouts, which a loaded machine raises, are retried below.)
                self._drop(conn)
                raise OwnerNotAnsweringError(not_answering(
                    self.root, conn.endpoint.pid, self._read_timeout, " to skills.watch")
                ) from exc
            except (httpx.TransportError, orjson.JSONDecodeError, _OwnerChanged):
                self._drop(conn)
                stop.wait(0.1)
                continue
            seen = int(got["seq"])
            for report in got["reports"]:
                if on_sync is not None and not stop.is_set():
                    on_sync(report)

    def _skills_start_watching(self, on_sync: Callable[[Any], None] | None = None
                               ) -> tuple[threading.Thread, threading.Event]:
        """Watch in a daemon thread of this process; set the returned event to stop."""
        stop = threading.Event()

        def watching() -> None:  # a watch that ends says why (a thread dies silently)
            try:
                self._skills_watch(stop, on_sync)
            except Exception:  # noqa: BLE001 - logged: the thread has no one else to tell
                log.error("skillbank: watching the skills of %s stopped", self.root,
                          exc_info=True)
                return
            if not stop.is_set():
                log.warning("skillbank: watching the skills of %s stopped", self.root)

        thread = threading.Thread(target=watching, daemon=True, name="skillbank-watch-client")
        thread.start()
        return thread, stop

    def stop_watching(self) -> bool:
        self._watching = False
        return self._local.stop_watching() if self._local is not None else True

    def close(self) -> None:
        if self._background is not None and not self._closed:
            self._background.flush()  # writes handed over before close still happen
            self._background.close()
        with self._switch:
            if self._closed:
                return
            self._closed = True
            conn, self._conn = self._conn, None
            local, self._local = self._local, None
        if conn is not None:
            conn.close()
        if local is not None:
            local.close()

    def __enter__(self) -> "BankClient":
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def __repr__(self) -> str:
        if self._local is not None:
            return f"<BankClient {self.root} (now the owner)>"
        pid = self.owner_pid
        return f"<BankClient {self.root} via owner pid {pid}>" if pid else f"<BankClient {self.root}>"
