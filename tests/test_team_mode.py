"""Team mode: banks with a `database_url` share their lock, change feed, usage and audit in a
real PostgreSQL (private cluster) over a real `chroma run` server.

Two banks on one root stand for two workers. What the files column cannot give them: a usage
count one worker records is in the other's ranking at once (the file log is summed only when a
process opens it), the write lock holds across machines, and the audit log is one table.
"""

from __future__ import annotations

import threading
import time

import pytest

from skillbank import Skillbank
from skillbank.embeddings import HashEmbedding
from skillbank.errors import BusyError
from skillbank.store.base import StoreUnavailableError
from team_worker import two_banks, until


@pytest.fixture
def workers(tmp_path, chroma_server, postgres):
    with two_banks(tmp_path / "root", tmp_path / "root", chroma_server, postgres.url,
                   write_lock_timeout=0.5) as pair:
        yield pair


def test_a_write_on_one_worker_reaches_the_other_within_a_second(workers, tmp_path):
    a, b = workers
    assert b.guidelines.list(namespace="*") == []  # loaded before the write
    gid = a.guidelines.learn("Use British spelling in user-facing text.").ids()[0]
    deadline = time.monotonic() + 1.0
    while gid not in [g.id for g in b.guidelines.list(namespace="*")]:
        assert time.monotonic() < deadline, "worker B did not see worker A's write in 1 s"
        time.sleep(0.02)
    # The feed is PostgreSQL's: nothing was logged in the root's file feed.
    assert type(b.changes).__name__ == "PostgresChangeFeed"
    assert not (tmp_path / "root" / ".changes" / "guidelines.log").exists()


def test_usage_counts_are_shared_at_once(workers):
    a, b = workers
    a.skills.save("sql-tuning", "Speed up a slow SQL query by reading its plan.", "# Steps\n")
    assert b.skills.load("sql-tuning").usage.uses == 0
    a.skills.record_use("sql-tuning", success=True)
    usage = b.skills.load("sql-tuning").usage
    assert (usage.uses, usage.successes) == (1, 1)


def test_the_write_lock_is_held_across_workers(workers):
    a, b = workers
    held, done = threading.Event(), threading.Event()

    def hold() -> None:
        with a.guidelines.write_lock:  # the guidelines' own lock (tests/test_team_locks.py)
            held.set()
            done.wait(10)

    thread = threading.Thread(target=hold)
    thread.start()
    try:
        assert held.wait(10)
        with pytest.raises(BusyError, match="advisory lock"):
            b.guidelines.learn("Never put SQL in f-strings.")
    finally:
        done.set()
        thread.join(10)
    b.guidelines.learn("Never put SQL in f-strings.")  # free again


def test_the_audit_log_is_one_table(workers):
    a, b = workers
    a.skills.save("slide-deck", "Turn meeting notes into a short slide deck.", "# Steps\n")
    assert b.audit is not None and type(b.audit).__name__ == "PostgresAuditLog"
    saved = [e for e in b.store.audit().query(action="save") if e.kind == "skill"]
    assert [e.id for e in saved] == ["skill:slide-deck"]


def test_a_wrong_database_url_fails_the_open_and_lets_go_of_the_root(tmp_path, postgres):
    url = postgres.url.replace("test-password", "not-it")
    with pytest.raises(StoreUnavailableError, match="refused the login.*database_url"):
        Skillbank.open(tmp_path / "root", embedding_function=HashEmbedding(), database_url=url)
    # The root was let go: it opens at once without the bad URL.
    with Skillbank.open(tmp_path / "root", embedding_function=HashEmbedding(),
                        lock_timeout=2) as bank:
        assert bank.store is None



def test_a_worker_refreshes_only_what_another_wrote(workers):
    """The notification carries the written ids: the other worker re-reads just those from
    Chroma instead of reloading the whole collection and rebuilding BM25 (what made two
    workers slower than one in benchmarks/team_load.py)."""
    a, b = workers

    def listed() -> list[str]:
        return [g.id for g in b.guidelines.list(namespace="*")]

    first = a.guidelines.learn("Use British spelling in user-facing text.").ids()[0]
    until(lambda: first in listed())
    mirror = b.index("guidelines")._mirror
    second = a.guidelines.learn("Never put SQL in f-strings.").ids()[0]
    until(lambda: second in listed())
    assert b.index("guidelines")._mirror is mirror  # refreshed in place, not reloaded
    assert b.guidelines.search("never put sql in f-strings", k=1)[0].id == second
    a.forget(second)
    until(lambda: second not in listed())
    assert second not in b.index("guidelines").ids() and first in b.index("guidelines").ids()
