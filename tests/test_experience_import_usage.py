"""`experiences import` keeps the usage `export` writes (hunt, session 17): moving memory by
export/import reset every helped / not-helped rating to zero, and `prune` reads them."""

from __future__ import annotations

import json

import pytest

from typer.testing import CliRunner

from owner_client import bank_for
from skillbank import Scope
from skillbank.cli import app

TASK = "Rotate the staging database credentials"


@pytest.mark.parametrize("remote", [False, True], ids=["in-process", "client"])
def test_imported_records_keep_their_usage_once(tmp_path, remote):
    out = tmp_path / "out.jsonl"
    for side in ("a", "b"):
        (tmp_path / side).mkdir()
    with bank_for(tmp_path / "a", remote) as source:
        eid = source.experiences.record(task=TASK, outcome="failure", feedback="wrong vault path")
        for helped in (False, False, True):
            source.rate(eid, helped)
        source.experiences.export(out)
    exported = json.loads(out.read_text().splitlines()[0])["usage"]
    assert (exported["successes"], exported["failures"]) == (1, 2)
    with bank_for(tmp_path / "b", remote) as target:
        assert target.experiences.import_(out).added == [eid]
        usage = target.experiences.get(eid).usage
        assert (usage.uses, usage.successes, usage.failures) == \
            (exported["uses"], 1, 2)
        assert usage.last_used is not None
        again = target.experiences.import_(out)  # the same file again adds nothing, counts too
        assert again.added == [] and target.experiences.get(eid).usage.failures == 2


def test_an_untrusted_import_keeps_its_counts_apart(tmp_path):
    out = tmp_path / "out.jsonl"
    with bank_for(tmp_path / "a", False) as source:
        eid = source.experiences.record(task=TASK, outcome="success")
        source.rate(eid, True)
        source.experiences.export(out)
    line = json.loads(out.read_text())
    line["usage"] = {"uses": 500, "successes": 500, "failures": 0}  # a forged "it always helps"
    out.write_text(json.dumps(line) + "\n")
    with bank_for(tmp_path / "b", False) as target:
        agent = target.scoped(Scope(principal="agent", namespace="default", role="contributor",
                                    trusted=False, face="test"))
        added = agent.experiences.import_(out).added
        assert len(added) == 1
        assert target.experiences.get(added[0]).status == "pending"
        assert target.experiences.usage.get(added[0]).successes == 0  # moves nothing
        assert target.experiences.usage.untrusted(added[0]).successes == 500


@pytest.mark.parametrize("usage", [
    {"uses": -4, "successes": "many"}, {"uses": -5, "successes": -3, "failures": 10**12},
    {"uses": 2, "successes": 1.5}, {"uses": True}, "high", [1, 2, 3],
], ids=["word", "negative-and-absurd", "fraction", "bool", "string", "list"])
def test_usage_that_is_not_counts_names_the_line_and_exits_2(tmp_path, cli_root, usage):
    """Counts that are not counts name the line as not read, as any other bad field does
    (hunt-expscale #3, session 37): they were reset to 0/0/0 with exit 0 and "0 lines could
    not be read", so a damaged backup lost its help counts without a word. The file's good
    lines are imported; the bad one is named and the CLI exits 2. (This test pinned the old
    silent reset as "left behind and the record imported"; changed on purpose.)"""
    out = tmp_path / "out.jsonl"
    out.write_text(json.dumps({"task": "Renew the TLS certificate for the API gateway",
                               "outcome": "success"}) + "\n"
                   + json.dumps({"task": TASK, "outcome": "success", "usage": usage}) + "\n")
    (tmp_path / "lib").mkdir()
    with bank_for(tmp_path / "lib", False) as bank:
        report = bank.experiences.import_(out)
        assert len(report.added) == 1 and report.skipped == ["out.jsonl:2"]
        assert [(f.code, f.path) for f in report.findings] == [("invalid-record", "out.jsonl:2")]
        assert "usage" in report.findings[0].message
        assert TASK not in [r.task for r in bank.experiences.list()]  # nothing reset silently
    result = CliRunner().invoke(app, ["experiences", "import", str(out)])
    assert result.exit_code == 2, result.output
    assert "out.jsonl:2" in result.output and "usage" in result.output


@pytest.mark.parametrize("usage", [None, {}, {"uses": 0, "successes": 0, "failures": 0}])
def test_no_usage_or_zero_counts_import_as_before(tmp_path, usage):
    out = tmp_path / "out.jsonl"
    line = {"task": TASK, "outcome": "success"}
    if usage is not None:
        line["usage"] = usage
    out.write_text(json.dumps(line) + "\n")
    with bank_for(tmp_path, False) as bank:
        report = bank.experiences.import_(out)
        assert len(report.added) == 1 and not report.skipped and not report.findings
        assert bank.experiences.get(report.added[0]).usage.uses == 0
