"""A value a rule says it replaced is not one of its values (hunt-scopes #3, session 32).

After "From now on run the quince migrations before 11am instead of 9am.", adding "Run the
quince migrations before 9am" was "merged" into the 11am rule ("same action 'run' on '9am',
'quince', 'migr'"): `decisions.other_values` read the old rule's "instead of 9am" as one of its
values, so no value differed, the user's rule was stored nowhere and the 11am rule counted one
more reinforcement. Now the 9am rule is the same rule with another value: kept apart, as
"... before 9am" after "... before 11am" is (docs/api.md, "What is merged"); a change cue
("again", "actually") makes it supersede the 11am rule, and restating 11am still merges.
"""

from __future__ import annotations

import pytest

from owner_client import bank_for
from skillbank.memories.guidelines.decisions import other_values

OLD = "From now on run the quince migrations before 11am instead of 9am."


def test_the_replaced_value_is_not_a_value_of_the_rule():
    assert other_values("Run the quince migrations before 9am",
                        "Run the quince migrations before 11am instead of 9am.") == [("9am", "11am")]
    assert other_values("Hold the standup on Mondays", "Hold the standup on Fridays, not Mondays.")
    assert other_values("Run the quince migrations before 11am",
                        "Run the quince migrations before 11am instead of 9am.") == []


@pytest.mark.parametrize("remote", [False, True], ids=["in-process", "client-of-owner"])
def test_the_old_value_again_is_kept_not_merged(tmp_path, remote):
    with bank_for(tmp_path, remote) as bank:
        old = bank.guidelines.learn(OLD, task="db migrations").entries[0]
        assert old.action == "added"
        entry = bank.guidelines.add("Run the quince migrations before 9am", topic="db")
        # Before: merged into the 11am rule, "Run the quince migrations before 9am" stored nowhere.
        assert entry.action == "added" and entry.guideline_id != old.guideline_id, entry.detail
        assert "other values" in entry.detail
        texts = {g.text: g.reinforcements for g in bank.guidelines.list(status="active")}
        assert texts == {"Run the quince migrations before 9am": 0, old.text: 0}
        again = bank.guidelines.add("Run the quince migrations before 11am", topic="db")
        assert (again.action, again.guideline_id) == ("merged", old.guideline_id), again.detail
