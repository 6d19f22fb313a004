"""Two instructions about one rare subject stay two rules; the same instruction reworded still
merges.

hunt-chroma #5 (session 24): "Submit gecko expense reports before the 5th." was merged into
"Attach receipts to every gecko expense report." as "a paraphrase: similarity 1.00" and never
served. The matching similarity is the model's cosine with the guideline's profile plus the
TF-IDF overlap of their words, capped at 1: the shared rare subject ("gecko expense report")
took the cosine to 0.77 and the overlap to 0.38, and the shared words were more than half of
the candidate's objects. Without "gecko" the pair was kept apart. Two verbs, neither in the
other rule, one acting on a thing the other never names, are two instructions
(`relations.another_action_on_another_thing`).
"""

from __future__ import annotations

import pytest

from owner_client import bank_for
from skillbank.distill.relations import another_action_on_another_thing

#: (older, newer): each newer one was merged into the older one before the fix.
TWO_INSTRUCTIONS = [
    ("Attach receipts to every gecko expense report.",
     "Submit gecko expense reports before the 5th."),
    ("Add a changelog entry to every marmot release.",
     "Sign marmot releases with the release key."),
    ("Attach the signed contract to every gecko purchase order.",
     "Approve gecko purchase orders within two days."),
]

#: (older, newer): one instruction said twice around the same rare subject.
ONE_INSTRUCTION = [
    ("Attach receipts to every gecko expense report.",
     "Every gecko expense report needs its receipts attached."),
    ("Attach screenshots to every quokka bug report.",
     "Include screenshots with each quokka bug report."),
    ("Deploy the zephyr service with helm.", "Use helm to deploy the zephyr service."),
]


@pytest.mark.parametrize("older, newer", TWO_INSTRUCTIONS)
def test_another_verb_on_another_thing_is_another_instruction(older, newer):
    assert another_action_on_another_thing(newer, older)
    assert another_action_on_another_thing(older, newer)


@pytest.mark.parametrize("older, newer", ONE_INSTRUCTION)
def test_a_rewording_names_the_same_thing_or_verb(older, newer):
    assert another_action_on_another_thing(newer, older) is None


@pytest.mark.parametrize("remote", [False, True], ids=["in-process", "client-of-owner"])
def test_two_instructions_on_one_rare_subject_are_both_served(tmp_path, minilm, remote):
    with bank_for(tmp_path, remote, minilm) as bank:
        for i, (older, newer) in enumerate(TWO_INSTRUCTIONS):
            namespace = f"two-{i}"
            bank.guidelines.learn(older, namespace=namespace)
            entry = bank.guidelines.learn(newer, namespace=namespace).entries[0]
            assert entry.action == "added", (older, newer, entry)
            assert "another action on another thing" in entry.detail, entry.detail
            active = {g.text for g in bank.guidelines.list(namespace=namespace)
                      if g.status == "active"}
            assert {older, newer} <= active, active


@pytest.mark.parametrize("remote", [False, True], ids=["in-process", "client-of-owner"])
def test_a_rewording_on_one_rare_subject_still_merges(tmp_path, minilm, remote):
    with bank_for(tmp_path, remote, minilm) as bank:
        for i, (older, newer) in enumerate(ONE_INSTRUCTION):
            namespace = f"one-{i}"
            first = bank.guidelines.learn(older, namespace=namespace).entries[0].guideline_id
            entry = bank.guidelines.learn(newer, namespace=namespace).entries[0]
            assert (entry.action, entry.guideline_id) == ("merged", first), (older, newer, entry)


@pytest.mark.parametrize("remote", [False, True], ids=["in-process", "client-of-owner"])
def test_two_instructions_in_critiques_are_both_served(tmp_path, minilm, remote):
    """The same loss with each rule inside a critique (no model floor on shared words there)."""
    older = ("Your March report had no receipts attached. "
             "Attach receipts to every gecko expense report.")
    newer = ("This one reached finance on the 9th, too late for the payroll run. "
             "Submit gecko expense reports before the 5th.")
    with bank_for(tmp_path, remote, minilm) as bank:
        bank.guidelines.learn(older)
        entries = [e for e in bank.guidelines.learn(newer).entries if e.action != "ignored"]
        assert [e.action for e in entries] == ["added"], entries
        active = {g.text for g in bank.guidelines.list() if g.status == "active"}
        assert {"Attach receipts to every gecko expense report.",
                "Submit gecko expense reports before the 5th."} <= active, active
