"""LlamaIndex's namespace templates (``namespace="{user_id}"``), as in the LangChain middleware:
filled from the memory's session and what the caller passed to ``memory.aget(...)`` (a tool
call: the session of the `Memory` its agent runs with), then from the workflow's Context store
of the running step (or the one a caller hands over: ``arecord_run(..., ctx=ctx)``). Moved out
of `llamaindex` (kept under 700 lines); the pieces there import it.

A run's namespace is known inside its workflow steps only. `RunNamespaces` keeps it per `Memory`
object for what comes after the run (``arecord_run(memory)``): never per session name, which
two users' Memories may share (``session_id="chat"``, as LlamaIndex's examples name it); keyed
by the name, one user's run was filed in the other's namespace, and a run with no user id was
given the memory of the last user of its session name (hunt-llama #1 and #2, session 35).
"""

from __future__ import annotations

import contextvars
import logging
import threading
import weakref
from collections import OrderedDict
from typing import Any, Optional, Sequence

from skillbank.adapters._runs import fill_namespace, template_fields
from skillbank.errors import InvalidInputError
from skillbank.scope import check_namespace

__all__ = ["resolve_namespace", "step_session", "step_memory", "RunNamespaces"]

log = logging.getLogger("skillbank.adapters.llamaindex")  # the adapter's own logger, as before

#: The namespace a templated piece resolved for the current call (set by its async method, read
#: by the sync work it hands to a thread: `asyncio.to_thread` copies context variables).
_RESOLVED: contextvars.ContextVar[Optional[str]] = contextvars.ContextVar(
    "skillbank_llamaindex_namespace", default=None)


#: The session of the agent run a tool call is in (set by the tool's async method, read by the
#: sync work it hands to a thread), None outside a run.
_SESSION: contextvars.ContextVar[Optional[str]] = contextvars.ContextVar(
    "skillbank_llamaindex_session", default=None)


async def step_memory(ctx: Any = None) -> Any:
    """The `Memory` the agent of the running workflow step uses (``agent.run(...,
    memory=memory)``: agent workflows keep it in the Context store as ``"memory"``), or of
    `ctx` when given; None outside a step, or with no memory there."""
    try:
        if ctx is None:
            from workflows import Context

            ctx = Context.get_step_context()
        return await ctx.store.get("memory", default=None)
    except Exception:  # noqa: BLE001 - not inside a workflow step, or no memory there
        return None


async def step_session(ctx: Any = None) -> Optional[str]:
    """The session id of the `Memory` the running workflow step's agent uses (`step_memory`),
    or None outside a step: the conversation whose open record a memory tool must not
    recall."""
    session = getattr(await step_memory(ctx), "session_id", None)
    return str(session) if session is not None and str(session).strip() else None


async def _step_values(fields: Sequence[str], ctx: Any = None) -> dict[str, Any]:
    """`fields` from the workflow's `Context` store of the running step (`FunctionAgent` and
    other agent workflows): ``await ctx.store.set("user_id", "alice")`` before the run; or from
    `ctx`'s store when given (a run's Context, after the run)."""
    if ctx is None:
        try:
            from workflows import Context

            ctx = Context.get_step_context()
        except Exception:  # noqa: BLE001 - not inside a workflow step: no values from there
            return {}
    values: dict[str, Any] = {}
    for field in fields:
        try:
            value = await ctx.store.get(field, default=None)
        except Exception:  # noqa: BLE001 - a typed store without the key, or no store
            value = None
        if value is not None:
            values[field] = value
    return values


async def resolve_namespace(template: Optional[str], values: Optional[dict[str, Any]] = None,
                            ctx: Any = None) -> Optional[str]:
    """The namespace of this call: `template` filled from `values` (the memory's session:
    ``session_id`` and what the caller passed to ``memory.aget(...)``), then from the
    workflow's Context store: the running step's, or `ctx`'s when given. A missing value
    raises `InvalidInputError` naming it."""
    fields = template_fields(template)
    if not fields:
        return template
    known = {k: v for k, v in (values or {}).items() if v is not None and str(v).strip()}
    if "session_id" in fields and "session_id" not in known:
        # The session of the Memory given to agent.run, as its memory block fills it: a tool
        # call is given none, and every write of `SkillbankToolSpec(namespace="{session_id}")`
        # was refused (hunt-async #4, session 34).
        session = await step_session(ctx)
        if session is not None:
            known["session_id"] = session
    missing = [f for f in fields if f not in known]
    if missing:
        known.update(await _step_values(missing, ctx))
    try:
        return fill_namespace(template, known)
    except InvalidInputError as exc:
        field = next((f for f in fields if f not in known), fields[0])
        where = ("run the agent with a Memory that has one (agent.run(..., memory=memory))"
                 if field == "session_id" else f"pass it to memory.aget({field}=...)")
        raise InvalidInputError(
            f"namespace template {template!r} needs {field!r}: set it in the workflow's Context "
            f"(await ctx.store.set({field!r}, ...) before agent.run(..., ctx=ctx)), or "
            f"{where}") from exc


class RunNamespaces:
    """Per `Memory` object (held weakly, the last `MAX` used): the namespace its latest run read
    memory with, for the writes after the run, where no Context store is current.

    A read outside a workflow step (a custom loop's `memory.aget(...)`) names no Memory, only
    its session: after one on a Memory's session name, that Memory's note is not used (it may
    be an earlier run's, another user's: review 6, session 35); the write needs `ctx=` or
    `values=`."""

    MAX = 1024

    def __init__(self) -> None:
        self._by_id: OrderedDict[int, tuple[weakref.ref, str, int]] = OrderedDict()
        self._loose: OrderedDict[Any, int] = OrderedDict()  # session -> the last loose read
        self._count = 0
        self._lock = threading.Lock()

    def loose_read(self, session: Any) -> None:
        """A read of `session` outside a workflow step (no Memory to note)."""
        with self._lock:
            self._count += 1
            self._loose[session] = self._count
            self._loose.move_to_end(session)
            while len(self._loose) > self.MAX:
                self._loose.popitem(last=False)

    def note(self, memory: Any, namespace: Optional[str]) -> None:
        if memory is None or namespace is None:
            return
        try:
            ref = weakref.ref(memory)
        except TypeError:  # an object that cannot be referenced weakly: nothing kept
            return
        with self._lock:
            self._count += 1
            self._by_id[id(memory)] = (ref, namespace, self._count)
            self._by_id.move_to_end(id(memory))
            while len(self._by_id) > self.MAX:
                self._by_id.popitem(last=False)

    def forget(self, memory: Any) -> None:
        """`memory`'s latest run read with no namespace (no value for the template): its
        writes after the run have none either, not the run's before (review 4, session 35)."""
        with self._lock:
            found = self._by_id.get(id(memory))
            if found is not None and found[0]() is memory:
                del self._by_id[id(memory)]

    def get(self, memory: Any) -> Optional[str]:
        """The namespace `memory`'s latest run read with, or None (no run of it read here)."""
        with self._lock:
            found = self._by_id.get(id(memory))
            loose = self._loose.get(getattr(memory, "session_id", None), 0)
        # The id of a Memory gone since may be another object's now.
        if found is None or found[0]() is not memory or loose > found[2]:
            return None
        return found[1]


def _namespace_failed(exc: BaseException) -> None:
    """The LangChain middleware's warning, word for word: no memory rather than another's."""
    log.warning("skillbank %s failed; the agent goes on without it: %s", "namespace", exc)


def _shown_namespaces(reads: Sequence[Any]) -> tuple[str, ...]:
    """`SkillbankToolSpec(reads=...)`: plain namespaces, from names or memory blocks."""
    if isinstance(reads, str):
        reads = [reads]
    names = tuple(getattr(r, "namespace", r) for r in reads)
    if any(not isinstance(n, str) or template_fields(n) for n in names):
        raise InvalidInputError("reads takes the agent's other memory blocks or their plain "
                                f"namespaces (not templates or blocks without one), got {names!r}")
    return tuple(check_namespace(n) for n in names)
