"""A rule added under a topic its caller names is labelled for that topic (hunt-mcphttp #4,
session 36): `add("Run database migrations before rolling out the billing API",
topic="deploy")` was stored with the `when_to_use` "When replying to customers in support
conversations", read off the word "billing", and every block showed the model that label."""

from __future__ import annotations

import pytest

from owner_client import bank_for


@pytest.mark.parametrize("remote", [False, True], ids=["in-process", "client-of-owner"])
def test_a_named_topic_says_when(tmp_path, remote):
    with bank_for(tmp_path, remote) as bank:
        def when(text, **kwargs):
            entry = bank.guidelines.add(text, **kwargs)
            return bank.guidelines.get(entry.guideline_id).when_to_use

        deploy = when("Run database migrations before rolling out the billing API",
                      topic="deploy")
        # a deploy word names infra, as the block files the rule (docs: topics)
        assert deploy.startswith("When changing infrastructure as code or deployments"), deploy
        assert "customer" not in deploy
        ops = when("Page the on-call engineer for every sev-1", topic="ops")
        assert ops.startswith("When working on ops"), ops  # a topic of the writer's own
        python = when("Reply to refund tickets within one day", topic="python")
        assert python.startswith("When writing or reviewing Python code"), python
        # the caller's own when_to_use is kept; no topic: the words' guess, as before
        assert when("Sign every reply with the team name", topic="support",
                    when_to_use="When closing a ticket") == "When closing a ticket"
        general = when("Quote identifiers in generated SQL", topic="general")
        assert general.startswith("When doing any task"), general  # not "working on general"
        guessed = when("Answer billing questions within a day")
        assert "support" in guessed or "customers" in guessed, guessed
