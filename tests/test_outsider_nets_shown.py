"""A record's detail shows the outsiders' nets behind its counters (session 20, defect 2a).

An outsider's fifty "not helpful" marks count once, as the sign of his net
(`skillbank.outside_votes`), but `experiences get`, `skills show` and `load` showed only the
counters: a curator saw a score move by one and could not see who moved it, nor that fifty
votes stood behind it. Now `Usage.outside` (principal -> net) is filled on a record's detail —
`bank.experiences.get(id)` and `bank.skills.load(name)` — and the CLI prints it; a guideline's
`outside_votes` were on its record and are printed too. In process, through a client of an owner
process and in team mode (PostgreSQL).
"""

from __future__ import annotations

import pytest

from conftest import write_skill
from owner_client import bank_for
from skillbank.cli.common import usage_text
from test_outsider_ratings import CARL, TINA
from test_team_guidelines import workers  # noqa: F401 - a fixture


def _check(writer, reader) -> None:
    eid = writer.scoped(TINA).experiences.record(task="Rotate the team's signing keys",
                                                 outcome="success")
    for _ in range(5):
        writer.scoped(CARL).rate(eid, helpful=False)
    usage = reader.experiences.get(eid).usage
    assert (usage.failures, usage.outside) == (1, {"carl": -5})
    assert "outsiders (each counted once): carl -5" in usage_text(usage)
    write_skill(writer.root / "skills", "deploy-web", "Deploy the web service.",
                "# Steps\n\nRun the deploy script.\n")
    writer.skills.sync()
    for _ in range(3):
        writer.scoped(CARL).rate("skill:deploy-web", helpful=True)
    reader.skills.sync()
    assert reader.skills.load("deploy-web").usage.outside == {"carl": 3}
    listed = {s.name: s for s in reader.skills.list()}["deploy-web"].usage
    assert listed.successes == 1 and listed.outside == {}  # lists stay one look-up cheap


@pytest.mark.parametrize("remote", [False, True], ids=["in-process", "client-of-owner"])
def test_the_detail_shows_outsiders_nets(tmp_path, remote):
    with bank_for(tmp_path, remote) as bank:
        _check(bank, bank)


def test_the_detail_shows_outsiders_nets_in_team_mode(workers):
    a, b = workers
    eid = a.scoped(TINA).experiences.record(task="Restore the team's backups", outcome="success")
    for worker in (a, b, a):
        worker.scoped(CARL).rate(eid, helpful=False)
    assert b.experiences.get(eid).usage.outside == {"carl": -3}


def test_the_cli_prints_a_guidelines_outsiders():
    from types import SimpleNamespace

    from skillbank.cli.common import outsiders

    assert outsiders({}) == ""
    assert outsiders({"bob": -1, "alice": 3}) == "; outsiders (each counted once): alice +3, bob -1"
    assert "uses" not in usage_text(SimpleNamespace(uses=2, successes=1, failures=0, outside={}))
