"""Another action on the same thing is another instruction, however close the model reads them.

hunt-loop-shared #2 (session 31): `learn("Never store passwords in plain text.")` after
`learn("Never log passwords.")` merged into the older rule, "a paraphrase by meaning: model
cosine 0.72 >= 0.72": the model reads the shared object, not that each does another thing to it,
and the search for the new instruction served only "Never log passwords.". docs/api.md, "What is
merged": the same action on the same object. Two verbs that say what is done, neither found in
the other rule, keep the model's cosine alone from merging them (`relations.another_action`).
"""

from __future__ import annotations

import pytest

from owner_client import bank_for
from skillbank.distill.relations import another_action
from skillbank.memories.guidelines.decisions import DENSE_BAR, EVIDENCE_FLOOR, merge_evidence

OLDER, NEWER = "Never log passwords.", "Never store passwords in plain text."


def test_another_verb_on_the_same_thing_is_told():
    assert another_action(NEWER, OLDER) == "'store' vs 'log'"
    assert another_action("Avoid logging passwords.", OLDER) is None  # a light verb, "log" in it
    assert another_action("Do not write passwords to the logs.", OLDER) is None  # "log" in it
    assert another_action("Split them.", "Divide the steps.") is None  # a pronoun object


def test_the_model_s_cosine_alone_does_not_merge_them():
    members = [(OLDER, OLDER, None)]
    assert merge_evidence(NEWER, members, similarity=EVIDENCE_FLOOR + 0.1,
                          dense=DENSE_BAR + 0.05) is None
    # the same action said again still merges on the model's cosine
    assert merge_evidence("Never log any password.", members, similarity=EVIDENCE_FLOOR + 0.1,
                          dense=DENSE_BAR + 0.05)


@pytest.mark.parametrize("remote", [False, True], ids=["in-process", "client-of-owner"])
def test_never_store_passwords_is_kept_beside_never_log_them(tmp_path, minilm, remote):
    with bank_for(tmp_path, remote, minilm) as bank:
        first = bank.guidelines.learn(OLDER).entries[0].guideline_id
        entry = bank.guidelines.learn(NEWER).entries[0]
        assert entry.action == "added" and entry.guideline_id != first, entry
        active = {g.text for g in bank.guidelines.list() if g.status == "active"}
        assert {OLDER, NEWER} <= active, active
        served = [h.record.text for h in bank.guidelines.search(NEWER, k=5)]
        assert NEWER in served, served
