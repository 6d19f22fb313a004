"""Concurrent searches of one index answered together: one Chroma query for several vectors.

Why: the owner of a shared root serves several client processes' searches at once
(`skillbank.sharing`), and each search asked Chroma alone while holding the index lock, so six
clients cost six full queries in a row. Chroma answers a query with several vectors for much
less than as many single queries (300 skills: 1.8 ms for one vector, 5.6 ms for six) and gives
each vector exactly the ids and distances a query of its own gives (tests/test_shared_root.py).

How (flat combining): a search registers its request, then takes the index lock. The thread
that gets the lock answers every request registered so far in one go, under that one lock
hold: one Chroma query per distinct (n, where) for their vectors, then each request's own
keyword side and fusion, as if they had run back to back. The others find their answer ready
when they get the lock. A lone search (the in-process case) runs exactly as before.

Under one GIL, concurrent searches rarely meet at the lock by themselves (measured: 95% of
six clients' searches ran alone): before taking the lock, a search waits up to `JOIN_WAIT`
while other calls the owner is running (`serving`) have not registered yet. With that, six
threads' searches ran in batches of 3-6 and cost 2.4 instead of 3.8 ms of CPU each.
"""

from __future__ import annotations

import contextlib
import json
import logging
import threading
import time
from typing import Any, Callable, Iterator, Sequence

import numpy as np

log = logging.getLogger("skillbank.index")

#: How long at most an answering thread waits for searches on their way to join it, and the
#: naps it waits in (the GIL goes to them meanwhile). Only while others are on their way.
JOIN_WAIT = 0.002
JOIN_NAP = 0.0001
#: Calls a server (skillbank.sharing.owner) is running now: searches that may soon arrive.
_serving = [0]
_serving_guard = threading.Lock()


@contextlib.contextmanager
def serving() -> Iterator[None]:
    """Around a call a server runs for a client: an answering search waits briefly for the
    searches of the other calls running (under one GIL they reach the index one by one)."""
    with _serving_guard:
        _serving[0] += 1
    try:
        yield
    finally:
        with _serving_guard:
            _serving[0] -= 1


class Request:
    """One search waiting for its answer (`result` or `error`, set by whoever ran it)."""

    __slots__ = ("args", "result", "error", "done")

    def __init__(self, args: tuple[Any, ...]) -> None:
        self.args = args
        self.result: Any = None
        self.error: BaseException | None = None
        self.done = False


class Combiner:
    """Hands every waiting request to the thread that holds the lock."""

    def __init__(self) -> None:
        self._waiting: list[Request] = []
        self._guard = threading.Lock()
        #: Searches on their way to `run` (embedding their query, say).
        self._coming = 0

    @contextlib.contextmanager
    def coming(self) -> Iterator[None]:
        """A search on its way to `run`: a thread answering now gives it a moment to join."""
        with self._guard:
            self._coming += 1
        try:
            yield
        finally:
            with self._guard:
                self._coming -= 1

    def run(self, lock: Any, request: Request,
            answer_all: Callable[[list[Request]], None]) -> Any:
        """`request`'s answer: computed here with every other waiting request, or by the
        thread that held `lock` before us."""
        with self._guard:
            self._waiting.append(request)
        # Searches on their way (under one GIL they reach the index one by one) get a moment
        # to join, outside the lock so nothing holds them up: one Chroma query answers them
        # too. Alone (the in-process case): no wait.
        give = time.monotonic() + JOIN_WAIT
        while not request.done and (self._coming > 0 or len(self._waiting) < _serving[0]) \
                and time.monotonic() < give:
            time.sleep(JOIN_NAP)
        with lock:
            if not request.done:
                with self._guard:
                    batch, self._waiting = self._waiting, []
                if request not in batch:  # cannot happen, but never lose our own request
                    batch.append(request)
                try:
                    answer_all(batch)
                finally:  # interrupted (BaseException): the others answer their own
                    left = [r for r in batch if not r.done and r is not request]
                    if left:
                        with self._guard:
                            self._waiting.extend(left)
        if request.error is not None:
            raise request.error
        if not request.done:
            raise RuntimeError("search was interrupted")  # pragma: no cover - BaseException above
        return request.result


def dense_key(vector: np.ndarray, n: int, where: dict[str, Any] | None) -> tuple[bytes, int, str]:
    """What a dense query depends on besides the collection: equal keys, equal answers."""
    return (np.asarray(vector, dtype=np.float32).tobytes(), int(n),
            json.dumps(where, sort_keys=True, default=str))


def prefetch(collection: Any, wanted: Sequence[tuple[np.ndarray, int, dict[str, Any] | None]],
             total: int, on_error: Callable[[BaseException], Any] | None = None
             ) -> dict[tuple[bytes, int, str], tuple[list[str], list[float]]]:
    """Nearest texts for several (vector, n, where) at once: one Chroma query per (n, where)
    asked by at least two distinct vectors. Best effort: a query that fails is left out (and
    handed to `on_error`), and each search then asks alone (with the errors it would have had
    alone)."""
    groups: dict[tuple[int, str], dict[bytes, tuple[np.ndarray, dict[str, Any] | None]]] = {}
    for vector, n, where in wanted:
        key = dense_key(vector, n, where)
        groups.setdefault((key[1], key[2]), {})[key[0]] = (vector, where)
    found: dict[tuple[bytes, int, str], tuple[list[str], list[float]]] = {}
    for (n, where_key), vectors in groups.items():
        if len(vectors) < 2 or total <= 0 or n <= 0:
            continue
        where = next(iter(vectors.values()))[1]
        try:
            result = collection.query(query_embeddings=[v for v, _ in vectors.values()],
                                      n_results=min(n, total), where=where,
                                      include=["distances"])
        except Exception as exc:  # noqa: BLE001 - each search asks alone, reporting its own
            log.debug("batched dense query failed; searching one by one", exc_info=True)
            if on_error is not None:
                on_error(exc)
            continue
        for position, raw in enumerate(vectors):
            found[(raw, n, where_key)] = (result["ids"][position], result["distances"][position])
    return found
