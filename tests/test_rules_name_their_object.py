"""A rule whose object is a pronoun ("run it", "rotate them") is read with what it names.

Users met "Run it in a transaction.", "Rotate them if they leak.", "Keep it under ten lines.",
"Make it say which field failed and why." stored and served as rules of their own, and "It
should be warm but short." learnt as "make it warm" with "short" lost without a word
(hunt-learnfaces #2, session 38; issue #25: "each rule keeps its subject, pronouns resolved
from the critique").
"""

from __future__ import annotations

import pytest

from skillbank import Skillbank
from skillbank.distill import RuleDistiller
from skillbank.embeddings import HashEmbedding


def _rules(critique: str, task: str | None = None) -> list[str]:
    return [r.text for r in RuleDistiller().rules_from_critique(critique, task=task)
            if r.actionable]


@pytest.mark.parametrize("task, critique, rules", [
    # Read from a sentence before that is no instruction.
    ("Write the database migration",
     "Nice work on the migration! Next time run it in a transaction though.",
     ["Run the migration in a transaction."]),
    # Joined to the rule whose thing it names.
    ("Handle the leaked API key", "Never commit secrets. Rotate them if they leak.",
     ["Never commit secrets; rotate them if they leak."]),
    ("Write the changelog", "Write the changelog in past tense. Also keep it under ten lines.",
     ["Write the changelog in past tense; keep it under ten lines."]),
    # Read from the description just before.
    ("Improve the form validation",
     "The error message is unclear; it should say which field failed and why.",
     ["Make the error message say which field failed and why."]),
    ("Write the troubleshooting page for connection drops",
     "The actual fix doesn't show up until the fifth paragraph. Put it at the top.",
     ["Put the actual fix at the top."]),
    # Both qualities kept.
    ("Draft customer email", "Address customers by first name. It should be warm but short.",
     ["Address customers by first name; make it warm but short."]),
    # Read from the task when the critique names nothing.
    ("Migrate the users table", "Next time run it in a transaction.",
     ["Run the migration of the users table in a transaction."]),
    ("Draft customer email", "It should be warm but short.",
     ["Make the customer email warm but short."]),
])
def test_a_pronoun_object_is_read_with_what_it_names(task, critique, rules):
    assert _rules(critique, task) == rules


@pytest.mark.parametrize("task, critique, rules", [
    # "it" is the answer itself: nothing before names it, or the rule before is about
    # something else; kept as written.
    (None, "Keep it under 200 words.", ["Keep it under 200 words."]),
    (None, "Answer the question first, and keep it under 150 words.",
     ["Answer the question first.", "Keep it under 150 words."]),
    (None, "Reply to the customer first. Keep it short.", ["Reply to the customer first.",
                                                           "Keep it short."]),
    # After a sentence of its own, "it" is something that sentence names, not the task's
    # thing (not "Put the troubleshooting page at the top.").
    ("Write the troubleshooting page for connection drops",
     "The actual fix (raise the timeout) doesn't show up until the fifth paragraph. "
     "Put it at the top.", ["Put it at the top."]),
    ("Write the conceptual overview of caching",
     "It's hard to follow in the narrow column. Break it up.", ["Break it up."]),
])
def test_the_answer_itself_stays_as_written(task, critique, rules):
    assert _rules(critique, task) == rules


def test_the_learnt_rules_name_their_object(tmp_path):
    with Skillbank.open(tmp_path / "root", embedding_function=HashEmbedding(),
                        include_bundled=False) as bank:
        bank.guidelines.learn("Nice work on the migration! Next time run it in a transaction "
                              "though.", task="Write the database migration")
        bank.guidelines.learn("Never commit secrets. Rotate them if they leak.",
                              task="Handle the leaked API key")
        active = sorted(g.text for g in bank.guidelines.list(status="active"))
    assert active == ["Never commit secrets; rotate them if they leak.",
                      "Run the migration in a transaction."]
