"""One critique's rules are learnt one lock hold each (trust hunt, session 18).

An untrusted client's 20,000-character critique became 20 rules learnt under one hold of the
guideline locks (4-9 s); every other client's memory_context waited behind it (up to 7.7 s
against ~10 ms quiet). The locks are now taken per rule, so a reader waits at most one rule.
Checked by the locks' own bookkeeping (no timing): between two rules, nothing is held.
"""

from __future__ import annotations

import threading

from skillbank import Skillbank
from skillbank.embeddings import HashEmbedding

CRITIQUE = " ".join(f"Always check the {thing} before you deploy." for thing in (
    "database schema", "cache headers", "queue depth", "index size", "token expiry",
    "secret rotation", "log level", "metric names"))


class CountingLock:
    """An RLock that records how deep it is held when asked, and how often it was let go."""

    def __init__(self) -> None:
        self._lock = threading.RLock()
        self.depth = 0
        self.let_go = 0

    def __enter__(self):
        self._lock.acquire()
        self.depth += 1
        return self

    def __exit__(self, *exc):
        self.depth -= 1
        if self.depth == 0:
            self.let_go += 1
        self._lock.release()

    def acquire(self, *args, **kwargs):
        got = self._lock.acquire(*args, **kwargs)
        if got:
            self.depth += 1
        return got

    def release(self):
        self.depth -= 1
        if self.depth == 0:
            self.let_go += 1
        self._lock.release()


def test_each_rule_of_a_critique_takes_the_locks_on_its_own(tmp_path):
    with Skillbank.open(tmp_path / "root", embedding_function=HashEmbedding(),
                        include_bundled=False) as bank:
        memory = bank.guidelines
        lock = CountingLock()
        memory._lock = lock
        depths: list[int] = []
        let_go_at_start: list[int] = []
        learn_one = memory._learn_one

        def watched(**kwargs):
            depths.append(lock.depth)
            let_go_at_start.append(lock.let_go)
            before = lock.let_go
            entry = learn_one(**kwargs)
            assert lock.let_go == before  # within one rule, the hold is not let go
            return entry

        memory._learn_one = watched
        report = memory.learn(CRITIQUE, trusted=False)
        learnt = [e for e in report.entries if e.action != "ignored"]
        assert len(learnt) >= 6 and len(depths) == len(learnt)
        assert depths == [1] * len(depths)  # held once, by this rule alone
        # ... and let go between any two rules (before: one hold for the whole critique)
        assert all(b > a for a, b in zip(let_go_at_start, let_go_at_start[1:]))
