"""The owner side: serve an open bank's public API to the other local processes.

A small Starlette app on the root's Unix socket, run by uvicorn in a daemon thread of the
owning process. Each request names a public method of the facade or of one of its memories;
arguments and results travel as `skillbank.sharing.wire` JSON. Calls run in the server's thread
pool against the same objects the owner's own faces use, so a client sees exactly what the owner
sees. Reads run side by side; writes from clients run one at a time, in the order they arrive.

Liveness: while a call runs, the reply streams a space every `KEEPALIVE` seconds before the JSON
(JSON allows leading whitespace). A client can therefore give every read a short deadline — an
owner that is stopped (Ctrl-Z, SIGSTOP) or hung sends nothing and the client says so after
`lock_timeout` — without cutting off a legitimately long call such as a reindex.

Reads that arrive together are answered together where it pays: concurrent searches of one
index share one Chroma query (skillbank.index_batch), with exactly the results each gets alone.
"""

from __future__ import annotations

import asyncio
import atexit
import contextlib
import hmac
import inspect
import logging
import os
import threading
import weakref
from pathlib import Path
from typing import TYPE_CHECKING, Any

import orjson

from skillbank.errors import InvalidInputError, NotFoundError, PathBlockedError
from skillbank.sharing import endpoint as ep
from skillbank.sharing import served, wire

if TYPE_CHECKING:
    from skillbank.bank import Skillbank

log = logging.getLogger("skillbank.sharing")

MEMORIES = ("skills", "experiences", "guidelines")
#: Facade members a client may not reach: process-local plumbing, not memory operations.
_PRIVATE_BANK = frozenset({"open", "close", "index", "embed", "client", "distiller",
                           "embedding_function", "write_lock", "stop_watching", "serve", "background",
                           "changes",
                           "sharing", "scoped", "caller_scope"})
_PRIVATE_MEMORY = frozenset({"start_watching", "close"})
TOKEN_HEADER = "x-skillbank-token"
#: Seconds between the spaces a running call's reply streams to show the owner is alive.
KEEPALIVE = 0.5
#: Calls that change nothing: they run concurrently; every other call takes the write turn.
READS = frozenset({
    "search", "load", "list", "get", "recall", "catalog", "names", "count", "counts", "stats",
    "context_for", "read_resource", "topics", "playbook", "pending", "drafts", "history",
    "playbook_digests", "change_marker",
    "validate", "resources", "find", "export", "search_mode", "keyword_reason", "changes_since", "identity",
    "search_candidates", "open_thread",
})


def describe(bank: "Skillbank") -> dict[str, dict[str, list[str]]]:
    """Which public names of the facade and of each memory are methods and which are values."""
    result = {}
    for target in ("bank", *MEMORIES):
        cls = type(bank) if target == "bank" else _memory_type(bank, target)
        hidden = _PRIVATE_BANK if target == "bank" else _PRIVATE_MEMORY
        methods, values = [], []
        for name in dir(cls):
            if name.startswith("_") or name in hidden or name in MEMORIES:
                continue
            static = inspect.getattr_static(cls, name)
            if isinstance(static, property):
                values.append(name)
            elif callable(static) and not isinstance(static, type):
                methods.append(name)
        result[target] = {"methods": sorted(methods), "values": sorted(values)}
    result["bank"]["values"] = sorted({*result["bank"]["values"], "root", "skill_roots"})
    return result


def _memory_type(bank: "Skillbank", target: str) -> type:
    """A memory's class, for `describe`. Where `<root>/skills` is a broken link the library
    cannot be made (each of its calls says why), and the owner greeted no client at all: the
    experiences and guidelines went with it (hunt-disk #6, session 29)."""
    try:
        return type(getattr(bank, target))
    except PathBlockedError:
        from skillbank.memories.skills.library import SkillLibrary

        return SkillLibrary


def _member(bank: "Skillbank", target: str, name: str) -> Any:
    if not isinstance(name, str) or not name or name.startswith("_"):
        raise InvalidInputError(f"{name!r} is not a public name")
    if target == "bank":
        if name in _PRIVATE_BANK or name in MEMORIES:
            raise InvalidInputError(f"{name!r} cannot be called from another process")
        obj: Any = bank
    elif target in MEMORIES:
        if name in _PRIVATE_MEMORY:
            raise InvalidInputError(f"{target}.{name} cannot be called from another process")
        obj = getattr(bank, target)
    else:
        raise InvalidInputError(f"unknown target {target!r}")
    try:
        return getattr(obj, name)
    except AttributeError:
        raise NotFoundError(f"the memory has no {target}.{name}; the owner process may run "
                            "another skillbank version") from None


def dispatch(bank: "Skillbank", request: dict[str, Any]) -> Any:
    """Run one call from a client against the owner's bank and return its (plain) result.

    The call runs as the client's caller (`scope` in the envelope: skillbank.scope), never as
    the owner: `namespace=None` and every method without a namespace parameter then mean the
    client's namespaces, and ids are checked against the client's scope."""
    from skillbank import scope as scopes

    from skillbank.memories.skills import dependencies

    caller = _caller(request)
    # The agent's tool names the client's face set (#26): skill search gates on them here too.
    tools = dependencies.check_available(request.get("agent_tools"))
    from skillbank.moments import caller_offset

    with scopes.using(caller), dependencies.agent_tools(tools), \
            caller_offset(request.get("utc_offset")):
        target, op, name = request.get("target"), request.get("op", "call"), request.get("name")
        if op == "contains":  # `x in client.skills`: the memory's own membership test
            if target not in MEMORIES:
                raise InvalidInputError(f"unknown target {target!r}")
            args = wire.decode(request.get("args") or [])
            if not isinstance(args, list) or len(args) != 1:
                raise InvalidInputError("a membership test takes one item")
            return args[0] in getattr(bank, target)
        member = _member(bank, target, name)
        if op == "get":
            return member
        if op != "call" or not callable(member):
            raise InvalidInputError(f"{target}.{name} is not callable")
        args = wire.decode(request.get("args") or [])
        kwargs = wire.decode(request.get("kwargs") or {})
        if not isinstance(args, list) or not isinstance(kwargs, dict):
            raise InvalidInputError("args must be a list and kwargs an object")
        return member(*args, **kwargs)


def _caller(request: dict[str, Any]) -> Any:
    """The scope a call carries; a client of an earlier version sent only its namespace (it
    then runs as that namespace's local user, as it did). Malformed: InvalidInputError."""
    from skillbank import scope as scopes

    if "scope" in request:
        return scopes.Scope.from_wire(request["scope"])
    namespace = request.get("namespace")
    if namespace is None:
        raise InvalidInputError("a call must carry its caller's scope")
    return scopes.default_scope(scopes.check_namespace(namespace))


class InFlight:
    """Counts the clients' calls the owner has taken, so closing waits for them to end.

    A call counts from the moment it is admitted (before its reply begins), not from when a
    pool thread picks it up: a write admitted just before the owner started closing was not
    yet counted, so closing did not wait for it, and the process ended under it (a client
    write queued behind others was cut the same way: test_concurrency, under load)."""

    def __init__(self) -> None:
        self._running = 0
        self._changed = threading.Condition()
        #: Set when the owner starts closing: new calls are turned away unrun (401, which a
        #: client takes as "send it to the next owner"), so none is cut half-way.
        self.closing = threading.Event()

    def admit(self) -> "Ticket | None":
        """A ticket for one call, or None once closing began (checked and counted at once)."""
        with self._changed:
            if self.closing.is_set():
                return None
            self._running += 1
            return Ticket(self)

    def close(self) -> None:
        with self._changed:
            self.closing.set()

    def _release(self) -> None:
        with self._changed:
            self._running -= 1
            self._changed.notify_all()

    def wait_idle(self, timeout: float) -> bool:
        with self._changed:
            return self._changed.wait_for(lambda: self._running == 0, timeout)


class Ticket:
    """One admitted call: released once, by its work when that began, else by its reply."""

    def __init__(self, flight: InFlight) -> None:
        self._flight = flight
        self._lock = threading.Lock()
        self._released = False
        self.started = False  # set on the event loop just before the work is handed to a thread

    def release(self) -> None:
        with self._lock:
            if self._released:
                return
            self._released = True
        self._flight._release()


def _app(bank: "Skillbank", endpoint: ep.Endpoint, events: Any = None,
         flight: InFlight | None = None) -> Any:
    from starlette.applications import Starlette
    from starlette.concurrency import run_in_threadpool
    from starlette.requests import Request
    from starlette.responses import Response, StreamingResponse
    from starlette.routing import Route

    from skillbank import index_batch  # the owner's side only (a client loads no numpy)

    token = endpoint.token.encode()
    writes = threading.Lock()  # one client write at a time (reads never wait for it)

    def kept_alive(work: Any, *args: Any, ticket: Ticket | None = None) -> Any:
        """Run `work(*args) -> bytes` in the thread pool; stream spaces until it is done.

        The work begins only once the reply's headers are out (StreamingResponse sends them
        before it reads the body): a client whose connection closed before any reply began
        therefore knows the call never ran, and sends it again (`client._NotRun`)."""
        async def body() -> Any:
            if ticket is not None:
                ticket.started = True
            task = asyncio.ensure_future(run_in_threadpool(work, *args))
            while True:
                done, _ = await asyncio.wait({task}, timeout=KEEPALIVE)
                if done:
                    break
                yield b" "
            yield task.result()

        response = StreamingResponse(body(), media_type="application/json")
        return response if ticket is None else TicketedReply(ticket, response)

    def reply(payload: Any, status: int = 200) -> Response:
        return Response(orjson.dumps(payload), status_code=status, media_type="application/json")

    def authorised(request: Request) -> bool:
        given = request.headers.get(TOKEN_HEADER, "").encode()
        return hmac.compare_digest(given, token)

    from skillbank.sharing.feed import ChangeEvents, follow_syncs

    events = events if events is not None else ChangeEvents()

    def greet(nonce: str) -> bytes:
        members = describe(bank)
        # `<root>/skills` a broken link: each skill call says so; the other memories are
        # served all the same (hunt-disk #6, session 29). Not followed nor watched then.
        with contextlib.suppress(PathBlockedError):
            follow_syncs(bank.skills, events)  # clients' watch() follows these (see /changes)
            # From now on another process relies on this one's index: keep it current with
            # the skill folders (clients then need not re-scan them before each read).
            bank.watch()
        return orjson.dumps({"proof": endpoint.proof(nonce), "pid": endpoint.pid,
                             "root": endpoint.root, "root_id": endpoint.root_id,
                             "namespace": bank.settings.namespace,
                             "members": members, "served": served.read(bank.root),
                             "skill_roots": [str(p) for p in bank.skill_roots]})

    async def hello(request: Request) -> Response:
        if not authorised(request):
            return reply({"error": {"message": "wrong or missing secret"}}, 401)
        try:
            body = orjson.loads(await request.body() or b"{}")
        except orjson.JSONDecodeError:
            body = {}
        nonce = str(body.get("nonce", "")) if isinstance(body, dict) else ""
        return kept_alive(greet, nonce)

    flight = flight if flight is not None else InFlight()

    def call(ticket: Ticket, request_body: bytes) -> bytes:
        try:
            return run_call(request_body)
        finally:
            ticket.release()

    def run_call(request_body: bytes) -> bytes:
        try:
            request = orjson.loads(request_body)
            if not isinstance(request, dict):
                raise InvalidInputError("a call must be a JSON object")
            if request.get("op", "call") in ("get", "contains") or request.get("name") in READS:
                with index_batch.serving():  # concurrent searches share Chroma queries
                    result = dispatch(bank, request)
            else:
                with writes:
                    result = dispatch(bank, request)
            return orjson.dumps({"ok": wire.encode(result)})
        except Exception as exc:  # noqa: BLE001 - every error goes back to the caller
            if not isinstance(exc, (InvalidInputError, NotFoundError)):
                log.debug("call %s failed", request_body[:200], exc_info=True)
            try:
                return orjson.dumps({"error": wire.encode_error(exc)})
            except Exception:  # noqa: BLE001 - an error that cannot be written: say what it was
                return orjson.dumps({"error": {"cls": wire._qualified(type(exc)),
                                               "message": repr(str(exc))[:2000]}})

    async def call_route(request: Request) -> Response:
        ticket = flight.admit() if authorised(request) else None
        if ticket is None:
            return reply({"error": {"message": "wrong or missing secret, or closing"}}, 401)
        try:
            request_body = await request.body()
        except BaseException:
            ticket.release()
            raise
        return kept_alive(call, ticket, request_body, ticket=ticket)

    async def changes(request: Request) -> Response:
        """Skill change events after `since`, waiting up to `wait` s for one: a long poll on
        the event loop, so a watching client holds no thread of the owner."""
        if not authorised(request):
            return reply({"error": {"message": "wrong or missing secret"}}, 401)
        try:
            asked = orjson.loads(await request.body() or b"{}")
            since = int(asked.get("since", -1))
            wait = min(max(float(asked.get("wait", 5.0)), 0.0), 30.0)
        except (orjson.JSONDecodeError, AttributeError, TypeError, ValueError):
            return reply({"error": wire.encode_error(InvalidInputError("bad change request"))})

        async def body() -> Any:
            loop = asyncio.get_running_loop()
            end = loop.time() + wait
            beat = loop.time() + KEEPALIVE
            while True:
                latest, reports, dropped = events.since(since)
                if reports or since < 0 or loop.time() >= end:
                    break
                await asyncio.sleep(0.1)
                if loop.time() >= beat:
                    beat = loop.time() + KEEPALIVE
                    yield b" "
            yield orjson.dumps({"ok": {"seq": latest, "reports": wire.encode(reports),
                                       "dropped": dropped}})

        return StreamingResponse(body(), media_type="application/json")

    return Starlette(routes=[Route("/hello", hello, methods=["POST"]),
                             Route("/call", call_route, methods=["POST"]),
                             Route("/changes", changes, methods=["POST"])])


class TicketedReply:
    """A reply (an ASGI app) that gives its ticket back if it ended before its work began
    (the client went away first); the work, once begun, gives it back itself when done."""

    def __init__(self, ticket: Ticket, response: Any) -> None:
        self._ticket = ticket
        self._response = response

    async def __call__(self, scope: Any, receive: Any, send: Any) -> None:
        try:
            await self._response(scope, receive, send)
        finally:
            if not self._ticket.started:
                self._ticket.release()


def _stop_at_exit(server: "OwnerServer") -> None:
    """Stop `server` at the interpreter's exit (atexit), if it still serves then.

    At atexit, not as threads are joined (`threading._register_atexit`): the owner serves as
    long as the app's own threads run, and a forked child (multiprocessing's default on Linux)
    runs those hooks and stopped its parent's server (review 2 of session 33). A call admitted
    after `concurrent.futures` shut down runs its searches one after another
    (`context._parallel`). A weak reference: a closed bank is not kept alive until the end."""
    ref = weakref.ref(server)

    def stop() -> None:
        live = ref()
        try:
            if live is not None:
                live.stop()
        except Exception:  # noqa: BLE001 - the other exit hooks (a flush) must run all the same
            log.warning("skillbank: could not stop serving %s at exit", live.root, exc_info=True)

    atexit.register(stop)


class OwnerServer:
    """Serves `bank` on the root's socket from a daemon thread until `stop()`."""

    def __init__(self, bank: "Skillbank") -> None:
        self.bank = bank
        self.root = Path(bank.root)
        self.endpoint = ep.new_endpoint(self.root)
        self._server: Any = None
        self._thread: threading.Thread | None = None
        self.ready = threading.Event()
        self.error: BaseException | None = None
        self._stopping = threading.Event()
        self._flight = InFlight()

    def start(self) -> "OwnerServer":
        """Bind the socket and publish the endpoint from a background thread (open never waits).

        A process that ends without `bank.close()` stops serving at its exit as close does
        (before the other exit hooks flush: they run last-registered first): its server, a
        daemon thread, went on admitting clients' calls while the process ended and died under
        them, cutting writes it had not run (hunt-handoff #2, session 33)."""
        _stop_at_exit(self)
        self._thread = threading.Thread(target=self._run, name="skillbank-owner", daemon=True)
        self._thread.start()
        return self

    def _run(self) -> None:
        try:
            import uvicorn

            if self._stopping.is_set():
                return  # a short-lived process closed the bank before serving began
            sock = ep.bind_socket(self.endpoint.socket)
            config = uvicorn.Config(_app(self.bank, self.endpoint, flight=self._flight),
                                    log_level="warning",
                                    lifespan="off", access_log=False, timeout_keep_alive=60)
            self._server = uvicorn.Server(config)
            if self._stopping.is_set():
                sock.close()
                return
            ep.write_endpoint(self.root, self.endpoint)
            ep.remove_holder(self.root, self.endpoint.pid)  # "opening" (sharing.open_shared)
            self.ready.set()
            self._server.run(sockets=[sock])
        except BaseException as exc:  # noqa: BLE001 - clients then report who holds the root
            self.error = exc
            ep.remove_holder(self.root, self.endpoint.pid)  # not "opening" it any more
            if not self._stopping.is_set():
                log.warning("skillbank: could not serve %s to other processes: %s", self.root, exc)
        finally:
            self.ready.set()

    def stop(self, timeout: float = 5.0, calls_timeout: float = 120.0) -> None:
        """Stop answering, withdraw the endpoint; calls already accepted run to their end (up to
        `calls_timeout` s: the bank is still open), other requests (a watch's long poll) get
        `timeout` s."""
        if self._stopping.is_set() or os.getpid() != self.endpoint.pid:
            return  # stopped already (close, then the exit hook), or a forked child's copy
        self._stopping.set()
        with contextlib.suppress(OSError):  # a read-only root: clients wait lock_timeout only
            ep.write_holder(self.root, self.endpoint.pid, "closing", calls_timeout + timeout)
        ep.remove_endpoint(self.root, self.endpoint)
        self._flight.close()  # new calls go to the next owner, unrun
        if not self._flight.wait_idle(calls_timeout):
            log.warning("skillbank: closing %s with calls from other processes still running",
                        self.root)
        if self._server is not None:
            self._server.should_exit = True
        if self._thread is not None:
            self._thread.join(timeout)
        ep.remove_endpoint(self.root, self.endpoint)  # in case it was published meanwhile

    def closed(self) -> None:
        """The root's lock is being let go: the closing note goes first (so a note of the next
        holder, written once it has the lock, is never the one removed)."""
        ep.remove_holder(self.root, self.endpoint.pid)
