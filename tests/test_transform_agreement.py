"""Two rules that make one thing into the same other thing agree (session 38).

"Define the same subquery once as a CTE." (the pronoun fix's correct reading of "Define it once
as a CTE.") overruled "Turn the nested subqueries into CTEs.": the transform rule rejects
subqueries as they are, the other asks for one "as a CTE", and word by word that read as an
opposite stance on "subquery". A rule that rejects the target still overrules.
"""

from __future__ import annotations

import pytest

from skillbank.distill.supersession import overrules

TURN = "Turn the nested subqueries into CTEs."


def test_making_the_thing_into_the_same_target_overrules_nothing():
    assert overrules("Define the same subquery once as a CTE.", TURN) is None
    assert overrules(TURN, "Define the same subquery once as a CTE.") is None


@pytest.mark.parametrize("rule", ["Use nested subqueries, not CTEs.",
                                  "Keep the nested subqueries instead of CTEs."])
def test_a_rule_against_the_target_still_overrules(rule):
    assert overrules(rule, TURN)
