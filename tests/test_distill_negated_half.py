""""Always X and never Y." keeps both instructions (hunt-badinput #8, session 26).

The distiller cut the sentence at "and never", and the half with no verb of its own ("never
passwords") gave no rule and no report: "Always log errors and never passwords." was learnt as
"Always log errors." alone. The verb is carried over where both halves then make sense alone
("Never log passwords."); where it is not (a verb with a preposition, "reply in English"), the
sentence stays one rule. In process and through a client of an owner process.
"""

from __future__ import annotations

import pytest

from owner_client import bank_for
from skillbank.distill import RuleDistiller


@pytest.mark.parametrize("critique, rules", [
    ("Always log errors and never passwords.", ["Always log errors.", "Never log passwords."]),
    ("Always use tabs and never spaces.", ["Always use tabs.", "Never use spaces."]),
    ("Use tabs, but never spaces.", ["Use tabs.", "Never use spaces."]),
    ("Log errors and never passwords or tokens.",
     ["Log errors.", "Never log passwords or tokens."]),
    ("In Makefiles, always use tabs and never spaces.",
     ["In Makefiles, always use tabs.", "In Makefiles, never use spaces."]),
    # The verb does not carry over: the sentence stays whole, nothing dropped.
    ("Always reply in English and never emojis.", ["Always reply in English and never emojis."]),
    ("Always use tabs for indentation and never spaces.",
     ["Always use tabs for indentation and never spaces."]),
    # Unchanged: a negation with its own verb, and one rule with a comma.
    ("Always use tabs and never use spaces.", ["Always use tabs.", "Never use spaces."]),
    ("Use pytest, never unittest.", ["Use pytest, never unittest."]),
    # A verb of its own is not given the first half's (review, session 26: "Never check
    # guess.", "Never open email."); a lone verb stays with its sentence, nothing dropped.
    ("Always check the logs and never guess.", ["Always check the logs and never guess."]),
    ("Always open a ticket and never email.", ["Always open a ticket and never email."]),
    # "them" points back to the tests: one rule, not "Never skip them." alone
    # (hunt-learnfaces #2, session 38).
    ("Always write tests and never skip them.", ["Always write tests; never skip them."]),
])
def test_the_negated_half_is_kept(critique, rules):
    assert [r.text for r in RuleDistiller().rules_from_critique(critique) if r.actionable] == rules


@pytest.mark.parametrize("remote", [False, True], ids=["in-process", "client-of-owner"])
def test_learning_the_critique_stores_both_rules(tmp_path, remote, minilm):
    with bank_for(tmp_path, remote, minilm) as bank:
        report = bank.guidelines.learn("Always log errors and never passwords.")
        assert [(e.action, e.text) for e in report.entries] == [
            ("added", "Always log errors."), ("added", "Never log passwords.")]
        active = {g.text for g in bank.guidelines.list() if g.status == "active"}
        assert active == {"Always log errors.", "Never log passwords."}
        found = bank.guidelines.search("write the log lines of the login handler")
        assert "Never log passwords." in [h.record.text for h in found]
