"""A deploy rule is filed under infra, whatever service it names.

"Every deploy of the billing service needs a rollback plan." was filed as support ("billing" is
a support word) with the when_to_use "When replying to customers in support conversations": a
``topic="infra"`` agent never saw it and every block told the model it was for customer replies
(hunt-lcteam #1, session 36). The infra row names deployments but had no deploy word.
"""

from __future__ import annotations

import pytest

from skillbank import Skillbank
from skillbank.distill import RuleDistiller
from skillbank.distill.topics import guess_topic
from skillbank.embeddings import HashEmbedding


@pytest.mark.parametrize("rule, task", [
    ("Every deploy of the billing service needs a rollback plan.", None),
    ("Every deploy of the billing service needs a rollback plan.",
     "Deploy the billing service to production"),
    ("Always announce billing deploys in the billing channel.", None),
    ("Roll back the billing release when the error rate doubles.", None),
])
def test_a_deploy_rule_is_infra(rule, task):
    assert guess_topic(rule, task) == "infra"


@pytest.mark.parametrize("rule", [
    "Escalate billing issues to the finance team.",
    "Answer every billing question within a day.",
    "Never promise a refund before billing confirms it.",
])
def test_a_customer_billing_matter_is_still_support(rule):
    assert guess_topic(rule) == "support"


def test_release_notes_are_still_writing():
    assert guess_topic("Write release notes for every release.") == "writing"


def test_a_press_release_is_no_deploy():
    """Review 1, session 36: "Press release drafts need a quote" was filed as infra."""
    assert guess_topic("Press release drafts need a quote from the CEO.") != "infra"


def test_the_rule_is_served_to_an_infra_agent_and_not_called_a_support_rule(tmp_path):
    with Skillbank.open(tmp_path, embedding_function=HashEmbedding(), include_bundled=False) as bank:
        gid = bank.guidelines.add("Every deploy of the billing service needs a rollback plan.",
                                  namespace="team").guideline_id
        rule = bank.guidelines.get(gid)
        assert rule.topic == "infra" and "customers" not in rule.when_to_use
        ctx = bank.context_for("Deploy the billing service to production", namespace="team",
                               topic="infra")
        assert gid in ctx.ids


def test_a_learnt_deploy_rule_is_infra():
    (rule,) = [r for r in RuleDistiller().rules_from_critique(
        "Every deploy of the billing service needs a rollback plan.",
        task="Deploy the billing service to staging") if r.actionable]
    assert rule.topic == "infra" and "customers" not in rule.when_to_use


def test_a_lock_release_call_is_no_deploy():
    assert guess_topic("Call `self._lock.release()` in a finally block.") != "infra"
