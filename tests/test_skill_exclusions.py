"""A description's "Not for X" keeps the skill away from requests for X (session 20).

An author disambiguated press-release with "Not for release notes or changelogs of software
versions." as the Agent Skills guides advise, and "write release notes for version 2.3" then
routed to it at 1.0 instead of 0.992: the sentence was read as keyword and dense evidence *for*
release notes, so fixing a misfiring trigger eval by editing the description made it worse.
Now the exclusion is read as the author meant it. In process and through a client of another
process that owns the root.
"""

from __future__ import annotations

import pytest

from owner_client import bank_for
from skillbank.memories.skills.exclusions import exclusion_clauses, without_exclusions


@pytest.mark.parametrize("description, kept, excluded", [
    ("Draft a press release in AP style. Not for release notes or changelogs.",
     "Draft a press release in AP style.", ["Not for release notes or changelogs."]),
    ("Use for complex artifacts with state - not for simple single-file HTML artifacts",
     "Use for complex artifacts with state", ["not for simple single-file HTML artifacts"]),
    ("Convert PDFs to text; do NOT use for scanned images. Handles tables.",
     "Convert PDFs to text; Handles tables.", ["do NOT use for scanned images."]),
    ("Format SQL (not for NoSQL queries) in house style.", "Format SQL in house style.",
     ["not for NoSQL queries)"]),
    ("Review a diff. Don't use it when the diff is empty.", "Review a diff.",
     ["Don't use it when the diff is empty."]),
])
def test_exclusions_are_read_out_of_the_description(description, kept, excluded):
    assert without_exclusions(description) == kept
    assert exclusion_clauses(description) == excluded


@pytest.mark.parametrize("description", [
    # "instead of" says what the skill is for; an exclusion alone still names its subject
    "Use whenever tests should cover a whole input domain instead of a hand-picked list.",
    "Not for humans.",
    "Find notes for a meeting.",
    # the rules a skill teaches are not exclusions (review): the skill is for these requests
    "Review Python code for security holes. Never use eval or exec on user input.",
    "Write SQL in house style. Do not use SELECT * in production queries.",
    "Keep a clean git history. Never use git push --force on shared branches.",
    "Write shell scripts. Don't use backticks; quote every variable.",
])
def test_what_is_not_an_exclusion_is_kept(description):
    assert without_exclusions(description) == description


SKILLS = {
    "press-release": ("Draft a press release for a product launch or company announcement in "
                      "AP style. Not for release notes or changelogs of software versions."),
    "recipe-scaler": "Scale a cooking recipe to a different number of servings.",
    "web-artifacts": ("Build elaborate multi-component HTML artifacts with React and state "
                      "management - not for simple single-file HTML pages."),
}


RULE_SKILLS = {
    "secure-python": "Review Python code for security holes. Never use eval or exec on user input.",
    "sql-style": "Write and review SQL queries in house style. Do not use SELECT * in production "
                 "queries.",
}


def _check(bank) -> None:
    for name, description in {**SKILLS, **RULE_SKILLS}.items():
        bank.skills.save(name, description, "# Steps\n\n1. Do the work.\n")
    for request, name in [("check my Python script that calls eval on user input",
                           "secure-python"),
                          ("review this SQL query that uses SELECT * in production", "sql-style")]:
        hits = bank.skills.search(request)
        assert hits and hits[0].name == name, (request, hits)
    for excluded in ["write release notes for version 2.3", "a changelog for our app's v2",
                     "make a simple single-file HTML page"]:
        assert not bank.skills.search(excluded), excluded
    for wanted, name in [("draft a press release for our product launch", "press-release"),
                         ("announce our funding round to the press", "press-release"),
                         ("build a multi-page HTML artifact with routing and state",
                          "web-artifacts")]:
        hits = bank.skills.search(wanted)
        assert hits and hits[0].name == name, (wanted, hits)
    # the agent still reads the exclusion where the skill is disclosed
    assert "Not for release notes" in bank.skills.load("press-release").description


@pytest.mark.parametrize("remote", [False, True], ids=["in-process", "client-of-owner"])
def test_a_request_a_skill_excludes_is_not_routed_to_it(tmp_path, minilm, remote):
    with bank_for(tmp_path, remote, minilm) as bank:
        _check(bank)
