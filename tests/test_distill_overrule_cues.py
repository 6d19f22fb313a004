"""Overruling read from plain language, without false alarms (#25, no-model arm).

On the critique stream (learning loop, dev) three of the six supersessions the deterministic
distiller made were wrong, and each took a taught rule out of every later block:

* "Turn the nested subqueries into CTEs." was overruled by "Avoid three levels of nested
  subqueries.": a transforming verb ("turn X into Y", "replace X with Y") asks to move *away*
  from X, it does not ask for X.
* "Aggregate at the right grain before joining." was overruled by "Rewrite them all as
  INNER/LEFT JOIN ... ON.": LEFT is an SQL keyword, not the opposite of "right".
* "Avoid three levels of nested subqueries." was overruled by "Reference the same subquery.":
  one shared word overrules only a rule that chooses or rejects (a "use", "prefer", "stop" rule),
  not any action that happens to name it.

And one real change was missed: "Include the personal sign-off." kept being served after
"replies now sign off as 'The Acme Support Team' rather than with individual names": antonyms
(personal / team) on the same matter ("sign-off" / "sign off") overrule.
"""

from __future__ import annotations

from skillbank import Skillbank
from skillbank.distill import RuleDistiller
from skillbank.distill.relations import _antonym_conflict, _stance
from skillbank.distill.supersession import overrules, stance


def test_a_transforming_verb_moves_away_from_its_object():
    assert stance("Turn the nested subqueries into CTEs.")["subquery"] < 0
    assert stance("Turn the nested subqueries into CTEs.")["cte"] > 0
    assert stance("Replace `print` calls with the logging module.")["logg"] > 0
    assert _stance("Turn the nested subqueries into CTEs.")["subquery"] < 0
    # ... so a rule rejecting the same thing agrees with it, and one asking for it disagrees.
    assert overrules("Avoid three levels of nested subqueries.",
                     "Turn the nested subqueries into CTEs.") is None
    assert RuleDistiller().relate("Avoid three levels of nested subqueries.",
                                  "Turn the nested subqueries into CTEs.",
                                  similarity=0.7) != "contradiction"
    assert overrules("Use nested subqueries, not CTEs.", "Turn the nested subqueries into CTEs.")
    # "Move X into Y" relocates X, it does not reject it.
    assert stance("Move the detail into the speaker notes.")["detail"] > 0


def test_code_keywords_in_capitals_are_not_antonyms():
    assert _antonym_conflict("Rewrite them all as INNER/LEFT JOIN ... ON.",
                             "Aggregate at the right grain before joining.") is None
    assert RuleDistiller().relate("Rewrite them all as INNER/LEFT JOIN ... ON.",
                                  "Aggregate at the right grain before joining.",
                                  similarity=0.6) != "contradiction"
    # Words still count in lower case, and the country codes in capitals.
    assert _antonym_conflict("Align labels to the left.", "Align labels to the right.")
    assert _antonym_conflict("Use UK spelling.", "Use US spelling.")


def test_one_shared_word_overrules_only_a_choice():
    assert overrules("Reference the same subquery.",
                     "Avoid three levels of nested subqueries.") is None
    assert overrules("Stop using tabs.", "Indent Python code with tabs.")
    assert overrules("Use tabs.", "Never use tabs.")


def test_antonyms_on_the_same_matter_overrule():
    new = ("Make replies sign off as 'The Acme Support Team' rather than with individual "
           "names.")
    assert overrules(new, "Include the personal sign-off.")
    # ... but not a rule about another matter that happens to hold the other side's word.
    assert overrules(new, "Address the customer by name.") is None
    assert overrules("Keep the summary short.", "Write a longer intro for the API guide.") is None


def test_the_policy_change_retires_the_personal_sign_off(tmp_path, minilm):
    """Learning loop, dev: "Include the personal sign-off." was served in 4-5 blocks after the
    policy change, until a later critique said the team moved away from personal sign-offs."""
    with Skillbank.open(tmp_path / "root", embedding_function=minilm,
                        include_bundled=False) as bank:
        g = bank.guidelines
        old = g.learn("nit: the personal sign-off is missing. First name, please.",
                      task="Answer a billing question from a long-time customer.")
        (old_id,) = [e.guideline_id for e in old.entries if e.action == "added"]
        report = g.learn("Policy update from this week: replies now sign off as 'The Acme "
                         "Support Team' rather than with individual names.",
                         task="Reply to a customer asking about deleting their data.")
        assert g.get(old_id).status == "superseded", report
        served = " ".join(h.record.text for h in g.search("Reply to a customer", k=10))
        assert "personal sign-off" not in served and "Acme Support Team" in served
