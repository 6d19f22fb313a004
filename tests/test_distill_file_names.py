"""A word that starts with a dot (a file extension, a dotfile) keeps the space before it.

Users met "Never hardcode passwords in .tf files" stored and served as "... in.tf files", and
"Keep secrets out of.env files." (learning-loop hunt, session 20, defect 9): tidying the space
before a full stop also ate the space before a dot that opens a word.
"""

from __future__ import annotations

import pytest

from skillbank.distill import RuleDistiller
from skillbank.distill.text import _finish


@pytest.mark.parametrize("text, expected", [
    ("store the keys in .pem files , never in git .", "Store the keys in .pem files, never in git."),
    ("list .DS_Store and .venv in .gitignore", "List .DS_Store and .venv in .gitignore."),
    ("Name the files .yml , not .yaml", "Name the files .yml, not .yaml."),
    ("Wait for it ...", "Wait for it."),
])
def test_finish_keeps_a_dot_that_starts_a_word(text, expected):
    assert _finish(text) == expected


@pytest.mark.parametrize("critique, fragment", [
    ("Never commit .npmrc files with tokens in them.", " .npmrc "),
    ("Add the build folder to .dockerignore.", " .dockerignore"),
    ("Never hardcode API keys in .tfvars files; pass them as environment variables.", " .tfvars "),
])
def test_a_learnt_rule_keeps_its_file_names(critique, fragment):
    rules = [r.text for r in RuleDistiller().rules_from_critique(critique) if r.actionable]
    assert rules and fragment in rules[0], rules
