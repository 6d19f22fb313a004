"""First-use initialisation off the agent's turn: the embedding model loads on a thread.

The first lookup in a process used to load the embedding model (an ONNX session, 0.2-2 s
depending on the machine and its load) inside the agent's first model call. The async hooks
already hand lookups to a worker thread (`asyncio.to_thread`), so the event loop stays free,
but the first turn still waited. A face calls `warm_up(bank)` when it is built: the model loads
on a thread while the application starts, once per bank, and a lookup that comes first
simply waits for the same lock on its worker thread. Not a daemon thread: a script that built
a face and ended while the model was still loading aborted (onnxruntime's C++ runtime was torn
down under the loading thread: "terminate called without an active exception", exit 134); the
interpreter now waits for the load (at most the load time) before it exits. Best effort: a model that cannot load is
reported by the real lookup (keyword-only mode), not here. A client of another process's bank
has nothing to load (the owner holds the model).
"""

from __future__ import annotations

import logging
import threading
from typing import Any

__all__ = ["warm_up"]

log = logging.getLogger("skillbank.adapters")

_ATTRIBUTE = "_skillbank_warm_up"
_lock = threading.Lock()


def warm_up(bank: Any) -> threading.Thread | None:
    """Start loading `bank`'s embedding model (and the token counter) on a thread,
    once per bank; returns that thread (None when there is nothing to load or it started)."""
    if bank is None or getattr(bank, "is_remote", False):
        return None
    with _lock:
        if getattr(bank, _ATTRIBUTE, None) is not None:
            return None
        function = getattr(bank, "embedding_function", None)
        thread = threading.Thread(target=_warm, args=(function,), name="skillbank-warm-up",
                                  daemon=False)
        try:
            setattr(bank, _ATTRIBUTE, thread)
        except (AttributeError, TypeError):  # a bank that takes no attributes: warm each time
            pass
    thread.start()
    return thread


def _warm(function: Any) -> None:
    try:
        warm = getattr(function, "warm", None)
        if callable(warm):
            warm()
        from skillbank.tokens import count_tokens

        count_tokens("warm up")  # the tokenizer the block budget is counted with
    except Exception:  # noqa: BLE001 - best effort; the real lookup reports what is wrong
        log.debug("warming up skillbank failed", exc_info=True)
