"""A worker whose clock is wrong writes audit events on PostgreSQL's clock, the one every worker
shares: `--since 10m` finds them, and the table's times follow the order events arrived.

hunt-teamclock #4, session 30 (the audit part): events were stamped with each worker's own
clock, so a worker an hour behind wrote events an hour in the past; `skillbank audit --since
10m`, run from a machine with the right time, left them out, and `audit --json` listed times
going backwards. The insert now moves a worker's times onto PostgreSQL's clock when the two
differ by more than a second (`skillbank.store.postgres.audit.clock_offset`).

The worker's clock is set an hour back as faketime would: in process by replacing `datetime`
where the audit stamps and measures; for a `skillbank server` worker (another process owning
its root, its MCP client), by a `sitecustomize` that shifts the whole process's clock.
"""

from __future__ import annotations

import asyncio
import datetime as dt
import uuid
from datetime import datetime, timedelta, timezone

import psycopg
import pytest

from conftest import stop_process
from team_worker import open_bank, start_server

TOKEN = "audit-clock-token"
RULE = "Always tag the Quillon release builds before deploying them"
BEHIND = timedelta(hours=1)

SKEWED_SITE = """
import datetime as _dt, time as _time
_SKEW = -3600.0
_real, _real_time, _real_ns = _dt.datetime, _time.time, _time.time_ns
_time.time = lambda: _real_time() + _SKEW
_time.time_ns = lambda: _real_ns() + int(_SKEW * 1e9)
class _Meta(type):
    def __instancecheck__(cls, obj):
        return isinstance(obj, _real)
    def __subclasscheck__(cls, sub):
        return issubclass(sub, _real)
class _Behind(_real, metaclass=_Meta):
    @classmethod
    def now(cls, tz=None):
        return _real.now(tz) + _dt.timedelta(seconds=_SKEW)
_dt.datetime = _Behind
"""


class _Behind(datetime):
    @classmethod
    def now(cls, tz=None):  # type: ignore[override]
        return datetime.now(tz) - BEHIND


def _rows(url: str, deployment: str) -> list[tuple[str, datetime, datetime]]:
    """(action, at, PostgreSQL's now) of the deployment's audit rows, in table order."""
    with psycopg.connect(url, autocommit=True) as conn:
        return [tuple(r) for r in conn.execute(
            "SELECT action, at, now() FROM sb_audit WHERE deployment = %s ORDER BY seq",
            (deployment,)).fetchall()]


async def _add_through(url: str) -> str:
    from mcp_http import bearer_session, call_ok

    async with bearer_session(url, TOKEN, timeout=120) as client:
        answer = await call_ok(client, "add_guideline", {"text": RULE, "topic": "release"})
    return answer["guideline_id"]


@pytest.mark.parametrize("remote", [False, True], ids=["in-process", "client-of-owner"])
def test_an_hour_behind_workers_events_are_on_postgresqls_clock(
        tmp_path, chroma_server, postgres, remote, monkeypatch):
    """Before: the event's `at` was an hour before PostgreSQL's now, and `query(since=10
    minutes ago)` from a reader with the right time did not list it."""
    deployment = "d" + uuid.uuid4().hex[:12]
    root = tmp_path / "root"
    if remote:
        site = tmp_path / "site"
        site.mkdir()
        (site / "sitecustomize.py").write_text(SKEWED_SITE)
        monkeypatch.setenv("PYTHONPATH", str(site))
        proc, url = start_server(root, chroma_server, postgres.url, "--token", TOKEN, "--trust",
                                 deployment=deployment)
        try:
            gid = asyncio.run(_add_through(url))
        finally:
            stop_process(proc)
    else:
        import skillbank.audit
        import skillbank.store.postgres.audit

        bank = open_bank(root, chroma_server, postgres.url, deployment)
        try:
            with monkeypatch.context() as behind:
                behind.setattr(skillbank.audit, "datetime", _Behind)
                behind.setattr(skillbank.store.postgres.audit, "datetime", _Behind)
                gid = bank.guidelines.add(RULE, topic="release").guideline_id
        finally:
            bank.close()
    assert gid.startswith("gl-")
    [(action, at, now)] = _rows(postgres.url, deployment)
    assert action == "add"
    assert abs(now - at) < timedelta(minutes=5), (at, now)  # was: an hour before now
    reader = open_bank(tmp_path / "reader", chroma_server, postgres.url, deployment)
    try:
        since = datetime.now(timezone.utc) - timedelta(minutes=10)
        assert [e.id for e in reader.store.audit().query(since=since)] == [gid]  # was: []
    finally:
        reader.close()
    assert dt.datetime is datetime  # the in-process clock is back


class _Ahead(datetime):
    @classmethod
    def now(cls, tz=None):  # type: ignore[override]
        return datetime.now(tz) + BEHIND


def test_a_span_is_counted_back_on_postgresqls_clock(tmp_path, chroma_server, postgres,
                                                      monkeypatch):
    """Review (session 30): with events stamped on PostgreSQL's clock, `since=timedelta(10
    minutes)` (and `audit --since 10m`) was still counted back from the reader's own clock: a
    reader an hour ahead asked for events later than any there were. Fails before: []."""
    import skillbank.audit
    from skillbank.audit import parse_since

    deployment = "d" + uuid.uuid4().hex[:12]
    bank = open_bank(tmp_path / "root", chroma_server, postgres.url, deployment)
    try:
        gid = bank.guidelines.add(RULE, topic="release").guideline_id
        with monkeypatch.context() as ahead:
            ahead.setattr(skillbank.audit, "datetime", _Ahead)  # where parse_since reads it
            log = bank.store.audit()
            assert [e.id for e in log.query(since=timedelta(minutes=10))] == [gid]
            assert [e.id for e in log.query(since=parse_since("10m", span=True))] == [gid]
            assert log.query(since=parse_since("10m")) == []  # a moment: the reader's clock
            assert [e.id for e in log.query(since=timedelta(days=10 ** 6))] == [gid]
    finally:
        bank.close()
