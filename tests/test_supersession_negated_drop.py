"""A critique that says a practice is NOT being dropped ("we are not moving away from personal
sign-offs") is the opposite of a policy change: it must not supersede the trusted rule asking
for that practice (skillbank.distill.supersession.dropped read the negated phrase as a drop)."""

from __future__ import annotations

from skillbank import Skillbank
from skillbank.distill.supersession import dropped


def test_a_negated_drop_names_no_practice():
    assert dropped("We are not moving away from personal sign-offs.") == []
    assert dropped("We aren't dropping the `$ ` prompt prefix.") == []
    assert dropped("We have never phased out the changelog entry.") == []
    assert dropped("We didn't stop using type hints.") == []
    # Still read: a drop after an unrelated negated clause, and the plain forms.
    assert dropped("Not great; we moved away from personal sign-offs.") == ["personal sign-offs"]
    assert dropped("we're dropping the `$ ` prompt prefix") == ["the `$ ` prompt prefix"]


def test_a_critique_keeping_a_practice_does_not_supersede_its_rule(tmp_path, minilm):
    with Skillbank.open(tmp_path / "root", embedding_function=minilm,
                        include_bundled=False) as bank:
        g = bank.guidelines
        old = g.learn("nit: the personal sign-off is missing.",
                      task="Answer a billing question from a long-time customer.")
        (old_id,) = [e.guideline_id for e in old.entries if e.action == "added"]
        report = g.learn("To be clear, we are not moving away from personal sign-offs. Sign as "
                         "the team as well.",
                         task="Reply to a customer who asked for the same agent.")
        assert g.get(old_id).status == "active", report
