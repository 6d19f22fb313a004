"""`add(NEW, replaces=OLD)` stores NEW, whatever look-alike OLD has (soak hunt #2).

A = "Page the on-call engineer for any 5xx spike. (rev 8)" and B = the same with "(rev 90)"
are kept apart (other values). `add(NEW, replaces=B)` was `merged` into A: NEW was stored
nowhere, B retired, and A's old wording stayed the only active rule. With `replaces=` the
caller said what NEW is: it supersedes OLD (and any copy worded as OLD), merges only into a
rule already worded as NEW, and keeps any other look-alike apart as related. In process and
through a client of another process that owns the root.
"""

from __future__ import annotations

import pytest

from owner_client import bank_for

A = "Page the on-call engineer for any 5xx spike. (rev 8)"
B = "Page the on-call engineer for any 5xx spike. (rev 90)"
NEW = "Page the on-call engineer only for 5xx spikes above 2% for 5 minutes. (rev 120)"


def _active(bank) -> set[str]:
    return {g.text for g in bank.guidelines.list() if g.status == "active"}


def _check_new_is_stored(bank) -> None:
    a = bank.guidelines.add(A, topic="ops").guideline_id
    b = bank.guidelines.add(B, topic="ops").guideline_id
    entry = bank.guidelines.add(NEW, topic="ops", replaces=b)
    assert (entry.action, entry.text, entry.superseded_id) == ("superseded", NEW, b), entry
    assert _active(bank) == {A, NEW}
    assert bank.guidelines.get(b).superseded_by == entry.guideline_id
    assert a in bank.guidelines.get(entry.guideline_id).related  # kept apart, linked


def _check_untrusted_replace_waits(bank) -> None:
    a = bank.guidelines.add(A, topic="ops").guideline_id
    b = bank.guidelines.add(B, topic="ops").guideline_id
    entry = bank.guidelines.add(NEW, topic="ops", replaces=b, trusted=False)
    assert (entry.action, entry.text) == ("pending", NEW), entry
    assert bank.guidelines.get(a).reinforcements == 0
    assert _active(bank) == {A, B}
    bank.guidelines.approve(entry.guideline_id)
    assert _active(bank) == {A, NEW}


@pytest.mark.parametrize("remote", [False, True], ids=["in-process", "client-of-owner"])
def test_the_new_rule_is_stored_not_merged_into_a_look_alike(tmp_path, minilm, remote):
    with bank_for(tmp_path, remote, minilm) as bank:
        _check_new_is_stored(bank)


@pytest.mark.parametrize("remote", [False, True], ids=["in-process", "client-of-owner"])
def test_an_untrusted_replace_waits_and_touches_no_look_alike(tmp_path, minilm, remote):
    with bank_for(tmp_path, remote, minilm) as bank:
        _check_untrusted_replace_waits(bank)


def test_learn_with_replaces_too(tmp_path, minilm):
    with bank_for(tmp_path, False, minilm) as bank:
        bank.guidelines.add(A, topic="ops")
        b = bank.guidelines.add(B, topic="ops").guideline_id
        entry = bank.guidelines.learn(NEW, replaces=b).entries[0]
        assert entry.action == "superseded" and entry.superseded_id == b, entry
        assert len(_active(bank)) == 2 and B not in _active(bank)


def test_copies_of_the_replaced_rule_go_with_it(tmp_path, minilm):
    """A root holding one rule twice (soak hunt #1) served the old wording on after a replace."""
    with bank_for(tmp_path, False, minilm) as bank:
        old = bank.guidelines.add(B, topic="ops").guideline_id
        path = next((bank.root / "guidelines").rglob(f"{old}.md"))
        copy = "gl-000000000001"
        path.with_name(f"{copy}.md").write_text(
            path.read_text(encoding="utf-8").replace(old, copy), encoding="utf-8")
        bank.guidelines.sync()
        entry = bank.guidelines.add(NEW, topic="ops", replaces=old)
        assert entry.superseded_id == old
        assert _active(bank) == {NEW}
        assert bank.guidelines.get(copy).superseded_by == entry.guideline_id


def test_a_replacement_worded_as_an_active_rule_reinforces_it(tmp_path, minilm):
    """NEW already active as X: X is reinforced and supersedes OLD (no second copy of X)."""
    with bank_for(tmp_path, False, minilm) as bank:
        rule = "Deploy to production only on weekdays before 3 pm."
        x = bank.guidelines.add(rule, topic="ops").guideline_id
        old = bank.guidelines.add("Announce every release in the #releases channel.",
                                  topic="ops").guideline_id
        assert len(_active(bank)) == 2
        entry = bank.guidelines.add(rule, topic="ops", replaces=old)
        assert (entry.action, entry.guideline_id, entry.superseded_id) == ("merged", x, old)
        assert _active(bank) == {rule}
        assert bank.guidelines.get(old).superseded_by == x
