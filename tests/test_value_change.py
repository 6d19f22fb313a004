"""A correction that changes a rule's value is never merged into the old rule (hunt, session 20).

"Put the summary at the end of the report." then "Put the summary at the top of the report
instead." was merged into the old rule (same action 'put' on 'report', 'summary'), and the block
kept serving "... at the end ..." — the opposite of what the user had just said. "Limit commit
subject lines to 72 characters." then "Commit subject lines must be at most 50 characters now."
merged the same way. Two rules that differ only in a value (a number, a position word, the
thing after a preposition) are never one rule: with a change cue ("instead", "now", "from now
on", "actually") the newer one supersedes the older; without one both are kept (docs/api.md,
"What is merged"). Fresh wordings, not the hunt's. In process and through a client of another
process that owns the root.
"""

from __future__ import annotations

import pytest

from owner_client import bank_for
from skillbank import Skillbank
from skillbank.embeddings import HashEmbedding
from skillbank.memories.guidelines.values import changed_values, change_cue, value_change


def test_value_slots_differ():
    assert changed_values("Place the abstract at the bottom of the page.",
                          "Place the abstract at the start of the page instead.")
    assert changed_values("Wrap code lines at 100 characters now.",
                          "Cap code lines to 80 characters.")
    assert changed_values("Hold the standup on Mondays.", "Hold the standup on Thursdays.")
    # one rule said twice, or two rules about other things: no value slot differs
    assert not changed_values("Add tests for edge cases.", "Add tests.")
    assert not changed_values("Keep functions under 40 lines.", "Keep paragraphs under 4 sentences.")
    assert not changed_values("Wrap code lines at 100 characters.",
                              "Wrap code lines at 100 characters now.")


def test_change_cues():
    for said in ("Put the index last instead.", "Tabs are 2 spaces now.",
                 "From now on, release on Tuesdays.", "Actually, release on Tuesdays."):
        assert change_cue(said), said
    for said in ("Use CTEs instead of subqueries.", "Release on Tuesdays.", "Know your audience."):
        assert not change_cue(said), said


def _active(bank) -> list[str]:
    return [g.text for g in bank.guidelines.list(status="active")]


def _check(bank) -> None:
    first = bank.guidelines.learn("Place the legend at the right of the chart.")
    second = bank.guidelines.learn("Place the legend at the top of the chart instead.")
    assert [e.action for e in second.entries] == ["superseded"], second.entries
    assert second.entries[0].superseded_id == first.entries[0].guideline_id
    assert _active(bank) == ["Place the legend at the top of the chart instead."]
    block = bank.context_for("Draw the chart of weekly signups").text
    assert "right of the chart" not in block

    bank.guidelines.learn("Cap API page sizes to 200 items.")
    later = bank.guidelines.learn("API page sizes must be at most 100 items now.")
    assert [e.action for e in later.entries] == ["superseded"], later.entries
    assert later.entries[0].superseded_id
    assert not any("200" in text for text in _active(bank))

    # No change cue: two rules, neither lost (docs/api.md: the same words with other values
    # are never one rule).
    bank.guidelines.learn("Schedule the design review on Mondays.")
    other = bank.guidelines.learn("Schedule the design review on Thursdays.")
    assert [e.action for e in other.entries] == ["added"], other.entries
    assert not other.entries[0].superseded_id
    active = _active(bank)
    assert "Schedule the design review on Mondays." in active
    assert "Schedule the design review on Thursdays." in active


@pytest.mark.parametrize("remote", [False, True], ids=["in-process", "client-of-owner"])
def test_in_process_and_through_a_client(tmp_path, minilm, remote):
    with bank_for(tmp_path, remote, minilm) as bank:
        _check(bank)


# Review of session 20: a cue anywhere in the sentence ("Now that ...", "Actually, ... look
# great, ...") and a differing slot that is the rule's subject, not a value, superseded a
# compatible second rule. A value change is about values only; "now that" gives a reason;
# "too", "as well", "also" add a rule.
@pytest.mark.parametrize("old, said", [
    ("Add a test to every pull request.",
     "Now that we publish releases, add a changelog entry to every pull request."),
    ("Put the summary at the top of the report.",
     "Now that we send it by email, put the summary at the top of the email too."),
    ("Run the unit tests before every commit.", "Run the linter before every commit now."),
    ("Write the release notes in Markdown.",
     "Actually, the release notes look great, write the changelog in Markdown as well."),
    # fresh wordings
    ("Deploy the backend on Fridays.", "Deploy the frontend on Fridays now."),
    ("Hold the standup on Mondays.", "Hold the retro on Mondays as well."),
    ("Tag the release on Mondays.", "Now that the team grew, tag the release on Tuesdays."),
    ("Put the index at the end of the book.",
     "Actually, the chapters read well; also put the glossary at the end of the book."),
])
def test_a_compatible_second_rule_is_kept(tmp_path, old, said):
    with Skillbank.open(tmp_path / "root", embedding_function=HashEmbedding(),
                        include_bundled=False) as bank:
        bank.guidelines.learn(old)
        entries = bank.guidelines.learn(said).entries
        assert "superseded" not in [e.action for e in entries], entries
        assert old in _active(bank)


@pytest.mark.parametrize("new, old, said", [
    ("Hold the standup on Tuesdays.", "Hold the standup on Mondays.",
     "Actually, hold the standup on Tuesdays."),
    ("Cap the title at 60 characters.", "Cap the title at 80 characters.",
     "From now on, cap the title at 60 characters."),
    ("Put the index first.", "Put the index last.", "Put the index first instead."),
])
def test_a_value_announced_in_its_own_clause_still_supersedes(new, old, said):
    changed = value_change(new, old, said)
    assert changed is not None and changed[1], changed
