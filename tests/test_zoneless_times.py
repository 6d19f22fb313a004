"""Times without a zone (hunt-time #2, #3, #7 and #8, session 29).

Stored and file times are UTC (a zone-less one in a file or an import line is read as UTC);
times a person types as an argument follow Python's convention, local time. Before: an
imported zone-less `created` was stored naive and `skills propose` failed for the whole
namespace (TypeError); a numeric `created` became "now" silently; a year-1 date loaded and the
Stats page answered 500; `since=datetime.now() - timedelta(hours=1)` was read as UTC, so in
Auckland "the last hour" lay 12 hours in the future and found nothing.
"""

from __future__ import annotations

import contextlib
import json
import os
import re
import time
from datetime import date, datetime, timedelta, timezone
from pathlib import Path
from typing import Iterator

import pytest

from conftest import cli_words
from owner_client import bank_for
from skillbank.audit import open_log

TASK = "Rotate the API keys for the billing service"


@contextlib.contextmanager
def local_zone(name: str) -> Iterator[None]:
    """This process (and an owner process started inside the block) in time zone `name`."""
    before = os.environ.get("TZ")
    os.environ["TZ"] = name
    time.tzset()
    try:
        yield
    finally:
        if before is None:
            os.environ.pop("TZ", None)
        else:
            os.environ["TZ"] = before
        time.tzset()


def _record_three(bank) -> None:
    for i in range(3):
        bank.experiences.record(task=TASK, outcome="success",
                                feedback=f"Revoke the old keys after every reload ({i}).")


@pytest.mark.parametrize("remote", [False, True], ids=["in-process", "client-of-owner"])
def test_import_reads_zoneless_dates_and_unix_seconds_as_utc_and_propose_runs(
        tmp_path, remote, minilm):
    lines = tmp_path / "import.jsonl"
    lines.write_text("".join(json.dumps({"task": f"{TASK} ({n})", "outcome": "success",
                                         "created": created}) + "\n"
                             for n, created in enumerate(
                                 ["2024-05-01T09:00", "2024-05-02", 1714550400, "2024-05-03Z"])))
    with local_zone("Pacific/Auckland"), bank_for(tmp_path, remote, minilm) as bank:
        _record_three(bank)
        report = bank.experiences.import_(lines)
        assert len(report.added) == 4 and not report.skipped, report
        created = {e.task: e.created for e in bank.experiences.list(limit=100)}
        assert created[f"{TASK} (0)"] == datetime(2024, 5, 1, 9, tzinfo=timezone.utc)
        assert created[f"{TASK} (1)"] == datetime(2024, 5, 2, tzinfo=timezone.utc)
        assert created[f"{TASK} (2)"] == datetime(2024, 5, 1, 8, tzinfo=timezone.utc)  # unix time
        assert created[f"{TASK} (3)"] == datetime(2024, 5, 3, tzinfo=timezone.utc)
        assert all(c.tzinfo is not None for c in created.values())
        bank.skills.propose()  # raised TypeError: can't compare offset-naive and offset-aware
        assert bank.experiences.recall(TASK, since="2024-05-02T12:00:00Z", k=10)
        assert f"{TASK} (2)" not in {h.record.task for h in bank.experiences.recall(
            TASK, since="2024-05-01T12:00:00Z", k=10)}


@pytest.mark.parametrize("remote", [False, True], ids=["in-process", "client-of-owner"])
def test_import_names_lines_whose_created_is_not_a_time_it_can_keep(tmp_path, remote):
    bad = ["yesterday", "0001-01-01", "9999-12-31T00:00", True, [2024, 5, 1], {"y": 2024},
           -99999999999999, 1e300]
    lines = tmp_path / "import.jsonl"
    lines.write_text("".join(json.dumps({"task": f"{TASK} {n}", "outcome": "success",
                                         "created": created}) + "\n"
                             for n, created in enumerate(bad))
                     + json.dumps({"task": "kept", "outcome": "success"}) + "\n")
    with bank_for(tmp_path, remote) as bank:
        report = bank.experiences.import_(lines)
        assert report.skipped == [f"import.jsonl:{n}" for n in range(1, len(bad) + 1)]
        assert [f.path for f in report.findings] == report.skipped
        assert all("created" in f.message for f in report.findings), report.findings
        assert "outside the dates" in report.findings[1].message
        assert [e.task for e in bank.experiences.list()] == ["kept"]  # no line became "now"


@pytest.mark.parametrize("remote", [False, True], ids=["in-process", "client-of-owner"])
def test_records_imported_naive_before_the_fix_are_read_in_utc(tmp_path, remote, minilm):
    root = tmp_path / "root"
    with bank_for(tmp_path, False, minilm) as bank:
        _record_three(bank)
    journal = root / "experiences" / "2024-05.jsonl"  # as the import wrote it: no zone
    journal.write_text(json.dumps({"op": "add", "record": {
        "id": "exp-0000000000aa", "task": TASK, "outcome": "success", "steps": [],
        "namespace": "default", "kind": "experience", "created": "2024-05-01T09:00:00"}}) + "\n")
    with bank_for(tmp_path, remote, minilm) as bank:
        old = bank.experiences.get("exp-0000000000aa")
        assert old.created == datetime(2024, 5, 1, 9, tzinfo=timezone.utc)
        bank.skills.propose()  # raised TypeError for the whole namespace


@pytest.mark.parametrize("remote", [False, True], ids=["in-process", "client-of-owner"])
@pytest.mark.parametrize("zone", ["Pacific/Auckland", "America/Los_Angeles"])
def test_a_naive_since_is_local_time(tmp_path, remote, zone, minilm):
    with local_zone(zone), bank_for(tmp_path, remote, minilm) as bank:
        eid = bank.experiences.record(task=TASK, outcome="success")
        last_hour = datetime.now() - timedelta(hours=1)
        next_hour = datetime.now() + timedelta(hours=1)
        found = [h.id for h in bank.experiences.recall(TASK, since=last_hour)]
        assert found == [eid]  # Auckland: read as UTC, "the last hour" began 12 h ahead
        assert bank.experiences.recall(TASK, since=next_hour) == []  # Los Angeles: 7 h back
        assert [h.id for h in bank.experiences.recall(
            TASK, since=last_hour.isoformat(timespec="minutes"))] == [eid]
        audit = open_log(tmp_path / "root")  # the log's own reader (not served to clients)
        assert [e.id for e in audit.query(since=last_hour)] == [eid]
        assert audit.query(since=next_hour) == []


@pytest.mark.parametrize("zone", ["Pacific/Auckland", "America/Los_Angeles"])
def test_audit_since_typed_without_a_zone_is_local_and_the_table_says_utc(
        cli_root: Path, zone):
    with local_zone(zone):
        cli_words("experiences", "record", "--task", TASK, "--outcome", "success")
        hour_ago = f"{datetime.now() - timedelta(hours=1):%Y-%m-%dT%H:%M}"
        in_an_hour = f"{datetime.now() + timedelta(hours=1):%Y-%m-%dT%H:%M}"
        shown = cli_words("audit", "--since", hour_ago)
        assert "Audit log (1)" in shown and "time (UTC)" in shown, shown
        assert f"{datetime.now(timezone.utc):%Y-%m-%d}" in shown  # the UTC date, as headed
        assert "No audited events match" in cli_words("audit", "--since", in_an_hour)
        assert "Audit log (1)" in cli_words("audit", "--since", "1h")
        listed = cli_words("experiences", "list")
        assert "created (UTC)" in listed, listed


def test_guideline_show_names_the_zone(cli_root: Path):
    shown = cli_words("guidelines", "learn", "Keep functions under 50 lines.")
    gid = re.search(r"gl-[0-9a-f]{12}", shown).group(0)
    shown = cli_words("guidelines", "show", gid)
    assert re.search(r"created \d{4}-\d\d-\d\d \d\d:\d\d UTC", shown), shown


@pytest.mark.parametrize("remote", [False, True], ids=["in-process", "client-of-owner"])
def test_a_hand_written_date_out_of_range_is_a_finding_and_stats_still_draw(tmp_path, remote):
    from starlette.testclient import TestClient

    from skillbank.ui.app import create_app

    root = tmp_path / "root"
    with bank_for(tmp_path, remote) as bank:
        gid = bank.guidelines.add("Keep functions under 50 lines.").guideline_id
        path = Path(bank.guidelines.get(gid).path)
    for written in ("0001-01-01", "9999-12-31"):
        text = path.read_text()
        path.write_text(re.sub(r"(?m)^created: .*$", f"created: {written}", text))
        with bank_for(tmp_path, remote) as bank:
            findings = [f for f in bank.guidelines.problems() if f.code == "date-range"]
            assert findings and "created" in findings[0].message, bank.guidelines.problems()
        path.write_text(text)
    # An experience imported in year 1 before imports checked the range still draws.
    (root / "experiences" / "0001-01.jsonl").write_text(json.dumps({"op": "add", "record": {
        "id": "exp-0000000000bb", "task": TASK, "outcome": "success", "steps": [],
        "namespace": "default", "kind": "experience", "created": "0001-01-01T00:00:00"}}) + "\n")
    with bank_for(tmp_path, remote) as bank:
        assert bank.experiences.get("exp-0000000000bb").created.year == 1
        page = TestClient(create_app(bank), base_url="http://127.0.0.1:8766").get("/stats")
        assert page.status_code == 200 and "0001-01-01" in page.text


def test_growth_chart_draws_the_first_and_last_days_there_are():
    from skillbank.ui.charts import Series, line_chart
    from skillbank.ui.stats import _running

    picture = line_chart([Series("x", [(date(1, 1, 1), 1), (date(9999, 12, 31), 2)])])
    assert "0001-01-01" in picture and "9999-12-31" in picture
    east = datetime(1, 1, 1, tzinfo=timezone(timedelta(hours=13)))
    assert _running("x", [east]).points == [(date(1, 1, 1), 1)]


def test_a_clients_naive_since_is_its_own_local_time_not_the_owners(tmp_path, minilm):
    """Review of #3 (session 29): the owner read a client's zone-less `since` in the owner's
    zone; a client in Auckland asking a UTC owner for "the last hour" found nothing. The owner
    here starts in UTC, then this process (its client) moves to Auckland. Fails before."""
    with local_zone("UTC"), bank_for(tmp_path, True, minilm) as bank:
        eid = bank.experiences.record(task=TASK, outcome="success")
        with local_zone("Pacific/Auckland"):
            last_hour = datetime.now() - timedelta(hours=1)
            found = [h.id for h in bank.experiences.recall(TASK, since=last_hour)]
            typed = [h.id for h in bank.experiences.recall(
                TASK, since=last_hour.isoformat(timespec="minutes"))]
            later = bank.experiences.recall(TASK, since=datetime.now() + timedelta(hours=1))
    assert found == [eid] and typed == [eid] and later == []


def test_the_browser_reads_a_typed_time_in_utc_on_both_pages(tmp_path):
    """Review of #3 (session 29): the Audit page read a typed `since` as the server's local
    time, the Experiences page its dates as UTC; both pages show UTC. In Los Angeles, a minute
    ago as the table shows it (UTC, no offset) was read 8 hours ahead. Fails before."""
    from datetime import timezone

    from skillbank.ui.audit_view import AuditFilter, audit_page

    with local_zone("America/Los_Angeles"), bank_for(tmp_path, False) as bank:
        eid = bank.experiences.record(task=TASK, outcome="success")
        shown = (datetime.now(timezone.utc) - timedelta(minutes=1)).strftime("%Y-%m-%dT%H:%M")
        page = audit_page(bank, AuditFilter(since=shown))
        assert eid in [e.id for e in page["rows"]] and not page["f"].problems, page
