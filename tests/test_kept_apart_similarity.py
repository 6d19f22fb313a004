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
