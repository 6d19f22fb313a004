"""The block beyond the family vote: a rule that clearly fits is not hidden, and a task no rule
is about gets none (hunt, session 20; ``skillbank.block_fit``).

* An agent's rule "Use the ORM instead of raw SQL." (topic sql, "When writing database access
  code") was never shown for "Write database access code for the invoices table": two Python
  rules of an older critique won the family vote. After "Skip terraform plan for docs-only
  changes; apply directly." (filed under writing) a Terraform task got those, not the
  Terraform rule.

Fresh wordings; in process and through a client of another process that owns the root.
"""

from __future__ import annotations

import pytest

from owner_client import bank_for

def _agent_rule_is_served(bank) -> None:
    bank.guidelines.learn("Never build shell commands from user input; use an argument list. "
                          "Also log every retry.", task="Write the deploy script helper")
    bank.guidelines.learn("From now on, send webhooks through the queue.", rules=[{
        "text": "Send webhooks through the delivery queue, never inline.", "topic": "webhooks",
        "when_to_use": "When writing code that sends webhook notifications"}])
    block = bank.context_for("Write the code that sends webhook notifications for refunds")
    assert "delivery queue" in block.text, block.text


@pytest.mark.parametrize("remote", [False, True], ids=["in-process", "client-of-owner"])
def test_a_clear_match_of_another_family_is_shown(tmp_path, minilm, remote):
    with bank_for(tmp_path, remote, minilm) as bank:
        _agent_rule_is_served(bank)
