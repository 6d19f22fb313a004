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
    votes), not A's older one (one): A's write tells B (the change feed), and B's next call
    re-reads the rule from Chroma and syncs it back."""
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
    assert _chroma_meta(frozen.index, gid).get("helpful") == 1  # A's late write landed last
    b.guidelines.list(namespace="*")  # B's next call
    assert _chroma_meta(frozen.index, gid).get("helpful") == 2


def test_a_sync_never_drops_a_rule_another_worker_added_after_it_read_the_records(workers):
    """Review 1 of session 35: a sync's index part runs after the write lock is released; a
    rule worker A added in between (its record and its index entry, which B's index had
    already read) was deleted from Chroma as one no record backs. Now a sync whose records
    moved writes nothing and reads them again."""
    a, b = workers
    a.guidelines.add("Always pin third-party versions in the lock file.")
    b.guidelines.list(namespace="*")
    index = b.guidelines.index
    real_hashes = index.hashes
    added: list[str] = []

    def hashes() -> dict[str, str]:
        if not added:  # B read the records under the lock; A adds a rule now
            added.append(a.guidelines.add("Rotate API keys every ninety days.").guideline_id)
            index.refresh(added)  # as another thread's search reads it into B's index
        return real_hashes()
    index.hashes = hashes
    try:
        b.guidelines.sync()
    finally:
        del index.hashes
    assert added and _chroma_meta(index, added[0]), "B's sync deleted A's new rule from Chroma"
    assert added[0] in {g.id for g in b.guidelines.list(namespace="*")}


def test_an_index_write_that_fails_does_not_drop_the_rest(hash_bank):
    """Review 1 of session 35: the index work runs after the records are written; its first
    item failing (a Chroma error that is no outage, a full disk) dropped the rest of the
    queue: after `add(..., replaces=old)` both records were written, the old rule stayed
    active in the index and the new one was never indexed, and nothing levelled it, so search
    found nothing. Now each item runs, the first error is raised after them (a damaged index
    names its repair on the write that met it: tests/test_damaged_index.py), and the next
    sync levels the index."""
    rules = hash_bank.guidelines
    old = rules.add("Always pin dependency versions in production builds.").guideline_id
    real = rules.index.upsert
    calls: list[int] = []

    def upsert(items: Any) -> int:
        calls.append(1)
        if len(calls) == 1:
            raise RuntimeError("simulated: Chroma's InternalError during upsert")
        return real(items)
    rules.index.upsert = upsert
    try:
        with pytest.raises(RuntimeError, match="InternalError"):
            rules.add("Pin dependency versions with a lockfile in every build.", replaces=old)
    finally:
        del rules.index.upsert
    new = [g.id for g in rules.list() if g.status == "active"]
    assert len(new) == 1 and new[0] != old  # both records were written
    assert (rules.index.metadata(old) or {}).get("status") == "superseded"  # the rest ran
    assert rules._relevel_due is not None  # the next sync levels the index
    assert not rules.sync().findings
    hits = rules.search("pin dependency versions lockfile build", k=3)
    assert [h.id for h in hits] == new



def test_a_sync_that_could_not_level_the_index_says_so(hash_bank):
    """Review 5 of session 35: a sync whose index part was skipped every try (the records kept
    moving under it) reported nothing, so `skillbank reindex` would say it rebuilt an index it
    had not."""
    from skillbank.index_outage import ChromaUnavailableError, rebuilt

    rules = hash_bank.guidelines
    rules.add("Always pin dependency versions in production builds.")
    rules.index.hashes = lambda: {}  # the index lacks the rule: the sync must write it
    rules._records.stale = lambda: True  # another process writes during every try
    try:
        report = rules.sync()
    finally:
        del rules.index.hashes, rules._records.stale
    assert report.added == [] and [f.code for f in report.findings] == ["index-behind"]
    with pytest.raises(ChromaUnavailableError, match="did not rebuild the guidelines index"):
        rebuilt({"guidelines": report})
    assert not rules.sync().findings  # the next sync levels it
