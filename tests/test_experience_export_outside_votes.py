"""Export / import keeps an outsider's net vote (hunt-roundtrip #3, session 33).

An outsider (a principal who only reads a record's namespace) counts once per record, as his
net (`skillbank.outside_votes`). The export line said `"outside": {}` though `get` showed
`{'carol': 2}`: in the importing bank his +1 became an anonymous count, and his next mark there
counted again (successes 1 -> 2, nets {'carol': 1}), so one outsider weighed two.
"""

from __future__ import annotations

import json

import pytest

from owner_client import bank_for
from skillbank import Scope

CAROL = Scope(principal="carol", namespace="carol", reads=("default",), role="contributor")


def _seen(bank, eid):
    usage = bank.experiences.get(eid).usage
    return usage.successes, usage.failures, usage.outside


@pytest.mark.parametrize("remote", [False, True], ids=["in-process", "client-of-owner"])
def test_an_outsiders_net_survives_export_and_import(tmp_path, remote):
    out = tmp_path / "out.jsonl"
    for side in ("a", "b"):
        (tmp_path / side).mkdir()
    with bank_for(tmp_path / "a", remote) as source:
        eid = source.experiences.record(task="Renew the wildcard certificate",
                                        outcome="success")
        for _ in range(2):
            source.scoped(CAROL).experiences.mark(eid, helped=True)
        assert _seen(source, eid) == (1, 0, {"carol": 2})
        source.experiences.export(out)
    assert json.loads(out.read_text().splitlines()[0])["usage"]["outside"] == {"carol": 2}
    with bank_for(tmp_path / "b", remote) as target:
        assert target.experiences.import_(out).added == [eid]
        assert _seen(target, eid) == (1, 0, {"carol": 2})  # was (1, 0, {})
    with bank_for(tmp_path / "b", remote) as target:  # reopened: the usage log replays them
        assert _seen(target, eid) == (1, 0, {"carol": 2})
        target.scoped(CAROL).experiences.mark(eid, helped=True)
        assert _seen(target, eid) == (1, 0, {"carol": 3})  # was (2, 0, {'carol': 1})
        # Three "not helpful" of his turn his one vote around, as on the source.
        for _ in range(4):
            target.scoped(CAROL).experiences.mark(eid, helped=False)
        assert _seen(target, eid) == (0, 1, {"carol": -1})
        again = target.experiences.import_(out)  # the same file again adds nothing, nets too
        assert again.added == [] and _seen(target, eid) == (0, 1, {"carol": -1})
