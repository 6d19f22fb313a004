"""Supersession from plain language, and the agent as curator (``replaces=<id>``).

A correction used to be merged into the rule it overrides ("Use 'must' instead of 'shall'"
reinforced "Use 'shall' ..."), so the user's newest word was lost and the opposite was served.
"""

from __future__ import annotations

import pytest

from skillbank import Skillbank
from skillbank.distill.supersession import drops, echoes_overruled, overrules
from skillbank.embeddings import HashEmbedding
from skillbank.errors import InvalidInputError, NotFoundError

#: (older rule, newer critique, a word only the newer active rule has)
PAIRS = [
    ("Use 'shall' for obligations in contracts.",
     "Use 'must' instead of 'shall' for obligations.", "must"),
    ("Put tests in a tests/ folder next to the package.",
     "Tests now go beside the code they test, not in a separate tests/ folder.", "beside"),
    ("Indent Python code with tabs.",
     "Stop using tabs; indent Python with 4 spaces.", "spaces"),
    ("Sign off every support reply with your first name.",
     "From now on, sign support replies as 'The Acme Support Team'.", "Acme"),
    ("Write commit messages in the past tense.",
     "We changed our commit convention: write commit messages in the imperative mood.",
     "imperative"),
]


@pytest.fixture
def real_bank(tmp_path, minilm):
    bank = Skillbank.open(tmp_path / "root", embedding_function=minilm, include_bundled=False)
    yield bank
    bank.close()


@pytest.mark.parametrize("old, new, word", PAIRS)
def test_the_newer_instruction_wins_and_the_older_is_never_served(tmp_path, minilm, old, new,
                                                                  word):
    with Skillbank.open(tmp_path / "root", embedding_function=minilm,
                        include_bundled=False) as bank:
        first = bank.guidelines.learn(old).entries[0].guideline_id
        report = bank.guidelines.learn(new)
        assert "merged" not in [e.action for e in report.entries], report
        assert bank.guidelines.get(first).status == "superseded"
        active = [g.text for g in bank.guidelines.list(status="active")]
        assert old not in active and any(word in t for t in active), active
        served = [h.record.text for h in bank.guidelines.search(old, k=10)]
        assert old not in served
        block = bank.context_for(old, budget_tokens=800).text
        assert old not in block


def test_a_negation_is_read_but_look_alikes_are_not_overruled():
    assert overrules("Stop using tabs.", "Indent Python code with tabs.")
    assert "opposite stance" in overrules("Use 'must' instead of 'shall' for obligations.",
                                          "Use 'shall' for obligations in contracts.")
    # Agreeing, refining or unrelated rules are not overruled.
    assert overrules("Don't write long paragraphs.", "Keep paragraphs short.") is None
    assert overrules("Never log passwords.", "Log errors with the traceback.") is None
    assert overrules("Do not add tests that hit the network.", "Add a test for empty files.") is None
    assert overrules("Add tests for edge cases from now on.", "Add tests.") is None
    assert overrules("Do not use tables in slides.", "Put the revenue chart on slide two.") is None
    assert overrules("Sign support emails as the team, not with your name.",
                     "Address the customer by name.") is None
    assert overrules("Keep functions under 50 lines; extract helpers instead of nesting.",
                     "Keep subject lines under 60 characters.") is None


def test_every_wording_of_an_overruled_rule_is_overruled_with_it(tmp_path, minilm):
    """An old rule lives on in several wordings. Only the one sharing two words with the
    policy change was superseded; "End with your first name ..." shares one word ("names")
    with it and kept being served after the change (learning loop, dev: stale blocks)."""
    with Skillbank.open(tmp_path / "root", embedding_function=minilm,
                        include_bundled=False) as bank:
        g = bank.guidelines
        first = g.learn("Warm and clear. Only miss: end with your first name (e.g. '- Maya'), "
                        "per the tone guide.", task="Respond to a confused first-time user.")
        second = g.learn("Sign off with your first name, not just 'Support'.",
                         task="Reply to a customer about updating their shipping address.")
        old = {e.guideline_id for r in (first, second) for e in r.entries
               if e.action in ("added", "merged")}
        assert len(old) == 2, (first, second)
        g.learn("Policy update from this week: replies now sign off as 'The Acme Support Team' "
                "rather than with individual names.",
                task="Reply to a customer asking about deleting their data.")
        assert {g.get(gid).status for gid in old} == {"superseded"}
        served = " ".join(h.record.text for h in g.search("Reply to a customer", k=10))
        assert "first name" not in served and "Acme Support Team" in served
    # ... and a rule that only shares the rejected word stands.
    assert echoes_overruled("Sign as the team, not with your name.",
                            "Sign off with your first name.", "Address the customer by name.") is None


def test_a_practice_the_critique_says_was_dropped_is_no_longer_served(tmp_path, minilm):
    """"We moved away from personal sign-offs" is no rule of its own, and the rule beside it
    ("Sign as the team") shares no word with "Include the personal sign-off.", which kept
    being served after the team said it was over."""
    with Skillbank.open(tmp_path / "root", embedding_function=minilm,
                        include_bundled=False) as bank:
        g = bank.guidelines
        old = g.learn("nit: the personal sign-off is missing.",
                      task="Answer a billing question from a long-time customer.")
        (old_id,) = [e.guideline_id for e in old.entries if e.action == "added"]
        unrelated = g.add("Address the customer by name in the greeting.").guideline_id
        report = g.learn("This is exactly why we moved away from personal sign-offs. Sign as "
                         "the team.", task="Reply to a customer who asked for the same agent.")
        assert g.get(old_id).status == "superseded", report
        assert g.get(unrelated).status == "active"
        assert any("dropped" in (e.detail or "") for e in report.entries), report
    assert drops("personal sign-offs", "Sign off with your first name.") is None
    assert drops("the `$ ` prompt prefix", "Avoid the `$ ` prompt prefix.") is None  # a rejection


# --------------------------------------------------------------------------- the curator
@pytest.fixture
def gm(tmp_path):
    bank = Skillbank.open(tmp_path / "root", embedding_function=HashEmbedding(),
                          include_bundled=False)
    yield bank.guidelines
    bank.close()


def test_learning_lists_the_nearest_rules_with_ids(gm):
    old = gm.add("Use 'shall' for obligations in contracts.").guideline_id
    entry = gm.learn("The obligations wording in contracts is off.",
                     rules=[{"text": "Write contract obligations with 'must'."}]).entries[0]
    assert any(n["id"] == old and n["text"].startswith("Use 'shall'") for n in entry.nearest)


def test_replaces_supersedes_the_named_rule_instead_of_merging(gm):
    old = gm.add("Keep paragraphs short.").guideline_id
    entry = gm.add("Keep paragraphs short, at most four sentences.", replaces=old)
    assert entry.action == "superseded" and entry.superseded_id == old
    assert gm.get(old).status == "superseded" and gm.get(old).superseded_by == entry.guideline_id
    report = gm.learn("Paragraphs: three sentences now.",
                      rules=[{"text": "Keep paragraphs to three sentences.",
                              "replaces": entry.guideline_id}])
    assert report.entries[0].superseded_id == entry.guideline_id
    assert gm.get(entry.guideline_id).status == "superseded"


def test_replacing_a_retired_unknown_or_foreign_rule_is_a_clear_error_and_writes_nothing(gm):
    retired = gm.add("Use tabs in YAML files.").guideline_id
    gm.retire(retired)
    before = len(gm.list(namespace="*"))
    with pytest.raises(InvalidInputError, match="already retired"):
        gm.add("Use two spaces in YAML files.", replaces=retired)
    with pytest.raises(InvalidInputError, match="guideline id"):
        gm.learn("x", rules=[{"text": "Use two spaces in YAML.", "replaces": "not-an-id"}])
    with pytest.raises(NotFoundError):
        gm.add("Use two spaces in YAML files.", replaces="gl-000000000000")
    foreign = gm.add("Deploy on Tuesdays.", namespace="team-b").guideline_id
    with pytest.raises((NotFoundError, InvalidInputError)):
        gm.add("Deploy on Wednesdays.", replaces=foreign)
    with pytest.raises(InvalidInputError, match="names one rule"):
        gm.learn("Use spaces. Add tests.", rules=["Use spaces.", "Add tests."], replaces=retired)
    assert len(gm.list(namespace="*")) == before + 1  # only the team-b rule was written
    assert gm.get(foreign).status == "active"


def test_an_untrusted_replace_waits_for_a_reviewer(gm):
    old = gm.add("Keep paragraphs short.").guideline_id
    entry = gm.add("Keep paragraphs under four sentences.", replaces=old, trusted=False)
    assert entry.action == "pending" and "once approved" in entry.detail
    assert gm.get(old).status == "active"
    gm.approve(entry.guideline_id)
    assert gm.get(old).status == "superseded"
