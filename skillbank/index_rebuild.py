"""`reindex`'s rebuild (every index emptied, then filled again from the files), and the reads
that wait while it runs.

`Skillbank.reindex` empties every index and then fills it again from the files. The owner of a
root serves other processes' reads side by side (docs/operating.md, Concurrency), so a read
that came in between searched empty indexes: live MCP sessions got "No skill fits this task",
no experience for an exact task and no rule, with no note, for 1-4 s of a `skillbank reindex`
(hunt-mcp-longlived #2, session 31). Now a search of the skills, experiences or guidelines
waits at its start (holding no lock) until the rebuild ends; the rebuilding thread itself
searches on. A wait lasts at most `REBUILD_WAIT` seconds (a rebuild that long is embedding a
large library; the read then answers from what is indexed so far).

Team workers on one PostgreSQL deployment are other processes: they do not wait for a
reindex another worker runs.
"""

from __future__ import annotations

import contextlib
import threading
from typing import Any, Iterator

#: The longest a read waits for a rebuild, in seconds.
REBUILD_WAIT = 120.0


class RebuildGate:
    """Closed while a reindex of the bank runs (by the threads running it)."""

    def __init__(self) -> None:
        self._cond = threading.Condition()
        self._rebuilders: dict[int, int] = {}  # thread id -> depth

    @contextlib.contextmanager
    def closed(self) -> Iterator[None]:
        me = threading.get_ident()
        with self._cond:
            self._rebuilders[me] = self._rebuilders.get(me, 0) + 1
        try:
            yield
        finally:
            with self._cond:
                self._rebuilders[me] -= 1
                if not self._rebuilders[me]:
                    del self._rebuilders[me]
                self._cond.notify_all()

    def wait(self) -> None:
        """Return once no rebuild runs (at once on a rebuilding thread), or after REBUILD_WAIT."""
        if not self._rebuilders or threading.get_ident() in self._rebuilders:
            return
        with self._cond:
            self._cond.wait_for(lambda: not self._rebuilders, timeout=REBUILD_WAIT)


_GATES_LOCK = threading.Lock()


@contextlib.contextmanager
def gate_closed(bank: Any) -> Iterator[None]:
    """Reads of `bank`'s open indexes wait until the block ends (its `reindex`). The gate is
    the bank's, made on first use, and given to every index it has open: a read of one it
    opens meanwhile had nothing to read before."""
    with _GATES_LOCK:
        gate = bank.__dict__.get("rebuild_gate")
        if gate is None:
            gate = bank.rebuild_gate = RebuildGate()
    for index in list(getattr(bank, "_indexes", {}).values()):
        index.rebuild_gate = gate
    with gate.closed():
        yield


def wait_rebuilt(index: Any) -> None:
    """Wait for a rebuild of `index`'s bank to end, if one runs (see the module docstring)."""
    gate = getattr(index, "rebuild_gate", None)
    if gate is not None:
        gate.wait()


def empty_and_refill(bank: Any) -> dict[str, Any]:
    """Empty every index of `bank` and sync it again from the files (`Skillbank.reindex`, which
    holds the gate and the skill library's sync lock around it: `index_reopen.rebuilding`).

    A collection built with another embedding cannot be opened with this one: it is dropped
    (how embeddings are switched), unless it is shared with other deployments
    (`_placement.private`). Any other is emptied, not dropped: other processes of the root
    hold handles to it."""
    from skillbank.bank import COLLECTIONS
    from skillbank.errors import EmbeddingMismatchError
    from skillbank.index_outage import rebuilt  # not "added" when not written (hunt-chroma #4)

    for kind in COLLECTIONS:
        with bank._guard:
            opened = kind in bank._indexes
        if not opened and bank.client is not None and bank._placement.private:
            try:
                bank.index(kind)
            except EmbeddingMismatchError:
                try:
                    bank.client.delete_collection(
                        f"{bank.settings.collection_prefix}_{COLLECTIONS[kind]}")
                except Exception:  # noqa: BLE001 - not there: nothing to drop
                    pass
        if kind == "experiences":
            bank.experiences.reset_index()
        else:
            bank.index(kind).reset()
    return rebuilt(bank.sync())
