"""A rule that points back with "there" or "do that" is never an active rule on its own.

Alice's critique "You forgot to announce the deploy in the billing channel; always announce
billing deploys there." became the active rule "Always announce billing deploys there.", and
"The staging database was not backed up. Always do that before a migration." the rule "Always do
that before a migration." (hunt-lcteam #2, session 36). Such a rule joins the rule before it;
with none, it is read from the sentence before it when that is clear, or reported `ignored`.
"""

from __future__ import annotations

import pytest

from skillbank import Skillbank
from skillbank.distill import RuleDistiller
from skillbank.embeddings import HashEmbedding


def _read(critique: str) -> tuple[list[str], list[str]]:
    out = RuleDistiller().rules_from_critique(critique, task="Deploy the billing service")
    return [r.text for r in out if r.actionable], [r.text for r in out if not r.actionable]


@pytest.mark.parametrize("critique, rule", [
    ("You forgot to announce the deploy in the billing channel; always announce billing deploys "
     "there.", "Always announce billing deploys in the billing channel."),
    ("The staging database was not backed up. Always do that before a migration.",
     "Always back up the staging database before a migration."),
    ("You posted the outage update in #general. Always post outage updates in #incidents "
     "instead of there.", "Always post outage updates in #incidents instead of in #general."),
    ("You forgot to tag the release. Always do that before a deploy.",
     "Tag the release; always do that before a deploy."),  # joined to the reproach's rule
])
def test_the_reference_is_read_from_the_sentence_before(critique, rule):
    rules, _ = _read(critique)
    assert rules == [rule]


@pytest.mark.parametrize("critique, dangling", [
    ("Always do that before a migration.", "Always do that before a migration."),
    # a setting before a comma is no clause to point to (review 2, session 36)
    ("The release went out on Friday. In production, always do that before a migration.",
     "In production, always do that before a migration."),
    ("The build looked fine. Always announce billing deploys there.",
     "Always announce billing deploys there."),
    ("The staging database was slow. Never forget this.", "Never forget this."),
])
def test_with_nothing_to_read_it_from_it_is_reported_not_learnt(critique, dangling):
    rules, ignored = _read(critique)
    assert rules == [] and dangling in ignored


def test_there_is_and_there_are_still_read_as_rules():
    assert _read("Make sure there are tests for every endpoint.")[0] == [
        "Make sure there are tests for every endpoint."]


def test_the_bank_reports_it_ignored_with_the_reason(tmp_path):
    with Skillbank.open(tmp_path, embedding_function=HashEmbedding(), include_bundled=False) as bank:
        report = bank.guidelines.learn("Always do that before a migration.", namespace="alice")
        (entry,) = report.entries
        assert entry.action == "ignored" and "points back" in entry.detail
        report = bank.guidelines.learn(
            "The staging database was not backed up. Always do that before a migration.",
            namespace="alice")
        added = [e.text for e in report.entries if e.action == "added"]
        assert added == ["Always back up the staging database before a migration."]
        assert [g.text for g in bank.guidelines.list(namespace="alice")] == added


@pytest.mark.parametrize("critique", [
    "Do not hardcode credentials; use the vault for that.",
    "Never force-push to main; open a pull request instead of doing that.",
    "Never edit generated files; regenerate them instead of doing that.",
])
def test_a_pointer_to_a_clause_of_the_rule_itself_is_a_whole_rule(critique):
    """Review 1, session 36: a closing "for that" was read as pointing back, and these rules
    were reported not read (lost)."""
    assert _read(critique)[0] == [critique]


@pytest.mark.parametrize("praise", ["Great answer, exactly like that.", "Thanks for doing that.",
                                    "Nice work there!", "I liked this."])
def test_praise_is_called_praise_not_a_rule_that_points_back(tmp_path, praise):
    with Skillbank.open(tmp_path, embedding_function=HashEmbedding(), include_bundled=False) as bank:
        (entry,) = bank.guidelines.learn(praise).entries
        assert entry.action == "ignored" and "no reusable advice" in entry.detail, entry.detail


@pytest.mark.parametrize("critique, rule", [
    ("Run the tests; do that before every push.", "Run the tests; do that before every push."),
    ("Run the tests. Do that before every push.", "Run the tests; do that before every push."),
    ("Lint the code, and do it before every commit.", "Lint the code; do it before every commit."),
    ("Always run the linter; do this before the Friday deploy.",
     "Always run the linter; do this before the Friday deploy."),
    ("The staging database was not backed up. Do that before a migration.",
     "Back up the staging database before a migration."),
])
def test_when_to_do_the_act_before_is_kept_with_it(critique, rule):
    """Session 37: "do that before every push" after a rule was dropped without a word (only
    "Run the tests." was learnt): the when of the instruction was lost."""
    assert _read(critique)[0] == [rule]


def test_praise_is_no_rule_and_do_it_without_when_is_the_rule_itself():
    assert _read("Great job. Do that again next time.")[0] == []
    assert _read("Never do it by hand; use the release script.")[0] == [
        "Never do it by hand; use the release script."]
