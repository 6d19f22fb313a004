"""A capitalised name after "and" is part of a list, not a second instruction.

Users met "Use tabs for indentation in Makefiles and Go files." stored as two rules, "Use tabs
for indentation in Makefiles." and the junk "Go files." ("Go" read as the verb "go"), and a
later correction about Go files then retired the Makefile rule (learning-loop hunt, session
20, defect 8).
"""

from __future__ import annotations

import pytest

from skillbank import Skillbank
from skillbank.distill import RuleDistiller
from skillbank.embeddings import HashEmbedding


def _rules(critique: str) -> list[str]:
    return [r.text for r in RuleDistiller().rules_from_critique(critique) if r.actionable]


@pytest.mark.parametrize("critique", [
    "Use tabs for indentation in Makefiles and Go files.",
    "Pin the base image in Dockerfiles and Make targets.",
    "Run the linter on Python, Go and Swift code.",
    "Keep the backups in S3 and Archive Storage.",
])
def test_a_name_after_and_stays_in_its_rule(critique):
    assert _rules(critique) == [critique]


@pytest.mark.parametrize("critique, rules", [
    # A capitalised verb with its object is still a second instruction.
    ("Deploy to staging and Run the smoke tests.", ["Deploy to staging.", "Run the smoke tests."]),
    ("Use Go for the services, and keep the scripts in Python.",
     ["Use Go for the services.", "Keep the scripts in Python."]),
])
def test_a_second_instruction_is_still_split(critique, rules):
    assert _rules(critique) == rules


def test_no_junk_rule_is_learnt_and_the_correction_retires_the_rule_it_names(tmp_path):
    with Skillbank.open(tmp_path / "root", embedding_function=HashEmbedding(),
                        include_bundled=False) as bank:
        bank.guidelines.learn("Use tabs for indentation in Makefiles and Go files.")
        entry = bank.guidelines.learn(
            "From now on use spaces for indentation in Go files.").entries[0]
        assert entry.action == "superseded", entry
        texts = {g.text for g in bank.guidelines.list(status=None)}
        assert "Go files." not in texts
        assert texts == {"Use tabs for indentation in Makefiles and Go files.",
                         "Use spaces for indentation in Go files."}
