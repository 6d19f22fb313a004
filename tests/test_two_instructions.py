"""Two instructions about one setting stay two rules: neither is merged into the other nor
retired by it.

`benchmarks/data/merge_pairs.jsonl` holds 240 pairs written to tell one instruction said twice
from two instructions of one setting. Before session 15, 31 of its 120 pairs of two
instructions became one rule (the newer instruction lost, or the older one retired): the same
verb on other things ("Write docstrings ..." / "Write type hints for public functions."),
antonyms between two plain instructions ("Start the deck with an agenda slide." / "End the
deck with a next-steps slide."), another number of another unit ("... to 1000 rows." / "... to
30 seconds of runtime."), and the model's cosine just above its bar ("Use American spelling in
code comments." into "Use British spelling in the user docs.").
"""

from __future__ import annotations

import pytest

from owner_client import client_of_owner
from skillbank import Skillbank
from skillbank.distill.relations import direct_objects, other_direct_objects
from skillbank.distill.rule_numbers import number_change
from skillbank.distill.supersession import overrules, two_things

PAIRS = [
    ("Write docstrings for public functions.", "Write type hints for public functions."),
    ("Start the deck with an agenda slide.", "End the deck with a next-steps slide."),
    ("Limit ad-hoc queries to 1000 rows.", "Limit ad-hoc queries to 30 seconds of runtime."),
    ("Offer a refund for orders delayed over 14 days.",
     "Offer a discount code for orders delayed over 7 days."),
    ("Use British spelling in the user docs.", "Use American spelling in code comments."),
    ("Write SQL keywords in uppercase.", "Write table names in lowercase snake_case."),
    ("Add a confirmation dialog before destructive actions.",
     "Add an undo option after destructive actions."),
]


def test_the_direct_object_is_what_follows_the_verb():
    assert direct_objects("Write type hints for public functions.") == {"typ", "hint"}
    assert direct_objects("Reply to customers within one business day.") == set()
    assert direct_objects("Always run the linter and the tests before a commit.") == {"lint", "test"}
    assert other_direct_objects("Use docstrings on public functions.",
                                "Use type hints on public functions.")
    # Two verbs: the object says little ("Make shell commands start with a `$ ` prompt").
    assert not other_direct_objects("Put the `$` prompt in front of command lines.",
                                    "Make shell commands start with a `$ ` prompt.")


def test_plain_instructions_with_antonyms_are_two_things():
    assert two_things("End the deck with a next-steps slide.", "Start the deck with an agenda slide.")
    assert overrules("End the deck with a next-steps slide.",
                     "Start the deck with an agenda slide.") is None
    # ... but not a correction: the same matter, a rejection, or "the current convention".
    assert overrules("Show the output before each command.", "Show the output after each command.")
    assert overrules("Sign off as 'The Acme Support Team' rather than with individual names.",
                     "Include the personal sign-off.")
    assert not two_things("Use the current convention: bare commands in one block.",
                          "Prefix shell commands in code blocks with `$ `.")


def test_a_number_of_another_unit_or_object_is_no_change():
    assert number_change("Limit ad-hoc queries to 30 seconds of runtime.",
                         "Limit ad-hoc queries to 1000 rows.") is None
    assert number_change("Offer a discount code for orders delayed over 7 days.",
                         "Offer a refund for orders delayed over 14 days.") is None
    assert number_change("Keep functions under 40 lines.", "Keep functions under 50 lines.")


def _both_kept(bank, older: str, newer: str) -> None:
    bank.guidelines.learn(older)
    entry = bank.guidelines.learn(newer).entries[0]
    assert entry.action == "added", entry
    active = {g.text for g in bank.guidelines.list() if g.status == "active"}
    assert {older, newer} <= active, active


@pytest.mark.parametrize("older, newer", PAIRS)
def test_both_instructions_stay_active_in_process(tmp_path, minilm, older, newer):
    with Skillbank.open(tmp_path / "root", embedding_function=minilm,
                        include_bundled=False) as bank:
        _both_kept(bank, older, newer)


def test_both_instructions_stay_active_through_a_client(tmp_path, model_dir):
    with client_of_owner(tmp_path / "root", minilm=True) as bank:
        for i, (older, newer) in enumerate(PAIRS):
            bank.guidelines.learn(older, namespace=f"pair-{i}")
            entry = bank.guidelines.learn(newer, namespace=f"pair-{i}").entries[0]
            assert entry.action == "added", (older, newer, entry)
        assert bank.guidelines.list(status="superseded", namespace="*") == []


#: ... while a correction restated in other words still overrules (a review of the change found
#: these retired before and kept beside the old rule after): one word for one beside the
#: antonyms, and a limit moved to another unit of the same kind.
CORRECTIONS = [
    ("Close the ticket after the fix is deployed.", "Close the ticket before the fix is merged."),
    ("Put the TL;DR at the top of design docs.", "Put the TL;DR at the bottom of design documents."),
    ("Use tabs for indentation in Python files.", "Use spaces for indentation in Python code."),
    ("Indent Python code with tabs.", "Indent Python files with spaces."),
    ("Cap log files at 10 MB.", "Cap log files at 500 KB."),
    ("Cache API responses for 5 minutes.", "Cache API responses for 1 hour."),
    ("Escalate tickets unanswered for 48 hours.", "Escalate tickets unanswered for 3 days."),
]


@pytest.mark.parametrize("older, newer", CORRECTIONS)
def test_a_correction_in_other_words_still_overrules(older, newer):
    assert overrules(newer, older)


def test_a_correction_in_other_words_supersedes_in_process(tmp_path, minilm):
    with Skillbank.open(tmp_path / "root", embedding_function=minilm,
                        include_bundled=False) as bank:
        for i, (older, newer) in enumerate(CORRECTIONS):
            old = bank.guidelines.learn(older, namespace=f"c-{i}").entries[0].guideline_id
            entry = bank.guidelines.learn(newer, namespace=f"c-{i}").entries[0]
            assert (entry.action, entry.superseded_id) == ("superseded", old), (older, entry)


def test_two_plain_instructions_are_distinct_not_the_same():
    """Once an antonym conflict is set aside, the two are distinct: "same" merged the newer one
    into the older (cosine about 0.9)."""
    from skillbank.distill import RuleDistiller

    relate = RuleDistiller().relate
    assert relate("End the deck with a next-steps slide.", "Start the deck with an agenda slide.",
                  similarity=0.95) == "distinct"


def test_a_number_word_in_another_place_or_a_compound_is_no_change():
    assert number_change("Put two blank lines between top-level functions.",
                         "Put one blank line between methods.") is None
    assert number_change("Keep answers under two hundred words.",
                         "Keep answers under 200 words.") is None
    assert number_change("Write one-line docstrings for helpers.",
                         "Write 3-line docstrings for helpers.") is None
