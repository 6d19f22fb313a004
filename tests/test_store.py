"""The store interface, run against both columns: the root's files and a real PostgreSQL.

The same contract tests run on `FileStore` (today's classes) and `PostgresStore` (a private
PostgreSQL 15 cluster started by the `postgres` fixture); then what only team mode has: workers
seeing each other's writes through LISTEN/NOTIFY, migrations, clear errors for a wrong URL, and
recovery after PostgreSQL restarts without recreating the store.
"""

from __future__ import annotations

import threading
import time
import uuid
from datetime import datetime, timedelta, timezone

import pytest

from skillbank.errors import BusyError
from skillbank.store import ChangeFeed, ExperienceLog, Store, UsageCounters, WriteLock, open_store
from skillbank.store.base import StoreUnavailableError


@pytest.fixture(params=["files", "postgres"])
def two_stores(request, tmp_path):
    """Two stores of one deployment, as two workers would hold them."""
    if request.param == "files":
        stores = [open_store(tmp_path / "root"), open_store(tmp_path / "root")]
    else:
        cluster = request.getfixturevalue("postgres")
        deployment = uuid.uuid4().hex  # each test its own rows in the session's database
        stores = [open_store(None, cluster.url, deployment=deployment) for _ in range(2)]
    yield stores
    for store in stores:
        store.close()


def test_both_columns_implement_the_interface(two_stores):
    store = two_stores[0]
    assert isinstance(store, Store)
    assert isinstance(store.change_feed(), ChangeFeed)
    assert isinstance(store.write_lock(), WriteLock)
    assert isinstance(store.usage("skills"), UsageCounters)
    assert isinstance(store.experiences(), ExperienceLog)


def test_usage_counters(two_stores):
    a, b = (s.usage("guidelines") for s in two_stores)
    a.record("gl-1")
    a.record("gl-1", ok=True)
    a.record("gl-1", use=0, ok=False)
    a.record("gl-1", ok=True, trusted=False)  # kept apart until accepted
    a.flush()
    reader = b
    if hasattr(a, "path"):  # the files column: another process sums the log when it opens it
        from skillbank.usage import UsageLog

        reader = UsageLog(a.path)
    got = reader.get("gl-1")
    assert (got.uses, got.successes, got.failures) == (2, 1, 1)
    assert reader.untrusted("gl-1").successes == 1
    assert reader.prior("gl-1") == pytest.approx(a.prior("gl-1"))
    accepted = a.accept("gl-1")
    assert (accepted.uses, accepted.successes, accepted.failures) == (3, 2, 1)
    assert a.untrusted("gl-1").uses == 0
    assert set(a.all()) == {"gl-1"}


def test_experience_log_reads_from_a_cursor(two_stores):
    a, b = (s.experiences() for s in two_stores)
    first = a.append([{"op": "add", "record": {"id": "exp-1", "task": "deploy é"}},
                      {"op": "retire", "id": "exp-0"}])
    assert len(first) == 2
    later = a.append([{"op": "approve", "id": "exp-1", "lessons": []}])
    everything = list(b.read())
    assert [e["op"] for _, e in everything] == ["add", "retire", "approve"]
    assert everything[0][1]["record"]["task"] == "deploy é"
    assert [e["op"] for _, e in b.read(first[-1])] == ["approve"]
    assert list(b.read(later[-1])) == []


def test_audit_append_and_query(two_stores):
    from skillbank.audit import AuditEvent

    now = datetime.now(timezone.utc)

    def event(n: int, principal: str, action: str) -> AuditEvent:
        at = (now + timedelta(seconds=n)).isoformat(timespec="microseconds")
        return AuditEvent(at=at, principal=principal, role="contributor", face="mcp",
                          namespace="team", action=action, kind="guideline", id=f"gl-{n}")

    log, other = two_stores[0].audit(), two_stores[1].audit()
    log.append([event(1, "ana", "learn"), event(2, "bo", "vote"), event(3, "ana", "vote")])
    assert [e.id for e in other.query(principal="ana")] == ["gl-1", "gl-3"]
    assert [e.id for e in other.query(action="vote", limit=1)] == ["gl-3"]
    assert [e.id for e in other.query(since=now + timedelta(seconds=2))] == ["gl-2", "gl-3"]
    assert other.query(item_id="gl-2")[0].principal == "bo"


def test_the_write_lock_excludes_another_worker_and_is_reentrant(two_stores):
    mine, theirs = two_stores[0].write_lock(timeout=5), two_stores[1].write_lock(timeout=0.3)
    held, release = threading.Event(), threading.Event()

    def holder() -> None:
        with mine:
            with mine:  # re-entrant in the holding thread
                held.set()
                release.wait(10)

    thread = threading.Thread(target=holder)
    thread.start()
    try:
        assert held.wait(10)
        with pytest.raises(BusyError, match="write lock"):
            with theirs:
                pass
    finally:
        release.set()
        thread.join(10)
    with theirs:  # free again
        assert theirs.is_locked


def test_the_change_feed_tells_the_other_worker(two_stores):
    a, b = (s.change_feed() for s in two_stores)
    for feed in (a, b):
        feed.start("guidelines")
    a.wrote("guidelines")
    deadline = time.monotonic() + 1.0
    while not b.others_wrote("guidelines"):
        assert time.monotonic() < deadline, "the other worker did not hear of the write in 1 s"
        time.sleep(0.01)
    assert not a.others_wrote("guidelines")  # its own write is not news to the writer
    assert not b.others_wrote("guidelines")  # read once


# PostgreSQL only ---------------------------------------------------------------------------------

def test_a_write_acknowledged_by_one_worker_is_seen_by_another_within_a_second(postgres):
    deployment = uuid.uuid4().hex
    with open_store(None, postgres.url, deployment=deployment) as a, \
            open_store(None, postgres.url, deployment=deployment) as b, \
            open_store(None, postgres.url, deployment="someone-else") as c:
        feeds = [s.change_feed() for s in (a, b, c)]
        for feed in feeds:
            feed.start("experiences")
        cursor = a.experiences().append([{"op": "add", "record": {"id": "exp-9"}}])[0]
        a.usage("experiences").record("exp-9", ok=True)
        feeds[0].wrote("experiences")  # acknowledged: the write above is committed
        started = time.monotonic()
        assert feeds[1].wait("experiences", timeout=1.0)
        assert time.monotonic() - started < 1.0
        assert [c for c, _ in b.experiences().read()] == [cursor]
        assert b.usage("experiences").get("exp-9").successes == 1
        assert not feeds[2].wait("experiences", timeout=0.3)  # another deployment: not news
        assert list(c.experiences().read()) == []


def test_migrations_run_twice_are_a_no_op(postgres):
    from skillbank.store.postgres.migrations import LATEST

    fresh = f"m{uuid.uuid4().hex[:12]}"
    with open_store(None, postgres.url) as admin:
        admin.db.execute(f"CREATE DATABASE {fresh}")
    url = postgres.url_for(fresh)
    results: list[list[int]] = []

    def open_one() -> None:  # two workers starting at once: one migrates, one waits
        with open_store(None, url) as store:
            results.append(store.applied)

    threads = [threading.Thread(target=open_one) for _ in range(2)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(60)
    assert sorted(results) == [[], list(range(1, LATEST + 1))]
    with open_store(None, url) as store:
        tables = store.db.execute("SELECT count(*) FROM pg_tables WHERE schemaname = 'public'")
        assert store.migrate() == [] and store.applied == []
        assert store.schema_version == LATEST
        assert store.db.execute(
            "SELECT count(*) FROM pg_tables WHERE schemaname = 'public'") == tables
        # A database from a newer skillbank is refused, not used half-known.
        store.db.execute("INSERT INTO skillbank_schema (version, name) VALUES (%s, 'future')",
                         (LATEST + 1,))
    with pytest.raises(StoreUnavailableError, match="newer than this skillbank knows"):
        open_store(None, url)


@pytest.mark.parametrize("mangle, expected", [
    (lambda c: c.url.replace(str(c.port), str(_closed_port())), "unreachable.*running.*database_url"),
    (lambda c: c.url.replace("test-password", "wrong"), "refused the login.*password"),
    (lambda c: c.url_for("no_such_db"), "does not exist.*createdb"),
    (lambda c: "mysql://root@localhost/skillbank", "not a PostgreSQL URL"),
    (lambda c: "postgresql://127.0.0.1:notaport/x", "not a PostgreSQL URL|unreachable"),
])
def test_a_wrong_database_url_says_what_to_fix(postgres, mangle, expected):
    url = mangle(postgres)
    with pytest.raises(StoreUnavailableError, match=expected) as caught:
        open_store(None, url)
    assert "wrong" not in str(caught.value)  # the password never appears


def _closed_port() -> int:
    import socket

    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def test_postgres_restarted_clear_errors_then_recovery(own_postgres):
    store = open_store(None, own_postgres.url, deployment="d", timeout=2.0)
    other = open_store(None, own_postgres.url, deployment="d", timeout=2.0)
    try:
        feed, usage = store.change_feed(), store.usage("skills")
        feed.start("skills")
        usage.record("sql-tuning", ok=True)
        own_postgres.stop()
        with pytest.raises(StoreUnavailableError, match="PostgreSQL at .* is unreachable"):
            usage.record("sql-tuning", ok=True)
        with pytest.raises(StoreUnavailableError, match="PostgreSQL"):
            store.experiences().append([{"op": "add", "record": {"id": "exp-1"}}])
        with pytest.raises(StoreUnavailableError):
            with store.write_lock(timeout=1):
                pass
        own_postgres.start()
        deadline = time.monotonic() + 30
        while True:  # the same store objects, no restart: the pool reconnects
            try:
                usage.record("sql-tuning", ok=True)
                break
            except StoreUnavailableError:
                assert time.monotonic() < deadline, "the store did not recover in 30 s"
                time.sleep(0.2)
        assert usage.get("sql-tuning").successes == 2  # the write made before the restart kept
        with store.write_lock(timeout=5):
            pass
        # The listener reconnected and, having missed what happened meanwhile, says so once.
        assert feed.wait("skills", timeout=10)
        other.change_feed().wrote("skills")
        assert feed.wait("skills", timeout=5)
    finally:
        store.close()
        other.close()
