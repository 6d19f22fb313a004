"""A learn report's `nearest` lists existing rules, not the rules the same critique just wrote:
a sibling showed up at similarity 1.0 (the shared critique matched, not the rule), inviting a
curating agent to replace or merge two instructions of one critique. In process and through a
client."""

from __future__ import annotations

from owner_client import client_of_owner
from skillbank import Skillbank
from skillbank.embeddings import HashEmbedding

CRITIQUE = "Use British spelling in the report. Put the summary at the top of the report."


def _nearest(bank) -> None:
    old = bank.guidelines.learn("Cite the source of every figure in the report.").entries[0]
    entries = bank.guidelines.learn(CRITIQUE).entries
    assert [e.action for e in entries] == ["added", "added"], entries
    siblings = {e.guideline_id for e in entries}
    for entry in entries:
        shown = {n["id"] for n in entry.nearest}
        assert not siblings & shown, entry.nearest
    assert any(old.guideline_id in {n["id"] for n in e.nearest} for e in entries)


def test_nearest_lists_no_sibling(tmp_path):
    with Skillbank.open(tmp_path / "root", embedding_function=HashEmbedding(),
                        include_bundled=False) as bank:
        _nearest(bank)


def test_nearest_lists_no_sibling_through_a_client(tmp_path):
    with client_of_owner(tmp_path / "root") as bank:
        _nearest(bank)
