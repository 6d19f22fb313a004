"""One negation retires the rule it overrules, not every rule about a thing of the same kind
(scale hunt, session 18).

"Never use error codes in the React frontend." superseded "Keep error codes in the React
frontend." — and, read as overruling "Validate currency codes in the React frontend." (the
setting and the noun in common) and then through it, every rule about currency codes: seven
rules gone, five about currency codes in Terraform, slides, Python and SQL. After 2,000
critiques 82% of a team's rules were superseded. Real model (the relations are judged on its
similarities), in process and through a client of another process that owns the root.
"""

from __future__ import annotations

import pytest

from owner_client import bank_for
from skillbank.distill.rule_distiller import RuleDistiller
from skillbank.distill.supersession import echoes_overruled, overrules, two_objects

NEW = "Never use error codes in the React frontend."
OVERRULED = "Keep error codes in the React frontend."
OTHERS = ["Validate currency codes in the React frontend.",
          "Log currency codes in the React frontend.", "Put currency codes in Terraform.",
          "Quote currency codes in slide decks.", "Log currency codes in SQL migrations."]


def test_two_things_of_one_kind_are_not_one_rule():
    assert two_objects(NEW, OTHERS[0]) and not two_objects(NEW, OVERRULED)
    assert not two_objects("Cap lines at 60 characters.", "Cap lines at 50 characters.")
    assert overrules(NEW, OTHERS[0]) is None and overrules(NEW, OVERRULED)
    assert RuleDistiller().relate(NEW, OTHERS[0], similarity=0.9) == "distinct"
    assert echoes_overruled(NEW, OVERRULED, OTHERS[0]) is None
    # Corrections that differ by a quality or a number, or name other heads, still overrule
    # (review, session 18): two_objects is about two kinds of one thing only.
    for correction, rule in (("Use 4-space indentation.", "Use 2-space indentation."),
                             ("Don't use relative import paths.", "Use short relative imports."),
                             ("Stop sending daily standup summaries.",
                              "Send written standup summaries every morning.")):
        assert not two_objects(correction, rule), (correction, rule)
    assert echoes_overruled("Use Poetry instead of pip.", "Use pip requirements files.",
                            "Use pinned pip requirements.")
    # "X instead of Y" names both sides: still a change of the thing used
    assert overrules("Use currency codes instead of error codes in the React frontend.",
                     OVERRULED)


@pytest.mark.parametrize("remote", [False, True], ids=["in-process", "client-of-owner"])
def test_a_negation_supersedes_only_the_rule_it_overrules(tmp_path, remote, minilm):
    with bank_for(tmp_path, remote, minilm) as bank:
        for text in [OVERRULED, *OTHERS]:
            bank.guidelines.learn(text)
        report = bank.guidelines.learn(NEW)
        statuses = {g.text: g.status for g in bank.guidelines.list(namespace="*")}
        assert statuses[OVERRULED] == "superseded" and statuses[NEW] == "active"
        assert all(statuses[text] == "active" for text in OTHERS), statuses
        assert [e.action for e in report.entries] == ["superseded"]
