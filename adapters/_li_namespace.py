"""LlamaIndex's namespace templates (``namespace="{user_id}"``), as in the LangChain middleware:
filled from the memory's session and what the caller passed to ``memory.aget(...)`` (a tool
call: the session of the `Memory` its agent runs with), then from the workflow's Context store
of the running step. Moved out of `llamaindex` (kept under 700
lines); the pieces there import it.
"""

from __future__ import annotations

import contextvars
import logging
from typing import Any, Optional, Sequence

from skillbank.adapters._runs import fill_namespace, template_fields
from skillbank.errors import InvalidInputError
from skillbank.scope import check_namespace

__all__ = ["resolve_namespace", "step_session"]

log = logging.getLogger("skillbank.adapters.llamaindex")  # the adapter's own logger, as before

#: The namespace a templated piece resolved for the current call (set by its async method, read
#: by the sync work it hands to a thread: `asyncio.to_thread` copies context variables).
_RESOLVED: contextvars.ContextVar[Optional[str]] = contextvars.ContextVar(
    "skillbank_llamaindex_namespace", default=None)


#: The session of the agent run a tool call is in (set by the tool's async method, read by the
#: sync work it hands to a thread), None outside a run.
_SESSION: contextvars.ContextVar[Optional[str]] = contextvars.ContextVar(
    "skillbank_llamaindex_session", default=None)


async def step_session() -> Optional[str]:
    """The session id of the `Memory` the running workflow step's agent uses (``agent.run(...,
    memory=memory)``: agent workflows keep it in the Context store as ``"memory"``), or None
    outside a step: the conversation whose open record a memory tool must not recall."""
    try:
        from workflows import Context

        ctx = Context.get_step_context()
        memory = await ctx.store.get("memory", default=None)
    except Exception:  # noqa: BLE001 - not inside a workflow step, or no memory there
        return None
    session = getattr(memory, "session_id", None)
    return str(session) if session is not None and str(session).strip() else None


async def _step_values(fields: Sequence[str]) -> dict[str, Any]:
    """`fields` from the workflow's `Context` store of the running step (`FunctionAgent` and
    other agent workflows): ``await ctx.store.set("user_id", "alice")`` before the run."""
    try:
        from workflows import Context

        ctx = Context.get_step_context()
    except Exception:  # noqa: BLE001 - not inside a workflow step: no values from there
        return {}
    values: dict[str, Any] = {}
    for field in fields:
        try:
            value = await ctx.store.get(field, default=None)
        except Exception:  # noqa: BLE001 - a typed store without the key
            value = None
        if value is not None:
            values[field] = value
    return values


async def resolve_namespace(template: Optional[str], values: Optional[dict[str, Any]] = None
                            ) -> Optional[str]:
    """The namespace of this call: `template` filled from `values` (the memory's session:
    ``session_id`` and what the caller passed to ``memory.aget(...)``), then from the
    workflow's Context store. A missing value raises `InvalidInputError` naming it."""
    fields = template_fields(template)
    if not fields:
        return template
    known = {k: v for k, v in (values or {}).items() if v is not None and str(v).strip()}
    if "session_id" in fields and "session_id" not in known:
        # The session of the Memory given to agent.run, as its memory block fills it: a tool
        # call is given none, and every write of `SkillbankToolSpec(namespace="{session_id}")`
        # was refused (hunt-async #4, session 34).
        session = await step_session()
        if session is not None:
            known["session_id"] = session
    missing = [f for f in fields if f not in known]
    if missing:
        known.update(await _step_values(missing))
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
