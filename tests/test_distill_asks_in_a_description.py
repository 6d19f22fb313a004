"""An ask that follows a description is a rule; a clause that asks and gives no rule is said.

Session 32 (session 31's left item, "a clause the distiller cannot read is dropped without an
`ignored` entry"): "Use bound parameters for SQL, and the variable names were confusing so
rename them to say what they hold." gave only "Use bound parameters for SQL."; "... the
docstring of parse_date was wrong and also please keep functions under 40 lines." dropped the
40-line rule; "Cite your sources and, when quoting numbers, give the year they are from." gave
"Cite your sources and, when quoting numbers." and "Give the year they are from." (the setting
went to the wrong half). A clause that asks for something the distiller still cannot read
("you should probably think about caching at some point.") was dropped with no entry: the user
learnt nothing of it. In process and through a client of an owner process.
"""

from __future__ import annotations

import pytest

from owner_client import bank_for
from skillbank.distill import RuleDistiller

NAMES = ("Use bound parameters for SQL, and the variable names were confusing so rename them "
         "to say what they hold.")
HINTS = ("Always add type hints; the docstring of parse_date was wrong and also please keep "
         "functions under 40 lines.")
UNREAD = "Use UTC; you should probably think about caching at some point."


@pytest.mark.parametrize("critique, rules", [
    (NAMES, ["Use bound parameters for SQL.", "Rename the variable names to say what they hold."]),
    (HINTS, ["Always add type hints.", "Keep functions under 40 lines."]),
    ("Cite your sources and, when quoting numbers, give the year they are from.",
     ["Cite your sources.", "When quoting numbers, give the year they are from."]),
    ("Use UTC everywhere and, in log lines, print ISO timestamps.",
     ["Use UTC everywhere.", "In log lines, print ISO timestamps."]),
    ("The migration was risky so never run it on Fridays.", ["Never run the migration on Fridays."]),
    ("The API was slow so do not call it in a loop.", ["Do not call the API in a loop."]),
    # Unchanged: no ask after the description, or "so" before a word that is no verb, or
    # "also" alone, which goes on describing (review 1, session 32: "Delete the temp files.").
    ("It was slow so users left.", []),
    ("The tests are also failing.", []),
    ("The scripts were fast and also delete the temp files.", []),
    # "so" as an intensifier is praise (review 2, session 32: "Clean and readable." was learnt)
    ("The code was so clean and readable.", []),
    ("The layout was so open and airy.", []),
    ("The code was so clean.", []),
    ("The report was long so cut it.", ["Cut the report."]),
    ("The tests were thorough and also cover the edge cases.", []),
    ("The steps are bullets. Number them.", ["Number the steps."]),
])
def test_each_ask_is_a_rule(critique, rules):
    assert [r.text for r in RuleDistiller().rules_from_critique(critique) if r.actionable] == rules


def test_an_unread_ask_is_a_candidate_not_dropped():
    found = RuleDistiller().rules_from_critique(UNREAD)
    assert [(r.actionable, r.text) for r in found] == [
        (True, "Use UTC."),
        (False, "you should probably think about caching at some point.")]


@pytest.mark.parametrize("remote", [False, True], ids=["in-process", "client-of-owner"])
def test_learning_keeps_every_ask_and_says_what_it_could_not_read(tmp_path, remote):
    with bank_for(tmp_path, remote) as bank:
        names = bank.guidelines.learn(NAMES, namespace="code")
        assert [(e.action, e.text) for e in names.entries] == [
            ("added", "Use bound parameters for SQL."),
            ("added", "Rename the variable names to say what they hold.")]
        unread = bank.guidelines.learn(UNREAD, namespace="ops")
        assert [(e.action, e.text) for e in unread.entries] == [
            ("added", "Use UTC."),
            ("ignored", "you should probably think about caching at some point.")]
        assert unread.entries[1].detail.startswith("not read as a rule: it seems to ask")
        # A sentence of praise alone is still "no reusable advice".
        praise = bank.guidelines.learn("The tone was great.", namespace="ops")
        assert praise.entries[0].detail.startswith("no reusable advice")
