"""Structured logs of a `skillbank server` worker: one JSON object per line, one line per call.

Why JSON lines: a team runs several workers behind a load balancer and reads their logs in a
collector (Loki, CloudWatch, `docker compose logs`), which parses JSON without a custom pattern;
every line carries the worker's pid. A tool call's line says who called (principal, namespace,
face), which tool, how long it took and how it ended; a failed call names the dependency that
failed (PostgreSQL or Chroma) and the error, whose text says the host and what to check.
Arguments and results are never logged (they hold people's memory). Nor is a failed call's
message: it quotes the offending argument (a guideline's text, a skill name, an id), so
`error` is the kind of failure, or the failed dependency's own message (hunt-oidc #3,
session 26).
"""

from __future__ import annotations

import json
import logging
import sys
import time
from datetime import datetime, timezone
from typing import Any, Callable

from skillbank.team.metrics import Metrics, collecting_failures, dependency_named

calls_log = logging.getLogger("skillbank.calls")
#: The `tool` label and log field of a call naming no tool of this server.
UNKNOWN_TOOL = "unknown"
#: Fields of a LogRecord that are not the caller's `extra`.
_STANDARD = set(logging.makeLogRecord({}).__dict__) | {"message", "asctime"}


class JsonFormatter(logging.Formatter):
    """`{"time", "level", "logger", "message", "pid", ...extra}` on one line."""

    def format(self, record: logging.LogRecord) -> str:
        entry: dict[str, Any] = {
            "time": datetime.fromtimestamp(record.created, timezone.utc).isoformat(
                timespec="milliseconds"),
            "level": record.levelname.lower(),
            "logger": record.name,
            "message": record.getMessage(),
            "pid": record.process,
        }
        entry.update({k: v for k, v in record.__dict__.items() if k not in _STANDARD})
        if record.exc_info:
            entry["exception"] = self.formatException(record.exc_info)
        return json.dumps(entry, default=str, ensure_ascii=False)


def configure(level: str, fmt: str = "json") -> None:
    """Logs to stderr: JSON lines (`fmt="json"`, the default for workers) or plain text. Call
    lines are INFO, so they show at any level up to info (`--log-level warning` keeps them:
    the call logger has its own level)."""
    handler = logging.StreamHandler(sys.stderr)
    handler.setFormatter(JsonFormatter() if fmt == "json" else logging.Formatter(
        "%(asctime)s %(levelname)s %(name)s: %(message)s"))
    root = logging.getLogger()
    root.handlers[:] = [handler]
    root.setLevel(level.upper())
    calls_log.setLevel(logging.INFO)


#: The kinds a failed call is logged as, by how the MCP server's message begins
#: (mcp_server/messages.py, mcp_server/server.py); anything else is a `tool_error`.
ERROR_KINDS = (("Invalid arguments for ", "invalid_arguments"),
               ("There is no tool ", "unknown_tool"))
DEPENDENCY_NAMES = {"postgres": "PostgreSQL", "chroma": "Chroma"}


def error_kind(error: str) -> str:
    """What kind of failure `error` (a tool's error message) is, in words that quote nothing
    the caller sent."""
    return next((kind for start, kind in ERROR_KINDS if error.startswith(start)), "tool_error")


def logged_error(error: str, dependency: str | None, detail: str | None,
                 raised: str | None = None) -> str:
    """The `error` field of a failed call's log line. A failed dependency: its own message
    (noted where the store or the Chroma client failed: host, what to check, no arguments).
    Otherwise the kind of failure (`raised`: the type of an exception the call raised), never
    the tool's message, which quotes arguments."""
    if dependency is None:
        return raised or error_kind(error)
    if detail:
        return detail[:1000]
    return (f"{DEPENDENCY_NAMES[dependency]} failed (the tool's message is not logged: it can "
            "quote the arguments); check /readyz and the dependency's own logs")


def _error_text(result: Any) -> str | None:
    """The error text of a tools/call result (a model or a dict), None when it succeeded."""
    is_error = getattr(result, "is_error", None)
    content = getattr(result, "content", None)
    if isinstance(result, dict):
        is_error = result.get("isError", result.get("is_error"))
        content = result.get("content")
    if not is_error:
        return None
    for block in content or ():
        text = getattr(block, "text", None) if not isinstance(block, dict) else block.get("text")
        if text:
            return str(text)
    return "tool error"


class CallObserver:
    """MCP server middleware (`server.middleware.append(observer)`): every tools/call is timed,
    counted in the metrics and logged as one JSON line.

    `known(name)` says whether the server has a tool of that name. A name it does not know is
    counted and logged as `unknown`: the name is the caller's input, and a label value per
    made-up name would grow the worker's registry (and Prometheus) without bound."""

    def __init__(self, metrics: Metrics, known: Callable[[str], bool] | None = None) -> None:
        self.metrics = metrics
        self.known = known

    async def __call__(self, ctx: Any, call_next: Any) -> Any:
        if getattr(ctx, "method", None) != "tools/call":
            return await call_next(ctx)
        params = getattr(ctx, "params", None) or {}
        tool = str(params.get("name", "?") if isinstance(params, dict) else "?")[:64]
        if self.known is not None and not self.known(tool):
            tool = UNKNOWN_TOOL
        started = time.perf_counter()
        error: str | None = None
        raised: str | None = None
        failures: list[tuple[str, str]] = []
        try:
            with collecting_failures() as failures:
                result = await call_next(ctx)
            error = _error_text(result)
            return result
        except BaseException as exc:
            error = str(exc) or type(exc).__name__
            raised = type(exc).__name__  # logged instead: the message may quote arguments
            raise
        finally:
            self._record(tool, time.perf_counter() - started, error, failures, raised)

    def _record(self, tool: str, seconds: float, error: str | None,
                failures: list[tuple[str, str]], raised: str | None = None) -> None:
        from skillbank import scope as scopes

        dependency = detail = None
        if error is not None:
            named = dependency_named(error)
            dependency = named or (failures[0][0] if failures else None)
            detail = next((m for d, m in failures if d == dependency), None)
        self.metrics.observe_tool(tool, seconds, error, dependency)
        caller = scopes.active()
        fields: dict[str, Any] = {
            "event": "tool_call", "tool": tool, "outcome": "error" if error else "ok",
            "ms": round(seconds * 1000, 2),
            "principal": caller.principal if caller else "server",
            "namespace": caller.namespace if caller else None,
            "face": caller.face if caller else "mcp-http",
        }
        if error is not None:
            fields["error"] = logged_error(error, dependency, detail, raised)
            if dependency is not None:
                fields["dependency"] = DEPENDENCY_NAMES[dependency]
        level = logging.WARNING if error is not None and dependency else logging.INFO
        calls_log.log(level, f"{tool} {fields['outcome']} in {fields['ms']} ms", extra=fields)
