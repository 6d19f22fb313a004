"""Prometheus metrics of a `skillbank server` worker, served at `/metrics` (prometheus-client).

Per tool: calls by outcome, latency, errors by the dependency that failed. Per dependency
(PostgreSQL, Chroma): calls, latency, errors. Each worker keeps its own registry and answers for
itself; Prometheus scrapes every worker (they are stateless, so per-worker series add up).

Where the dependency figures come from, and why there: PostgreSQL is timed where the store
lends a pooled connection (`Database.connection`: every query and transaction of the store goes
through it; the time is how long the connection was held), Chroma where its HttpClient sends a
request (the httpx session every call to a Chroma server goes through). Both are wrapped on the
bank's own instances when the worker starts, so no memory module knows about metrics. A failing
dependency is also noted on the current call (`note_failure`), which is how a tool error and its
log line name PostgreSQL or Chroma.
"""

from __future__ import annotations

import contextlib
import contextvars
import threading
import time
from typing import Any, Callable, Iterator

POSTGRES = "postgres"
CHROMA = "chroma"
#: The failures of dependencies seen during the current tool call (a list, shared with the
#: worker threads the call runs on: they get a copy of the context, the same list).
_failures: contextvars.ContextVar[list[tuple[str, str]] | None] = contextvars.ContextVar(
    "skillbank_dependency_failures", default=None)


#: How deep the current thread is inside `Database.connection` (its getconn is counted there).
_inside = threading.local()


def note_failure(dependency: str, message: str) -> None:
    found = _failures.get()
    if found is not None:
        found.append((dependency, message))


@contextlib.contextmanager
def collecting_failures() -> Iterator[list[tuple[str, str]]]:
    found: list[tuple[str, str]] = []
    token = _failures.set(found)
    try:
        yield found
    finally:
        _failures.reset(token)


def dependency_named(message: str) -> str | None:
    """Which dependency an error message names (the store's and the index's errors say)."""
    if "PostgreSQL" in message or "database_url" in message:
        return POSTGRES
    if "Chroma" in message or "chroma_url" in message:
        return CHROMA
    return None


class Metrics:
    """One worker's metrics, in a registry of its own (two apps in one process never clash)."""

    def __init__(self) -> None:
        from prometheus_client import CollectorRegistry, Counter, Histogram

        self._untimed: Any = None  # a bank whose Chroma client could not be timed yet
        self.registry = CollectorRegistry()
        self.tool_calls = Counter("skillbank_tool_calls", "MCP tool calls, by tool and outcome",
                                  ["tool", "outcome"], registry=self.registry)
        self.tool_seconds = Histogram("skillbank_tool_call_seconds",
                                      "Latency of MCP tool calls, by tool", ["tool"],
                                      registry=self.registry)
        self.tool_errors = Counter("skillbank_tool_errors",
                                   "MCP tool calls that failed, by tool and the dependency that "
                                   "failed (none: the caller's input or the memory said no)",
                                   ["tool", "dependency"], registry=self.registry)
        self.dependency_calls = Counter("skillbank_dependency_calls",
                                        "Calls to a dependency (postgres, chroma)",
                                        ["dependency"], registry=self.registry)
        self.dependency_seconds = Histogram("skillbank_dependency_seconds",
                                            "Latency of calls to a dependency", ["dependency"],
                                            registry=self.registry)
        self.dependency_errors = Counter("skillbank_dependency_errors",
                                         "Calls to a dependency that failed (unreachable, "
                                         "refused, a server error)", ["dependency"],
                                         registry=self.registry)

    def asgi_app(self) -> Any:
        from prometheus_client import make_asgi_app

        return make_asgi_app(registry=self.registry)

    def observe_dependency(self, dependency: str, seconds: float, error: str | None) -> None:
        self.dependency_calls.labels(dependency).inc()
        self.dependency_seconds.labels(dependency).observe(seconds)
        if error is not None:
            self.dependency_errors.labels(dependency).inc()
            note_failure(dependency, error)

    def observe_tool(self, tool: str, seconds: float, error: str | None,
                     dependency: str | None) -> None:
        if self._untimed is not None and getattr(self._untimed, "_client", None) is not None:
            self._time_chroma(self._untimed)  # its client is open now: time it from here
        self.tool_calls.labels(tool, "error" if error is not None else "ok").inc()
        self.tool_seconds.labels(tool).observe(seconds)
        if error is not None:
            self.tool_errors.labels(tool, dependency or "none").inc()

    # The seams ------------------------------------------------------------------------------
    def instrument_bank(self, bank: Any) -> list[str]:
        """Time the bank's PostgreSQL connections and Chroma requests; returns what it wraps.
        Also reports whether its skills checkout follows its branch (`SkillsFollowing`)."""
        self.registry.register(SkillsFollowing(bank))
        done = []
        db = getattr(getattr(bank, "store", None), "db", None)
        if db is not None and callable(getattr(db, "connection", None)):
            db.connection = self._timed_connection(db.connection)
            pool = getattr(db, "pool", None)
            if pool is not None and callable(getattr(pool, "getconn", None)):
                # Locks and the like borrow a connection from the pool directly.
                pool.getconn = self._timed_getconn(pool.getconn, db)
            done.append(POSTGRES)
        done += self._time_chroma(bank)
        return done

    def _time_chroma(self, bank: Any) -> list[str]:
        """Time the Chroma client's requests; a worker started while the server was down has
        no client yet (it answers by keyword: index_mirror), so the next tool call tries again
        (the worker failed to start here)."""
        from skillbank.index_outage import ChromaUnavailableError

        self._untimed = None
        try:
            session = bank.client._server._session  # chromadb's HttpClient: one httpx session
        except AttributeError:  # embedded Chroma: no network dependency to time
            session = None
        except ChromaUnavailableError:
            self._untimed = bank
            return []
        if session is not None and not getattr(session, "_skillbank_timed", False):
            session.request = self._timed_request(session.request)
            session._skillbank_timed = True
            return [CHROMA]
        return []

    def watch_tokens(self, tokens: Any) -> None:
        """Report whether the tokens file on disk is the one in force (`TokensFileStale`)."""
        self.registry.register(TokensFileStale(tokens))

    def _timed_connection(self, connection: Callable[[], Any]) -> Callable[[], Any]:
        metrics = self

        @contextlib.contextmanager
        def timed() -> Iterator[Any]:
            from skillbank.store.base import StoreUnavailableError

            started = time.perf_counter()
            error: str | None = None
            _inside.depth = getattr(_inside, "depth", 0) + 1
            try:
                with connection() as conn:
                    yield conn
            except StoreUnavailableError as exc:
                error = str(exc)
                raise
            finally:
                _inside.depth -= 1
                metrics.observe_dependency(POSTGRES, time.perf_counter() - started, error)

        return timed

    def _timed_getconn(self, getconn: Callable[..., Any], db: Any) -> Callable[..., Any]:
        """The pool's own `getconn`, counted only when called outside `Database.connection`
        (which counts itself): a failure to get a connection is an error of PostgreSQL."""
        metrics = self

        def timed(*args: Any, **kwargs: Any) -> Any:
            if getattr(_inside, "depth", 0):
                return getconn(*args, **kwargs)
            started = time.perf_counter()
            try:
                conn = getconn(*args, **kwargs)
            except Exception as exc:
                from skillbank.store.postgres.db import explain

                try:
                    message = str(explain(db.url, exc))
                except Exception:  # noqa: BLE001 - the message is only for the log
                    message = f"PostgreSQL: {exc}"
                metrics.observe_dependency(POSTGRES, time.perf_counter() - started, message)
                raise
            metrics.observe_dependency(POSTGRES, time.perf_counter() - started, None)
            return conn

        return timed

    def _timed_request(self, request: Callable[..., Any]) -> Callable[..., Any]:
        metrics = self

        def timed(method: str, url: Any, *args: Any, **kwargs: Any) -> Any:
            import httpx

            started = time.perf_counter()
            error: str | None = None
            try:
                response = request(method, url, *args, **kwargs)
            except httpx.TransportError as exc:
                host = httpx.URL(str(url)).host
                error = (f"Chroma at {host} does not answer ({type(exc).__name__}: {exc}); "
                         "check that it is running and chroma_url (SKILLBANK_CHROMA_URL)")
                raise
            finally:
                if error is not None:
                    metrics.observe_dependency(CHROMA, time.perf_counter() - started, error)
            if response.status_code >= 500:
                error = (f"Chroma at {response.url.host} answered {response.status_code}; "
                         "check its logs")
            metrics.observe_dependency(CHROMA, time.perf_counter() - started, error)
            return response

        return timed


class SkillsFollowing:
    """A collector: `skillbank_skills_not_following{cause}` is 1 while this worker's skills
    checkout cannot follow its branch, by cause: `remote` (the branch was rewritten or deleted
    on the remote; the worker stays ready and serves its last commit, so /readyz alone would
    not show it to an alert) or `local` (local changes or an unmerged index; /readyz is 503).
    No samples when skills are not served from git. Read at scrape time, never cached."""

    NAME = "skillbank_skills_not_following"
    HELP = ("1 while the skills checkout cannot follow its branch: cause=remote (rewritten or "
            "deleted branch; still ready) or cause=local (the checkout itself; not ready)")

    def __init__(self, bank: Any) -> None:
        self.bank = bank

    def describe(self) -> list[Any]:
        from prometheus_client.core import GaugeMetricFamily

        return [GaugeMetricFamily(self.NAME, self.HELP, labels=["cause"])]

    def collect(self) -> Iterator[Any]:
        from prometheus_client.core import GaugeMetricFamily

        from skillbank.team.skills_repo import served

        status = served(self.bank)
        if status is None:
            return
        family = GaugeMetricFamily(self.NAME, self.HELP, labels=["cause"])
        family.add_metric(["remote"], 1.0 if status.get("behind") else 0.0)
        family.add_metric(["local"], 1.0 if status.get("stuck") else 0.0)
        yield family


class TokensFileStale:
    """A collector: `skillbank_tokens_file_stale` is 1 while the tokens file's last edit could
    not be read (the worker keeps the last good tokens: a member removed in a broken edit still
    gets in) or the file is gone, else 0. Re-read at scrape time, so an alert fires without
    waiting for a request (team hunt, session 19: only a log line said so)."""

    NAME = "skillbank_tokens_file_stale"
    HELP = ("1 while the tokens file on disk is not the one in force (a broken edit: the last "
            "good tokens are still accepted; or the file is gone); see /readyz for the line")

    def __init__(self, tokens: Any) -> None:
        self.tokens = tokens

    def describe(self) -> list[Any]:
        from prometheus_client.core import GaugeMetricFamily

        return [GaugeMetricFamily(self.NAME, self.HELP)]

    def collect(self) -> Iterator[Any]:
        from prometheus_client.core import GaugeMetricFamily

        in_force = self.tokens.status()["in_force"]
        yield GaugeMetricFamily(self.NAME, self.HELP, value=0.0 if in_force else 1.0)
