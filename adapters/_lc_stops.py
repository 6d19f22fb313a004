"""How a `create_agent` run can stop where no middleware hook sees an exception of its own.

* **The recursion limit.** LangGraph's Pregel loop raises `GraphRecursionError` *between*
  nodes, when the next step would pass ``recursion_limit``: in no ``wrap_*`` hook and before
  ``after_agent``, so a model looping on one tool, the failed run most worth keeping, left no
  record at all (hunt-agents #1, session 29). A node can see that it is the run's last step:
  the step it runs at and the step the loop stops at are in its config (the Pregel scratchpad,
  which LangGraph's own ``RemainingSteps`` managed value reads). When a model call or tool call
  of the last step returns, the next node cannot run, so the run is recorded then as the
  failure LangGraph is about to raise.
* **A stop from outside.** Cancellation (``asyncio.CancelledError``), ``KeyboardInterrupt`` and
  ``GeneratorExit`` are `BaseException`, not `Exception`: the hooks let them through unseen and
  the steps the run made (a tool's side effects among them) were lost (hunt-agents #2). Such a
  run is recorded with its steps and a last step naming the stop; a stop is no outcome
  (`skillbank.adapters._runs.stop_record`): in a thread the episode stays open, and a run
  without one is ``partial``.
"""

from __future__ import annotations

import threading
from typing import Any, Sequence

from langchain_core.messages import ToolMessage

# What a stop is and how it is recorded are the faces' shared rule (`_runs.stop_record`).
from skillbank.adapters._runs import STOPPED_OUTCOME, is_stop, stop_feedback

__all__ = ["STOPPED_OUTCOME", "RunAbandoned", "is_stop", "stop_feedback", "steps_left",
           "recursion_limit_error", "messages_of", "LastStepCalls", "open_tool_calls"]


class RunAbandoned(BaseException):
    """A run of this process that stopped between two steps and never finished: its stream
    was left early (``break`` out of ``agent.stream(...)``), where no hook runs. Recorded when
    its thread's next request starts."""


def steps_left() -> int | None:
    """Steps the current graph run may still take after this one (0: this node's step is the
    last, the next node passes the recursion limit), or None outside a graph run."""
    try:
        from langgraph.config import get_config

        pad = (get_config().get("configurable") or {}).get("__pregel_scratchpad")
        return int(pad.stop) - int(pad.step)
    except Exception:  # noqa: BLE001 - another langgraph, or no graph run: nothing to foresee
        return None


def recursion_limit_error() -> BaseException:
    """The `GraphRecursionError` LangGraph raises next, as it words it."""
    from langgraph.errors import GraphRecursionError

    try:
        from langgraph.config import get_config

        limit = get_config().get("recursion_limit")
    except Exception:  # noqa: BLE001
        limit = None
    return GraphRecursionError(f"Recursion limit of {limit} reached without hitting a stop "
                               "condition.")


def messages_of(result: Any) -> list[Any]:
    """The messages a model call or tool call returned (a response, a message, a Command)."""
    if isinstance(result, ToolMessage):
        return [result]
    found = getattr(result, "result", None)  # ModelResponse
    if found is None:
        found = getattr(result, "model_response", None)  # ExtendedModelResponse
        found = getattr(found, "result", None)
    if found is None:
        update = getattr(result, "update", None)  # Command from a tool
        found = update.get("messages") if isinstance(update, dict) else None
    return [m for m in found or [] if hasattr(m, "type")]


class LastStepCalls:
    """The tool calls of a run's last step, gathered until all have returned: they run in
    parallel, and the run is recorded once, with every result of the step."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._results: dict[str, list[Any]] = {}

    def add(self, key: str, expected: int, results: Sequence[Any]) -> list[Any] | None:
        """Add one call's `results`; the step's results when this was the last of `expected`
        calls, else None."""
        with self._lock:
            gathered = self._results.setdefault(key, [])
            gathered.append(list(results))
            if len(gathered) < expected:
                return None
            del self._results[key]
        return [m for one in gathered for m in one]


def open_tool_calls(messages: Sequence[Any]) -> int:
    """How many tool calls of the latest model message have no tool result yet (at least 1)."""
    answered = {getattr(m, "tool_call_id", None) for m in messages if getattr(m, "type", "")
                == "tool"}
    for message in reversed(list(messages)):
        if getattr(message, "type", None) == "ai":
            calls = [c for c in getattr(message, "tool_calls", None) or []
                     if c.get("id") not in answered]
            return max(1, len(calls))
    return 1
