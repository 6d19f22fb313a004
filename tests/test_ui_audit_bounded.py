"""The memory browser's audit page reads the page it shows, not the whole log.

hunt-pg #4, session 28: `audit_page` asked the log for every matching event and kept the last
501, so a view read all of sb_audit (14-17 s at 1M rows) under the lock every page shares; the
file log likewise parsed every line of every month. The filters (the browser's namespaces, the
`trusted` choice) now go to the query with the page's limit: PostgreSQL is asked for at most
501 rows (`LIMIT` in the SQL), and the files are read from their end.
"""

from __future__ import annotations

import uuid
from datetime import datetime, timedelta, timezone

import pytest

from owner_client import bank_for
from skillbank import scope as scopes
from skillbank.audit import AuditEvent, FileAuditLog
from skillbank.ui.audit_view import PAGE_LIMIT, AuditFilter, audit_page
from team_worker import open_bank

OTHER = scopes.Scope(principal="carol", namespace="other", role="admin", face="test")


def synthetic(count: int, *, untrusted_first: int = 5, other_every: int = 100) -> list[AuditEvent]:
    """`count` events, oldest first: the first few untrusted, one in `other_every` in 'other'."""
    start = datetime.now(timezone.utc) - timedelta(days=1)
    return [AuditEvent(at=(start + timedelta(milliseconds=n)).isoformat(timespec="microseconds"),
                       principal="bot", role="admin", face="test",
                       namespace="other" if n % other_every == 0 else "default",
                       action="record", kind="experience", id=f"exp-{n:08d}",
                       trusted=n >= untrusted_first) for n in range(count)]


def test_the_postgres_audit_page_fetches_one_page_of_rows(
        tmp_path, chroma_server, postgres, monkeypatch):
    bank = open_bank(tmp_path / "root", chroma_server, postgres.url, "d" + uuid.uuid4().hex[:12])
    try:
        events = synthetic(3000)
        bank.audit.append(events)
        fetched: list[tuple[str, int]] = []
        real_execute = bank.audit.db.execute

        def counting(sql, params=None):  # the real query, its size noted
            rows = real_execute(sql, params)
            fetched.append((sql, len(rows)))
            return rows

        monkeypatch.setattr(bank.audit.db, "execute", counting)
        shown = audit_page(bank, AuditFilter.parse({}))
        assert [e.id for e in shown["rows"]] == [e.id for e in events[::-1][:PAGE_LIMIT]]
        assert shown["more"]
        untrusted = audit_page(bank, AuditFilter.parse({"trusted": "no"}))
        assert [e.id for e in untrusted["rows"]] == [e.id for e in events[:5][::-1]]
        with scopes.using(OTHER):  # a browser for one namespace: its events only
            theirs = audit_page(bank, AuditFilter.parse({}))
        assert [e.id for e in theirs["rows"]] == [e.id for e in events[::100]][::-1]
        assert len(fetched) == 3
        for sql, rows in fetched:
            assert "LIMIT" in sql and rows <= PAGE_LIMIT + 1, (sql, rows)
    finally:
        bank.close()


@pytest.mark.parametrize("remote", [False, True], ids=["in-process", "client-of-owner"])
def test_the_file_audit_page_reads_the_end_of_the_log(tmp_path, remote, monkeypatch):
    with bank_for(tmp_path, remote) as bank:
        FileAuditLog(tmp_path / "root" / "audit").append(synthetic(20_000))
        newest = bank.experiences.record(task="Rotate the Quillon keys", outcome="success")
        parsed = []
        real = AuditEvent.from_json.__func__

        def counting(cls, data):
            parsed.append(1)
            return real(cls, data)

        monkeypatch.setattr(AuditEvent, "from_json", classmethod(counting))
        shown = audit_page(bank, AuditFilter.parse({}))
        assert shown["rows"][0].id == newest and shown["rows"][1].id == "exp-00019999"
        assert len(shown["rows"]) == PAGE_LIMIT and shown["more"]
        assert len(parsed) <= PAGE_LIMIT + 1, len(parsed)
        monkeypatch.undo()
        untrusted = audit_page(bank, AuditFilter.parse({"trusted": "no"}))  # a rare filter:
        assert [e.id for e in untrusted["rows"]] == [f"exp-{n:08d}" for n in range(4, -1, -1)]
