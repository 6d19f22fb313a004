"""A client's zone-less `since` is read at its UTC offset on that date, DST included, as in
process (hunt-trust #3, session 30).

A client of an owner process sent one number with each call, its UTC offset at the moment of
the call, and the owner applied it to every zone-less time: in Berlin in December (+01:00),
`recall(since=datetime(2026, 7, 1, 12, 0))` (12:00 CEST, 10:00Z) was read as 11:00Z, and a run
of 10:30Z was found in process but not through the client. Now the client writes its zone into
the typed times it sends (`skillbank.sharing.arguments.with_local_zones`): a naive datetime, a
date and an ISO text without a zone, by keyword or by position, each at the offset of its own
date. Runs in January and July, so one of them is on the other side of DST from whatever day
the test runs. The owner still reads a client of the previous release (one `utc_offset`).
"""

from __future__ import annotations

import json
from datetime import date, datetime, timedelta, timezone

import pytest

from owner_client import bank_for
from skillbank.moments import caller_offset, typed_utc, with_local_zone
from test_zoneless_times import local_zone

TASK = "Compress the nightly log archives"
RUNS = {"exp-0000000000a1": "2026-01-15T10:30:00+00:00",  # 11:30 CET (+01:00)
        "exp-0000000000a7": "2026-07-01T10:30:00+00:00"}  # 12:30 CEST (+02:00)


def _found(bank, *args, **kwargs) -> set[str]:
    if not args:
        kwargs["k"] = 10
    return {h.id for h in bank.experiences.recall(TASK, *args, **kwargs)} & set(RUNS)


@pytest.mark.parametrize("remote", [False, True], ids=["in-process", "client-of-owner"])
def test_a_zoneless_since_is_read_at_the_offset_of_its_own_date(tmp_path, remote):
    lines = tmp_path / "runs.jsonl"
    lines.write_text("".join(json.dumps({"id": i, "task": f"{TASK} on {c[:10]}",
                                         "outcome": "success", "created": c}) + "\n"
                             for i, c in RUNS.items()))
    with local_zone("UTC"), bank_for(tmp_path, remote) as bank:  # an owner in UTC
        assert len(bank.experiences.import_(lines).added) == 2
        with local_zone("Europe/Berlin"):
            assert _found(bank) == set(RUNS)
            # Noon in Berlin: 11:00Z in January (after its run), 10:00Z in July (before).
            for noon in (datetime(2026, 1, 15, 12), "2026-01-15T12:00", "2026-01-15 12:00"):
                assert _found(bank, since=noon) == {"exp-0000000000a7"}, noon
            for noon in (datetime(2026, 7, 1, 12), "2026-07-01T12:00"):
                assert _found(bank, since=noon) == {"exp-0000000000a7"}, noon  # [] before
                assert _found(bank, 10, None, None, None, noon) == {"exp-0000000000a7"}
            # 11:00 in Berlin: 10:00Z in January (before its run), 09:00Z in July.
            assert _found(bank, since=datetime(2026, 1, 15, 11)) == set(RUNS)  # one before
            assert _found(bank, since=date(2026, 7, 2)) == set()
            assert _found(bank, since=datetime(2026, 7, 1, 12, tzinfo=timezone.utc)) == set()
            assert _found(bank, since=timedelta(days=3650)) == set(RUNS)


def test_with_local_zone_and_an_old_clients_offset():
    with local_zone("Europe/Berlin"):
        assert with_local_zone(datetime(2026, 7, 1, 12)).utcoffset() == timedelta(hours=2)
        assert with_local_zone(datetime(2026, 1, 1, 12)).utcoffset() == timedelta(hours=1)
        assert with_local_zone("2026-07-01T12:00") == "2026-07-01T12:00:00+02:00"
        assert with_local_zone(date(2026, 7, 1)) == datetime(
            2026, 7, 1, tzinfo=timezone(timedelta(hours=2)))
        for kept in ("2026-07-01T12:00Z", "yesterday", 1764547200, timedelta(hours=1), None,
                     datetime(2026, 7, 1, 12, tzinfo=timezone.utc)):
            assert with_local_zone(kept) == kept
    with local_zone("UTC"), caller_offset(3600):  # a client of the previous release
        assert typed_utc(datetime(2026, 7, 1, 12)) == datetime(2026, 7, 1, 11,
                                                               tzinfo=timezone.utc)
