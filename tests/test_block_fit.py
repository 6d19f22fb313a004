"""The block beyond the family vote: a rule that clearly fits is not hidden, and a task no rule
is about gets none (hunt, session 20; ``skillbank.block_fit``).

* An agent's rule "Use the ORM instead of raw SQL." (topic sql, "When writing database access
  code") was never shown for "Write database access code for the invoices table": two Python
  rules of an older critique won the family vote. After "Skip terraform plan for docs-only
  changes; apply directly." (filed under writing) a Terraform task got those, not the
  Terraform rule.
* With five support and SQL rules, "Plan a birthday party ..." and "Explain how photosynthesis
  works" got the three support rules.

Fresh wordings; in process and through a client of another process that owns the root.
"""

from __future__ import annotations

import pytest

from owner_client import bank_for

SUPPORT_AND_SQL = [
    ("Offer a refund before closing a complaint.", "Answer a customer whose parcel never came"),
    ("Always sign replies with the team name.", "Reply to a customer asking about an invoice"),
    ("Do not promise a callback time.", "Reply to a customer asking about an invoice"),
    ("Never select every column in production queries.", "Write a query for churned users"),
    ("Put each join on its own line.", "Write a dbt model for weekly signups"),
]
OFF_DOMAIN = ["Suggest names for a pet hamster", "Describe how volcanoes erupt",
              "Write a limerick about the sea", "Plan a picnic for ten friends"]


def _agent_rule_is_served(bank) -> None:
    bank.guidelines.learn("Never build shell commands from user input; use an argument list. "
                          "Also log every retry.", task="Write the deploy script helper")
    bank.guidelines.learn("From now on, send webhooks through the queue.", rules=[{
        "text": "Send webhooks through the delivery queue, never inline.", "topic": "webhooks",
        "when_to_use": "When writing code that sends webhook notifications"}])
    block = bank.context_for("Write the code that sends webhook notifications for refunds")
    assert "delivery queue" in block.text, block.text


def _off_domain_abstains(bank) -> None:
    for critique, task in SUPPORT_AND_SQL:
        bank.guidelines.learn(critique, task=task)
    for task in OFF_DOMAIN:
        assert not bank.context_for(task, budget_tokens=600).guidelines, task
    # ... while the tasks the rules are about still get them
    assert bank.context_for("Reply to a customer whose parcel is lost").guidelines
    assert bank.context_for("Write a query for monthly active users").guidelines


@pytest.mark.parametrize("remote", [False, True], ids=["in-process", "client-of-owner"])
def test_a_clear_match_of_another_family_is_shown(tmp_path, minilm, remote):
    with bank_for(tmp_path, remote, minilm) as bank:
        _agent_rule_is_served(bank)


@pytest.mark.parametrize("remote", [False, True], ids=["in-process", "client-of-owner"])
def test_a_task_no_rule_is_about_gets_none(tmp_path, minilm, remote):
    with bank_for(tmp_path, remote, minilm) as bank:
        _off_domain_abstains(bank)
