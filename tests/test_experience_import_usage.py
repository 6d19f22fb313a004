"""`experiences import` keeps the usage `export` writes (hunt, session 17): moving memory by
export/import reset every helped / not-helped rating to zero, and `prune` reads them."""

from __future__ import annotations

import json

import pytest

from owner_client import bank_for
from skillbank import Scope

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


def test_usage_that_is_not_counts_is_left_behind_and_the_record_imported(tmp_path):
    out = tmp_path / "out.jsonl"
    out.write_text(json.dumps({"task": TASK, "outcome": "success",
                               "usage": {"uses": -4, "successes": "many"}}) + "\n")
    with bank_for(tmp_path, False) as bank:
        report = bank.experiences.import_(out)
        assert len(report.added) == 1 and not report.skipped
        assert bank.experiences.get(report.added[0]).usage.uses == 0
