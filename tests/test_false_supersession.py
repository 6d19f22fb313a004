"""A newer rule that only *names* what an older rule is about does not retire it.

A negated rule used to reject every word it named, so "Never import a CSV file without a
header row." retired "Always check the CSV file delimiter before an import." (both name CSV
files), "Never rename a column of the orders table in a migration." retired "Write the orders
table migration in British English.", and an agreement ("Sign off with your first name, not
just 'Support'." after "Sign support emails with your first name.") read as a contradiction.
Each retired rule was never served again. Of 98 pairs among the two critique sets' rules that
`overrules` used to call a contradiction, 43 were not one (`benchmarks/guidelines.py` measures
the pairs labelled in `benchmarks/data/overrule_pairs.jsonl`).
"""

from __future__ import annotations

import pytest

from owner_client import client_of_owner
from skillbank import Skillbank
from skillbank.distill.supersession import overrules

#: (newer rule, older rule): the newer one does not overrule the older one.
KEPT_APART = [
    # A negation after a verb that is not one of choosing rejects the doing, not the things.
    ("Never import a CSV file without a header row.",
     "Always check the CSV file delimiter before an import."),
    ("Never rename a column of the orders table in a migration.",
     "Write the orders table migration in British English."),
    ("Never paste screenshots of code.",
     "Make every code sample complete and runnable as pasted, with imports, setup and clearly "
     "marked placeholders."),
    ("Never round totals before summing.",
     "Check join cardinality before aggregating so one-to-many joins do not duplicate rows and "
     "inflate totals."),
    ("Do not catch bare exceptions.",
     "Catch specific exceptions instead of bare or broad `except` clauses, and never silently "
     "swallow errors."),
    # An antonym pair on one shared word, but different actions on different things.
    ("Show the expected output after each command.", "Answer those before the first command."),
    ("Link the glossary from the first page.",
     "Add cases for the last page, an empty result set and page_size=1."),
    ("Give more detail in the weekend on-call.",
     "Keep on-slide text to a few short bullets and move detail into speaker notes, handouts "
     "or an appendix."),
    # A quoted title is mentioned, not used.
    ("Split the 'What we keep and for how long' paragraph into two or three.",
     "Use shorter paragraphs."),
    # A setting, an aside, a purpose: not what the rule asks for.
    ("Do not use tables in slides; use bar charts instead.",
     "Use at least 18-point type for body text, tables, code and chart labels."),
    ("Use `NOT EXISTS`, or filter the NULLs out of the subquery.",
     "Handle NULLs explicitly (IS NULL, COALESCE, NOT EXISTS rather than NOT IN) in filters, "
     "joins and aggregates."),
    ("Make the sample run as pasted (there's no import for `BatchClient`).",
     "Make every code sample complete and runnable as pasted, with imports, setup and clearly "
     "marked placeholders."),
    # Both reject the same thing; a word quoted in one rule only is another thing.
    ("Sign support emails as the support team, not with your name.",
     "Use plain language and leave out internal jargon, team names, ticket keys and technical "
     "codes."),
    ("Sign off with your first name, not just 'Support'.",
     "Sign support emails with your first name."),
    # A negation of a choice agrees with another choice.
    ("Never use OFFSET for deep pagination.", "Use keyset pagination."),
    # One shared word with a fragment that chooses nothing.
    ("Delete test environments after 7 days.", "Add test."),
    ("Avoid three levels of nested subqueries.", "Reference the same subquery."),
    ("Give product dimensions in imperial units from now on.",
     "Give the chart axis units (signups per day)."),
    # Review: a side of an antonym pair in a negated rule's setting is only where it applies.
    ("Never mention pricing in the first reply.",
     "Greet the customer by name in the first reply."),
    ("Don't paste logs at the top of the ticket.", "Put the summary at the top of the ticket."),
    # Review: the same verb negated on other things.
    ("Don't deploy the frontend on Fridays.", "Deploy the backend on Fridays."),
    ("Never log request bodies.", "Log request IDs."),
]

#: (newer rule, older rule): the newer one overrules the older one (kept while the above
#: were fixed; the first was missed before: its purpose clause diluted the shared words).
OVERRULED = [
    ("Sign off as 'The Acme Support Team' rather than with an individual agent's name.",
     "Sign off with your own first name so the customer knows a person is helping them."),
    ("Never deploy on Fridays.",
     "Deploy on Friday afternoons so the release gets a quiet weekend."),
    ("Do not prefix shell commands with `$`; put bare commands in one copyable block and any "
     "output in a separate block.",
     "Prefix shell commands in code blocks with `$ ` so readers can tell commands apart from "
     "output."),
    ("Make shell commands start with a `$ ` prompt.", "Drop the `$ ` prompt prefix."),
    ("Do not use tables in slides; use bar charts instead.",
     "Use tables for comparisons in slides."),
    ("Include the personal sign-off.",
     "Remember the new sign-off: 'The Acme Support Team', not your own name."),
    ("Give product dimensions in imperial units from now on.",
     "Give product dimensions in metric units."),
    ("Stop using conventional commit messages.",
     "Use conventional commit messages for every change."),
    ("Do not rename columns in a migration.",
     "Rename columns in a migration when the name is misleading."),
    # Review: a negation that names nothing the older rule does not still rejects its things,
    # whatever its verb; an emphatic NOT flips; a verb the lemma list lacks; a rule in parts;
    # a flip in parentheses; an apostrophe is no quote.
    ("Never store passwords in the config file.", "Keep passwords in the config file."),
    ("Never show stack traces to customers.", "Include the full stack trace in customer replies."),
    ("Use spaces, NOT tabs.", "Use tabs."),
    ("Indent with spaces, NOT tabs.", "Indent with tabs."),
    ("No longer add type hints to test functions.", "Add type hints to test functions."),
    ("Never store secrets in environment variables; use the vault.",
     "Store secrets in environment variables."),
    ("Deploy with Helm (not kubectl apply).", "Deploy with kubectl apply."),
    ("Don't use tabs in YAML files, it's a parser error.", "Use tabs in YAML files."),
]


@pytest.mark.parametrize("new, old", KEPT_APART)
def test_a_rule_that_names_the_same_things_does_not_overrule(new, old):
    assert overrules(new, old, new) is None


@pytest.mark.parametrize("new, old", OVERRULED)
def test_a_real_correction_still_overrules(new, old):
    assert overrules(new, old, new)


def _learn_both(bank, older: str, newer: str) -> list[str]:
    bank.guidelines.learn(older)
    bank.guidelines.learn(newer)
    return sorted(g.text for g in bank.guidelines.list() if g.status == "active")


CSV = ("Always check the CSV file delimiter before an import.",
       "Never import a CSV file without a header row.")
MIGRATION = ("Write the orders table migration in British English.",
             "Never rename a column of the orders table in a migration.")
#: Not supersessions but merges, which lost the newer rule the same way: a forbidden removal,
#: and one template with other values.
DROP = ("Write the orders table migration in British English.",
        "Never drop a column of the orders table in a migration.")
LABELS = ("Always label the alpha dashboards with owner foxtrot.",
          "Always label the bravo dashboards with owner golf.")


@pytest.mark.parametrize("older, newer", [CSV, MIGRATION, DROP, LABELS])
def test_both_rules_stay_served_in_process(tmp_path, minilm, older, newer):
    with Skillbank.open(tmp_path / "root", embedding_function=minilm,
                        include_bundled=False) as bank:
        assert _learn_both(bank, older, newer) == sorted([older, newer])
        served = [h.text for h in bank.guidelines.search(older, k=5)]
        assert older in served


def test_both_rules_stay_served_through_a_client(tmp_path):
    with client_of_owner(tmp_path / "root") as bank:
        for older, newer in (CSV, MIGRATION, DROP, LABELS):
            active = _learn_both(bank, older, newer)
            assert older in active and newer in active, active
        superseded = [g.text for g in bank.guidelines.list(status="superseded")]
        assert superseded == []


def _npm_then_pnpm(bank) -> tuple[str, str]:
    old = bank.guidelines.learn("Use npm for installs.").entries[0].guideline_id
    entry = bank.guidelines.learn("Use pnpm for installs.").entries[0]
    return old, entry.detail


def test_a_one_word_change_is_kept_and_the_report_says_how_to_replace(tmp_path, minilm):
    """"Use pnpm for installs." after "Use npm for installs." used to merge and lose the new
    value; kept apart now, the words cannot tell a new value from another thing, so the learn
    report says how to make it a replacement."""
    with Skillbank.open(tmp_path / "root", embedding_function=minilm,
                        include_bundled=False) as bank:
        old, detail = _npm_then_pnpm(bank)
        assert "'pnpm' for 'npm'" in detail and "replaces=" in detail and old in detail
        bank.guidelines.learn("Use pnpm for installs.", replaces=old)
        assert {g.text: g.status for g in bank.guidelines.list(namespace="*")} == {
            "Use pnpm for installs.": "active", "Use npm for installs.": "superseded"}


def test_a_one_word_change_replaced_through_a_client(tmp_path):
    with client_of_owner(tmp_path / "root") as bank:
        old, _detail = _npm_then_pnpm(bank)
        bank.guidelines.learn("Use pnpm for installs.", replaces=old)
        assert {g.text: g.status for g in bank.guidelines.list(namespace="*")} == {
            "Use pnpm for installs.": "active", "Use npm for installs.": "superseded"}


#: A negation of a wording that reinforced a guideline (not of its text) used to merge into it:
#: "Do not answer customer emails within a day" became one more source of "Reply to customers
#: within one business day.", and the opposite of the user's newest word stayed served.
REPLY = ("Reply to customers within one business day.",
         "Answer every customer email within a day.",
         "Do not answer customer emails within a day.")
TESTS_DIR = ("Put tests in a tests/ folder next to the package.",
             "Keep the test files in a separate tests folder next to the package.",
             "Stop keeping test files in a separate tests directory; put them beside the code.")


def _negate_a_member(bank, rule: str, paraphrase: str, negation: str) -> dict[str, str]:
    first = bank.guidelines.learn(rule).entries[0].guideline_id
    merged = bank.guidelines.learn(paraphrase).entries[0]
    assert (merged.action, merged.guideline_id) == ("merged", first), merged
    entry = bank.guidelines.learn(negation).entries[0]
    assert entry.action == "superseded" and entry.superseded_id == first, entry
    assert "in the wording" in entry.detail and paraphrase in entry.detail
    return {g.text: g.status for g in bank.guidelines.list(namespace="*")}


@pytest.mark.parametrize("trio", [REPLY, TESTS_DIR], ids=["reply", "tests-dir"])
def test_negating_a_reinforcing_wording_supersedes_the_guideline(tmp_path, minilm, trio):
    with Skillbank.open(tmp_path / "root", embedding_function=minilm,
                        include_bundled=False) as bank:
        statuses = _negate_a_member(bank, *trio)
        assert statuses == {trio[0]: "superseded", trio[2]: "active"}
        served = [h.text for h in bank.guidelines.search(trio[1], k=5)]
        assert trio[0] not in served


def test_negating_a_reinforcing_wording_through_a_client(tmp_path, model_dir):
    with client_of_owner(tmp_path / "root", minilm=True) as bank:
        statuses = _negate_a_member(bank, *REPLY)
        assert statuses == {REPLY[0]: "superseded", REPLY[2]: "active"}


#: A label in parentheses is an aside, not what a negated rule rejects (LlamaIndex hunt,
#: session 21, #7): the negation reached "(plain bank)" and the add retired the older rule.
ASIDE = ("Always sign emails as plain bank.", "Never use passive voice (plain bank).")


def test_an_aside_in_parentheses_is_no_contradiction():
    from skillbank.distill.rule_distiller import RuleDistiller

    older, newer = ASIDE
    assert RuleDistiller().relate(newer, older, similarity=0.83) != "contradiction"
    # A parenthesis that names a rejected choice is still read with the rule, and so are
    # examples of what a negated rule rejects on a matter both rules share (review).
    for newer, older in [
            ("Deploy with Helm (not kubectl apply).", "Deploy with kubectl apply."),
            ("Avoid heavy libraries (jQuery, Lodash) in the frontend.",
             "Use jQuery and Lodash in the frontend."),
            ("Avoid deprecated libraries (moment.js) for date handling.",
             "Use moment.js for date handling."),
            ("Never use informal punctuation (emoji, exclamation marks) in release notes.",
             "Add emoji and exclamation marks to release notes.")]:
        assert RuleDistiller().relate(newer, older, similarity=0.83) == "contradiction", newer


@pytest.mark.parametrize("remote", [False, True], ids=["in-process", "client-of-owner"])
def test_an_added_rule_with_an_aside_leaves_the_older_rule_active(tmp_path, remote):
    from owner_client import bank_for

    older, newer = ASIDE
    with bank_for(tmp_path, remote) as bank:
        first = bank.guidelines.learn(older).entries[0].guideline_id
        report = bank.guidelines.add(newer)
        assert report.superseded_id is None, report.detail
        assert bank.guidelines.get(first).status == "active"
