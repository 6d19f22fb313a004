"""`audit.query(since=...)` takes what `recall(since=...)` takes (hunt-trust #4, session 30).

A reviewer's `bank.scoped(scope).audit.query(since="2026-12-01")` raised a raw
`TypeError: combine() argument 1 must be datetime.date, not str` (and `since=<unix time>` the
same with `int`), while `recall` in the same script took both: the log's reader handed any
`since` that was not a datetime to `datetime.combine`. Now every `since` of the API is read by
one rule (`skillbank.moments.typed_since`): a datetime or date, an ISO date or time, unix
seconds or a timedelta; anything else is an InvalidInputError naming it. In process and
through a client of an owner process.
"""

from __future__ import annotations

from datetime import datetime, timedelta, timezone

import pytest

from owner_client import bank_for
from skillbank.errors import InvalidInputError
from skillbank.scope import Scope

REVIEWER = Scope(principal="tina", namespace="team", role="reviewer", face="test")


@pytest.mark.parametrize("remote", [False, True], ids=["in-process", "client-of-owner"])
def test_audit_since_takes_iso_text_unix_time_and_a_span(tmp_path, remote):
    with bank_for(tmp_path, remote) as bank:
        view = bank.scoped(REVIEWER)
        eid = view.experiences.record(task="Rotate the team's signing keys", outcome="success")
        audit = view.audit
        hour_ago = datetime.now(timezone.utc) - timedelta(hours=1)
        in_an_hour = datetime.now(timezone.utc) + timedelta(hours=1)
        for since in (hour_ago.isoformat(), hour_ago.timestamp(), int(hour_ago.timestamp()),
                      timedelta(hours=1), "2000-01-01", hour_ago):
            assert [e.id for e in audit.query(since=since)] == [eid], since  # TypeError before
            assert [e.id for e in audit.query(since=since, limit=5)] == [eid], since
        for since in (in_an_hour.isoformat(), in_an_hour.timestamp(), "2999-01-01"):
            assert audit.query(since=since) == [] and audit.query(since=since, limit=1) == []
        for since in ("yesterday", "", True, [2026, 12, 1], float("nan")):
            with pytest.raises(InvalidInputError, match="is not a time"):
                audit.query(since=since)
