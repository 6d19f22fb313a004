"""A look-alike kept apart is reported with the model cosine of the two rules (hunt-lxteam #6,
session 37).

Users met this: an agent adding "Always warn the team before restarting the primary
database." beside "Always drain connections before restarting the primary database." was told
"kept apart from look-alike gl-… (similarity 1.00 but no shared action and object)": the
matching score (profile cosine plus TF-IDF cosine, capped at 1), not a similarity; the two
rules' MiniLM cosine is 0.67. A model reading 1.00 takes them for one rule. Real model.
"""

from __future__ import annotations

import re

from skillbank import Skillbank

OLD = "Always drain connections before restarting the primary database."
NEW = "Always warn the team before restarting the primary database."


def test_the_kept_apart_detail_says_the_rules_model_cosine(tmp_path, minilm):
    with Skillbank.open(tmp_path / "root", embedding_function=minilm, include_bundled=False,
                        share=False) as bank:
        old = bank.guidelines.add(OLD).guideline_id
        entry = bank.guidelines.add(NEW)
    assert entry.action == "added" and f"kept apart from look-alike {old}" in entry.detail
    said = re.search(rf"{old} \(similarity (\d\.\d\d) but", entry.detail)
    assert said, entry.detail
    first, second = minilm.embed([NEW, OLD])
    assert float(said.group(1)) == round(float(first @ second), 2) < 0.9


def test_a_learns_nearest_says_the_rules_model_cosine(tmp_path, minilm):
    """A learn's `nearest`, what a curating agent reads to add, replace or leave a rule, said
    similarity 1.0 for "Address customers by their last name." beside "... first name." and
    for the two restart rules above: the capped matching score (hunt-learnfaces #3, session
    38). It says the model cosine of the two rules' words, as the kept-apart detail does."""
    with Skillbank.open(tmp_path / "root", embedding_function=minilm, include_bundled=False,
                        share=False) as bank:
        pairs = [("Address customers by their first name.", "Address customers by their last name."),
                 (OLD, NEW)]
        for first, second in pairs:
            old = bank.guidelines.add(first).guideline_id
            entry = bank.guidelines.learn(second, task="Reply to a customer").entries[0]
            shown = {n["id"]: n["similarity"] for n in entry.nearest}
            assert old in shown, entry.nearest
            a, b = minilm.embed([entry.text, first])
            assert shown[old] == round(float(a @ b), 3) < 0.99, (entry.text, shown)
