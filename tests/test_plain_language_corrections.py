"""Corrections said as news ("We moved X to Y", "X is Y now, not Z", "No more X; use Y",
"Actually, ...") are rules, and they retire the rule they change.

Users met six of fifteen plain-language corrections ignored as "praise" or learnt beside the
rule they replaced, which kept being served: "We changed the confidentiality term to five
years.", "We moved the weekly report to Mondays.", "We switched from Jest to Vitest for unit
tests.", "The confidentiality term is five years now, not three.", "No more Jest; use Vitest
...", "Actually, write dates as YYYY-MM-DD." (learning-loop hunt, session 20, defect 3).
"""

from __future__ import annotations

import pytest

from skillbank import Skillbank
from skillbank.distill import RuleDistiller
from skillbank.embeddings import HashEmbedding


def _rules(critique: str) -> list[str]:
    return [r.text for r in RuleDistiller().rules_from_critique(critique) if r.actionable]


@pytest.mark.parametrize("critique, rule", [
    ("We changed the notice period to sixty days.", "Set the notice period to sixty days."),
    ("We've moved the sprint review to Thursdays.", "Move the sprint review to Thursdays."),
    ("We switched from Travis to GitHub Actions for CI.",
     "Use GitHub Actions instead of Travis for CI."),
    ("The refund window is 30 days now, not 14.", "Make the refund window 30 days, not 14."),
    ("The retention period is now 90 days.", "Make the retention period 90 days."),
    ("No more Moment.js; use date-fns for date math.",
     "Do not use Moment.js; use date-fns for date math."),
    ("No more mocking the database in integration tests.",
     "Stop mocking the database in integration tests."),
])
def test_a_declared_change_reads_as_a_rule(critique, rule):
    assert _rules(critique) == [rule]


@pytest.mark.parametrize("remark", [
    "The build is green now.",
    "The tone is much better now, thanks!",
    "No more comments from me.",
    "We changed our minds about this.",
])
def test_news_that_changes_no_practice_is_no_rule(remark):
    assert _rules(remark) == []


@pytest.mark.parametrize("old, correction", [
    ("Set the notice period to thirty days.", "We changed the notice period to sixty days."),
    ("Hold the sprint review on Tuesdays.", "We moved the sprint review to Thursdays."),
    ("Use Travis for CI.", "We switched from Travis to GitHub Actions for CI."),
    ("Keep the refund window at 14 days.", "The refund window is 30 days now, not 14."),
    ("Use Moment.js for date math.", "No more Moment.js; use date-fns for date math."),
    ("Write amounts as 1,000.00.", "Actually, write amounts as 1 000,00."),
])
def test_the_correction_retires_the_rule_it_changes(tmp_path, old, correction):
    with Skillbank.open(tmp_path / "root", embedding_function=HashEmbedding(),
                        include_bundled=False) as bank:
        bank.guidelines.learn(old)
        entries = bank.guidelines.learn(correction).entries
        assert [e.action for e in entries] == ["superseded"], entries
        assert [g.text for g in bank.guidelines.list(status="active")] == [entries[0].text]


def test_a_rejection_joined_to_its_alternative_still_retires(tmp_path, minilm):
    # "Stop using pandas; polars is our standard now." is one rule now (polars was lost);
    # joined, its negation half must still retire the pandas rule.
    with Skillbank.open(tmp_path / "root", embedding_function=minilm,
                        include_bundled=False) as bank:
        bank.guidelines.learn("Use requests for HTTP calls.")
        entries = bank.guidelines.learn("Stop using requests; httpx is our standard now.").entries
        assert [(e.action, e.text) for e in entries] == [
            ("superseded", "Stop using requests; use httpx.")], entries


def test_a_moved_part_of_the_report_does_not_retire_its_schedule(tmp_path):
    with Skillbank.open(tmp_path / "root", embedding_function=HashEmbedding(),
                        include_bundled=False) as bank:
        bank.guidelines.learn("Send the weekly report on Fridays.")
        bank.guidelines.learn("We moved the weekly report's charts to the appendix.")
        assert "Send the weekly report on Fridays." in {g.text for g in bank.guidelines.list()}


# Review of session 20: good news said as "No more ..." became a "Do not use ..." rule, and one
# superseded a real rule ("No more tabs issues in Makefiles, great." retired "Use tabs ...").
@pytest.mark.parametrize("remark", [
    "No more bugs in the parser, nice work.",
    "No more flaky tests since your fix.",
    "No more errors in the log.",
    "No more tabs issues in Makefiles, great.",
    # fresh wordings
    "No more timeouts in CI, thank you!",
    "No more merge conflicts after the new branching model.",
    "No more typos in the docs, well done.",
    "No more crashes on startup.",
])
def test_no_more_news_is_no_rule(remark):
    assert _rules(remark) == []


@pytest.mark.parametrize("critique, rule", [
    ("No more floats for money; use Decimal.", "Do not use floats for money; use Decimal."),
    ("No more print statements in library code.", "Do not use print statements in library code."),
    # second review: bans whose words merely include an outcome, a reason or thanks
    ("No more hotfixes without a ticket.", "Do not use hotfixes without a ticket."),
    ("No more deploys after the code freeze.", "Do not use deploys after the code freeze."),
    ("No more Friday deploys since the outage.", "Do not use Friday deploys since the outage."),
    ("No more conflict markers committed to main.",
     "Do not use conflict markers committed to main."),
    ("No more emails to the whole company, thanks.", "Do not use emails to the whole company."),
    ("No more console.log calls in production code, please.",
     "Do not use console.log calls in production code."),
])
def test_no_more_a_tool_or_practice_is_still_a_rule(critique, rule):
    assert _rules(critique) == [rule]


def test_no_more_news_does_not_retire_a_rule(tmp_path):
    with Skillbank.open(tmp_path / "root", embedding_function=HashEmbedding(),
                        include_bundled=False) as bank:
        bank.guidelines.learn("Use tabs for indentation in Makefiles.")
        entries = bank.guidelines.learn("No more tabs issues in Makefiles, great.").entries
        assert "superseded" not in [e.action for e in entries], entries
        assert [g.text for g in bank.guidelines.list(status="active")] == [
            "Use tabs for indentation in Makefiles."]


# Review of session 20: "We moved the weekly report to Mondays." superseded "Send the weekly
# report by 10am." (a time of day "re-set" by a weekday). A value is re-set by one of its kind.
@pytest.mark.parametrize("old, news", [
    ("Send the weekly report by 10am.", "We moved the weekly report to Mondays."),
    # fresh wordings
    ("Hold the standup at 9am.", "We moved the standup to Thursdays."),
    ("Run the backup on Sundays.", "We moved the backup to 2am."),
])
def test_a_value_of_another_kind_is_another_setting(tmp_path, old, news):
    with Skillbank.open(tmp_path / "root", embedding_function=HashEmbedding(),
                        include_bundled=False) as bank:
        bank.guidelines.learn(old)
        entries = bank.guidelines.learn(news).entries
        assert "superseded" not in [e.action for e in entries], entries
        assert old in {g.text for g in bank.guidelines.list(status="active")}


def test_a_value_of_its_kind_is_re_set():
    from skillbank.distill.rule_numbers import resets_value
    assert resets_value("Move the standup to 10am.", "Hold the standup at 9am.")
    assert resets_value("Move the weekly report to Mondays.", "Send the weekly report on Fridays.")
    assert not resets_value("Move the weekly report to Mondays.",
                            "Send the weekly report by 10am.")


# Review of session 20: status reports and history became rules ("The latency is 20 ms now."
# -> "Make the latency 20 ms."; "We switched from Python 2 to Python 3 years ago." -> "Use
# Python 3 years ago instead of Python 2."). Without a rejected old value, "X is Y now" sets
# only a setting (term, period, window, limit ...); history and one-offs are no rules.
@pytest.mark.parametrize("remark", [
    "The latency is 20 ms now.",
    "The coverage is 95% now.",
    "Revenue is up 10% now.",
    "The team is 12 people now.",
    "We switched from Python 2 to Python 3 years ago.",
    "We moved the meeting to Room 4 for today only.",
    # fresh wordings
    "The error rate is down 3% now, not 5%.",
    "The backlog is 40 tickets now.",
    "We migrated from MySQL to Postgres last year.",
    "We changed the venue to the library this time.",
    "We moved the demo to Friday yesterday.",
])
def test_reports_and_history_are_no_rule(remark):
    assert _rules(remark) == []


@pytest.mark.parametrize("critique, rule", [
    ("The session timeout is 15 minutes now.", "Make the session timeout 15 minutes."),
    ("The latency budget is 200 ms now.", "Make the latency budget 200 ms."),
])
def test_a_setting_said_as_news_is_still_a_rule(critique, rule):
    assert _rules(critique) == [rule]


# Hunt of session 23: "We moved payments deploys to Tuesdays." was merged into "Deploy the
# payments service on Mondays." (the old verb came back as a noun, and the news leaves out
# "service"), and "We moved the backups to 2 am." into "Run the backups at midnight." ("2 am"
# and "midnight" were no values); the Monday and midnight rules stayed served.
MOVED = [
    ("Deploy the payments service on Mondays.", "We moved payments deploys to Tuesdays."),
    ("Run the backups at midnight.", "We moved the backups to 2 am."),
]


@pytest.mark.parametrize("remote", [False, True], ids=["in-process", "client-of-owner"])
def test_news_of_a_moved_practice_retires_the_old_setting(tmp_path, minilm, remote):
    from owner_client import bank_for

    with bank_for(tmp_path, remote, minilm) as bank:
        for old, news in MOVED:
            bank.guidelines.learn(old)
            entries = bank.guidelines.learn(news).entries
            assert [e.action for e in entries] == ["superseded"], entries
        active = {g.text for g in bank.guidelines.list(status="active")}
        assert active == {"Move payments deploys to Tuesdays.", "Move the backups to 2 am."}


def test_a_moved_thing_of_another_kind_stays_apart():
    """The noun-verb reading needs the rest to be the old rule's: another service's deploys,
    or a thing the old rule does not name, re-set nothing."""
    from skillbank.distill.rule_numbers import resets_value
    assert not resets_value("Move staging deploys to Tuesdays.",
                            "Deploy the payments service on Mondays.")
    assert not resets_value("Move the invoices to Tuesdays.",
                            "Email the invoice reminders on Mondays.")
    assert resets_value("Move the backups to noon.", "Run the backups at 2 am.")
