"""hunt-llm #2, session 32: a model saying two rules do NOT conflict ("don't contradict",
"doesn't conflict", "never contradicts") made the new rule supersede the old one. The memory
operation runs in process and through a client of an owner process with the same model."""

from __future__ import annotations

import pytest

from scripted_llm import CONFLICTING, NOT_CONFLICTING, OLD_RULE, bank_with_model
from skillbank.distill import LLMDistiller

REMOTE = pytest.mark.parametrize("remote", [False, True], ids=["in-process", "client-of-owner"])


@pytest.mark.parametrize("reply, expected", [
    # the hunter's phrasings: the words deny a conflict, the answer is the last word
    ("These rules don't contradict each other; they are distinct.", "distinct"),
    ("The new rule doesn't conflict with the old one: distinct.", "distinct"),
    ("It never contradicts the old rule; distinct.", "distinct"),
    # the controls
    ("distinct", "distinct"),
    ("They do not contradict; distinct.", "distinct"),
    # only a denied relation: no answer (the model-free relation decides)
    ("These rules don't contradict each other.", None),
    ("They won't conflict.", None),
    ("They didn't contradict.", None),
    ("They cannot conflict.", None),
    ("They don\u2019t contradict.", None),
    ("It is not in any way a contradiction.", None),
    ("There is no real contradiction", None),
    ('{"relation": "not a contradiction"}', None),
    # a bare answer, first or last, and replies that say it plainly
    ("contradiction", "contradiction"),
    ("Contradiction.", "contradiction"),
    ("**Contradiction** - the new rule overrules the old one.", "contradiction"),
    ("Answer: contradiction", "contradiction"),
    ("They contradict each other.", "contradiction"),
    ("They are not the same; they contradict.", "contradiction"),
    ('{"relation": "contradiction"}', "contradiction"),
    ("The rules are the same.", "same"),
    ("Distinct, not a contradiction.", "distinct"),
    ("Neither the same nor a contradiction: distinct.", "distinct"),
    # doubt: first and last word disagree, or nothing
    ("Same matter, but incompatible: contradiction.", None),
    ("maybe", None),
    ("", None),
])
def test_a_negated_relation_word_never_counts(reply, expected):
    """hunt-llm #2, session 32: "don't contradict", "doesn't conflict", "never contradicts"
    were read as a contradiction (the negation list lacked contractions and "never")."""
    assert LLMDistiller._parse_relation(reply) == expected


@REMOTE
def test_a_model_denying_a_conflict_supersedes_nothing(tmp_path, remote):
    """hunt-llm #2, session 32: a model answering "These rules don't contradict each other;
    they are distinct." made "Use short sentences in the release notes." supersede the active,
    unrelated "Use British spelling in the release notes.". Now the old rule stays active
    through every denial (and a reply with no answer falls back to the model-free relation);
    the same model's plain "contradiction" for a rule the model-free relation does not call one
    still supersedes it, so the model was asked (in the owner process too)."""
    with bank_with_model(tmp_path, remote, "relate") as bank:
        old = bank.guidelines.learn(OLD_RULE).entries[0]
        for new in NOT_CONFLICTING:
            entries = bank.guidelines.learn(new).entries
            assert [(e.action, e.superseded_id) for e in entries] == [("added", None)], new
            assert bank.guidelines.get(old.guideline_id).status == "active", new
        entries = bank.guidelines.learn(CONFLICTING).entries
        assert [(e.action, e.superseded_id) for e in entries] == [("superseded", old.guideline_id)]
        assert bank.guidelines.get(old.guideline_id).status == "superseded"
