"""A guideline write's index work no longer holds the deployment's write lock.

hunt-teamchurn #3, session 33: with the Chroma server stopped (SIGSTOP), a rule write on one
team worker held the deployment's guidelines lock (a PostgreSQL advisory lock) for the whole
60 s `chroma_timeout` of its index write, and another worker's rule write at the same moment
failed "another process is writing to this deployment ... try again when it has finished",
which said nothing about Chroma and broke docs/team.md's promise that a guideline write is
acknowledged while Chroma is down. The records need the lock; the index is derived: its writes
now run once the lock is released (`GuidelineStore._writing`), under the worker's own lock.

A Chroma that does not answer is stood in for by worker A's index writes waiting on an event
(deterministic on a loaded machine: no timing). Real PostgreSQL and a real `chroma run`.
"""

from __future__ import annotations

import threading
from typing import Any, Callable

import pytest

from team_worker import two_banks


@pytest.fixture
def workers(tmp_path, chroma_server, postgres):
    """Two workers of one deployment (each its own root); B gives up on the lock after 3 s."""
    with two_banks(tmp_path / "a", tmp_path / "b", chroma_server, postgres.url,
                   write_lock_timeout=3.0) as pair:
        yield pair


class FrozenIndexWrites:
    """Worker A's index writes wait until `thaw()`: a Chroma server that does not answer."""

    def __init__(self, bank: Any) -> None:
        self.index = bank.guidelines.index
        self.entered = threading.Event()
        self._thawed = threading.Event()
        for name in ("upsert", "update_metadata", "delete"):
            setattr(self.index, name, self._frozen(getattr(self.index, name)))

    def _frozen(self, write: Callable[..., Any]) -> Callable[..., Any]:
        def waits(*args: Any, **kwargs: Any) -> Any:
            self.entered.set()
            assert self._thawed.wait(120), "the test never thawed the index"
            return write(*args, **kwargs)
        return waits

    def thaw(self) -> None:
        self._thawed.set()
        for name in ("upsert", "update_metadata", "delete"):
            self.index.__dict__.pop(name, None)


def _in_thread(call: Callable[[], Any]) -> tuple[threading.Thread, dict[str, Any]]:
    result: dict[str, Any] = {}

    def run() -> None:
        try:
            result["value"] = call()
        except BaseException as exc:  # noqa: BLE001 - handed to the test
            result["error"] = exc
    thread = threading.Thread(target=run, daemon=True)
    thread.start()
    return thread, result


def _chroma_meta(index: Any, gid: str) -> dict[str, Any]:
    """What the Chroma server itself holds for a rule's first text (read through the index
    object, not the bank: a bank's next call syncs a memory whose records moved, which would
    level the index whatever the write did)."""
    got = index._collection.get(ids=[gid], include=["metadatas"])
    return got["metadatas"][0] if got["ids"] else {}


@pytest.mark.parametrize("operation", ["add", "learn", "vote", "forget"])
def test_another_workers_rule_write_goes_on_while_one_workers_index_write_hangs(
        workers, operation):
    a, b = workers
    target = a.guidelines.add("Always pin third-party versions in the lock file.").guideline_id
    b.guidelines.list(namespace="*")  # B has read the memory
    frozen = FrozenIndexWrites(a)
    call = {"add": lambda: a.guidelines.add("Never store passwords in plain text files."),
            "learn": lambda: a.guidelines.learn("Always write the changelog entry first."),
            "vote": lambda: a.guidelines.vote(target, helpful=True),
            "forget": lambda: a.guidelines.forget(target)}[operation]
    thread, result = _in_thread(call)
    try:
        assert frozen.entered.wait(60), "worker A never reached its index write"
        # Before: B waited for the lock A held through its index write, and failed after its
        # 3 s "another process is writing to this deployment".
        entry = b.guidelines.add("Prefer small pull requests over large ones.")
        assert entry.action == "added", entry
        assert thread.is_alive(), "A's index write was to be still waiting"
    finally:
        frozen.thaw()
        thread.join(60)
    assert "error" not in result, result.get("error")
    listed = {g.text for g in a.guidelines.list(namespace="*")}
    assert "Prefer small pull requests over large ones." in listed
    found = [h.record.text for h in b.guidelines.search("small pull requests", k=3)]
    assert "Prefer small pull requests over large ones." in found


def test_an_index_write_that_lands_after_another_workers_is_put_right(workers):
    """Out of order: A's vote is written to the records first, its index write lands after B's
    later vote on the same rule. The index must end with the records' last state (two helpful
    votes), not A's older one (one), without waiting for A's next call."""
    a, b = workers
    gid = a.guidelines.add("Always run the linter before pushing.").guideline_id
    b.guidelines.list(namespace="*")
    frozen = FrozenIndexWrites(a)
    thread, result = _in_thread(lambda: a.guidelines.vote(gid, helpful=True))
    try:
        assert frozen.entered.wait(60)
        assert b.guidelines.vote(gid, helpful=True).helpful == 2
        assert _chroma_meta(frozen.index, gid).get("helpful") == 2
    finally:
        frozen.thaw()
        thread.join(60)
    assert "error" not in result, result.get("error")
    assert result["value"].helpful == 1
    assert _chroma_meta(frozen.index, gid).get("helpful") == 2  # A's late write was levelled
