"""A rule that names its object only by a pronoun ("Lead with them.") is the same rule as one
with the same action on what the critiques around both are about ("Lead with the steps."):
the deterministic distiller kept them apart (no object words to share), so one true rule held
several guidelines (issue #25, no-model arm). The words cannot say what "them" is, so the merge
needs the matching similarity (critiques included) at the paraphrase bar; a rule with objects
of its own beside the same verb stays a rule of its own."""

from __future__ import annotations

from skillbank import Skillbank
from skillbank.embeddings import HashEmbedding

FIRST = ("The reset steps sit at the very bottom of the help page, after a long intro about "
         "why two-factor authentication matters. Lead with the steps.")
AGAIN = ("The reset steps for two-factor authentication are at the very bottom of the help "
         "page, after the long intro. Lead with them.")
OTHER = ("The renewal email hides what matters at the end. Lead with the price, the discount "
         "code and the renewal date.")


def _pronoun_restatement(bank) -> None:
    g = bank.guidelines
    first = g.learn(FIRST).ids("added")[0]
    report = g.learn(AGAIN)
    assert [(e.action, e.guideline_id) for e in report.entries if e.guideline_id] == [
        ("merged", first)], report
    active = [x for x in g.list() if x.status == "active"]
    assert [x.text for x in active] == ["Lead with the steps."]
    # The same verb with objects of its own (a pronoun wording joins only a rule that names one
    # or two things): kept apart.
    other = g.learn(OTHER)
    assert [e.action for e in other.entries if e.guideline_id] == ["added"], other
    assert len([x for x in g.list() if x.status == "active"]) == 2


def test_a_pronoun_restatement_merges_into_the_named_rule(tmp_path):
    with Skillbank.open(tmp_path / "root", embedding_function=HashEmbedding(),
                        include_bundled=False) as bank:
        _pronoun_restatement(bank)


def test_a_pronoun_restatement_merges_through_a_client_of_an_owner_process(tmp_path):
    from owner_client import client_of_owner

    with client_of_owner(tmp_path / "root") as bank:
        _pronoun_restatement(bank)


def test_referent_cues():
    from skillbank.distill.relations import same_action_on_referent

    assert same_action_on_referent("Lead with them.", "Lead with the steps.")
    assert same_action_on_referent("Split it.", "Split them.")
    # An object of its own, no object at all, or the opposite polarity: not this evidence.
    assert same_action_on_referent("Add it to the changelog.", "Add tests.") is None
    assert same_action_on_referent("Be concise.", "Be brief.") is None
    assert same_action_on_referent("Never do it.", "Do it.") is None
    assert same_action_on_referent("Fix it.", "Fix the typo in the header and footer.") is None
