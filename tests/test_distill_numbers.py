"""A newer rule that differs from an older one only in a number (a limit, a count, a version)
replaces it (issue #25 item 5): "Keep functions under 40 lines." after "Keep functions under 50
lines." was merged as "the same action on the same objects", the new limit was lost and the old
rule served. The same numbers still merge; a rule that only adds a number refines the old one."""

from __future__ import annotations

import pytest

from skillbank import Skillbank
from skillbank.distill.supersession import overrules
from skillbank.embeddings import HashEmbedding


CASES = [
    ("Keep functions under 50 lines.", "Keep functions under 40 lines.", "40 lines"),
    ("test number 1", "test number 0", "number 0"),
]


def _changed_number(bank, old: str, new: str, served: str) -> None:
    g = bank.guidelines
    first = g.add(old).guideline_id
    g.learn(new)
    active = [x for x in g.list() if x.status == "active"]
    assert len(active) == 1, [(x.text, x.status) for x in g.list()]
    assert served in active[0].text
    assert g.get(first).status == "superseded"
    assert g.get(first).superseded_by == active[0].id
    hits = g.search(old, k=5)
    assert [h.id for h in hits] == [active[0].id]


@pytest.mark.parametrize("old, new, served", CASES)
def test_a_changed_number_supersedes_the_older_rule(tmp_path, old, new, served):
    with Skillbank.open(tmp_path / "root", embedding_function=HashEmbedding(),
                        include_bundled=False) as bank:
        _changed_number(bank, old, new, served)


def test_a_changed_number_supersedes_through_a_client_of_an_owner_process(tmp_path):
    from owner_client import client_of_owner

    with client_of_owner(tmp_path / "root") as bank:
        _changed_number(bank, *CASES[0])


def test_the_same_number_still_merges(tmp_path):
    with Skillbank.open(tmp_path / "root", embedding_function=HashEmbedding(),
                        include_bundled=False) as bank:
        g = bank.guidelines
        g.add("Keep functions under 50 lines.")
        g.learn("Keep all functions under 50 lines.")
        active = [x for x in g.list() if x.status == "active"]
        assert len(active) == 1 and "50 lines" in active[0].text
        assert active[0].reinforcements >= 1


def test_number_cues():
    assert overrules("Keep functions under 40 lines.", "Keep functions under 50 lines.")
    assert overrules("Pin Python 3.12 in CI.", "Pin Python 3.11 in CI.")
    # Same numbers, a number only added, or other things counted: not a replacement.
    assert overrules("Keep all functions under 50 lines.", "Keep functions under 50 lines.") is None
    assert overrules("Keep functions under 50 lines and 4 arguments.",
                     "Keep functions under 50 lines.") is None
    assert overrules("Keep subject lines under 60 characters.",
                     "Keep functions under 50 lines.") is None


#: A limit written as a word is a number too: "ten bullets" then "five bullets" left both rules
#: active and both in the block (with digits the newer one replaced the older).
WORDS = ("Keep slides to ten bullets.", "Keep slides to five bullets.")


def _number_words(bank) -> None:
    old = bank.guidelines.learn(WORDS[0]).entries[0].guideline_id
    entry = bank.guidelines.learn(WORDS[1]).entries[0]
    assert entry.action == "superseded" and entry.superseded_id == old, entry
    assert "now 5 instead of 10" in entry.detail
    assert [g.text for g in bank.guidelines.list() if g.status == "active"] == [WORDS[1]]


def test_a_number_written_as_a_word_replaces_the_old_one(tmp_path):
    from skillbank import Skillbank
    from skillbank.embeddings import HashEmbedding

    with Skillbank.open(tmp_path / "root", embedding_function=HashEmbedding(),
                        include_bundled=False) as bank:
        _number_words(bank)


def test_a_number_written_as_a_word_replaces_the_old_one_through_a_client(tmp_path):
    from owner_client import client_of_owner

    with client_of_owner(tmp_path / "root") as bank:
        _number_words(bank)
