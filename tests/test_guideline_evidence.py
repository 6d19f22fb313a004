"""Merge evidence across critiques: paraphrases by meaning and by context (issue #11).

Rules of different critiques may merge on the model's own evidence (its cosine with the
guideline's profile, or alike critique contexts around the rule); rules of one critique never
do, and a bare rule brings no context. The pure decisions are tested directly; one slow test
runs the real model.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from skillbank import Skillbank
from skillbank.memories.guidelines.decisions import (CONTEXT_BAR, CONTEXT_DENSE_FLOOR, DENSE_BAR,
                                                     EVIDENCE_FLOOR, critique_context,
                                                     merge_evidence)

MODEL = Path(__file__).resolve().parents[2] / "shared" / "models" / "all-MiniLM-L6-v2"
MEMBERS = (("Start the axis at zero.", "Start the axis at zero.",
            "The y axis starts at 40, which exaggerates the dip. Start the axis at zero."),)


@pytest.fixture
def gm(tmp_path):
    """The guideline memory of a fresh bank on the real model (skipped without it)."""
    if not (MODEL / "onnx" / "model.onnx").is_file():
        pytest.skip("the offline MiniLM model is not at ../shared/models")
    from skillbank.embeddings import MiniLMEmbedding

    bank = Skillbank.open(tmp_path / "r", embedding_function=MiniLMEmbedding(str(MODEL)),
                          include_bundled=False)
    yield bank.guidelines
    bank.close()


def test_a_high_model_cosine_is_paraphrase_evidence_and_says_so():
    why = merge_evidence("Begin the value axis at 0.", MEMBERS, similarity=0.6,
                         dense=DENSE_BAR + 0.05)
    assert why is not None and "paraphrase by meaning" in why and "model cosine" in why


def test_model_evidence_needs_the_matching_floor_and_the_bar():
    text = "Begin the value axis at 0."
    assert merge_evidence(text, MEMBERS, similarity=EVIDENCE_FLOOR - 0.01, dense=0.99) is None
    assert merge_evidence(text, MEMBERS, similarity=0.6, dense=DENSE_BAR - 0.01) is None
    assert merge_evidence(text, MEMBERS, similarity=0.6) is None  # no model evidence given


def test_alike_critique_contexts_are_evidence_and_say_so():
    half = CONTEXT_DENSE_FLOOR + 0.01  # the model half sees the rule, below DENSE_BAR
    why = merge_evidence("Begin the value axis at 0.", MEMBERS, similarity=0.6,
                         dense=half, context=CONTEXT_BAR + 0.1)
    assert why is not None and "context cosine" in why
    assert merge_evidence("Begin the value axis at 0.", MEMBERS, similarity=0.6, dense=half,
                          context=CONTEXT_BAR - 0.01) is None


def test_an_alike_context_alone_is_no_evidence():
    """One review's preamble repeated before two different instructions."""
    assert merge_evidence("Begin the value axis at 0.", MEMBERS, similarity=0.6,
                          dense=CONTEXT_DENSE_FLOOR - 0.01, context=1.0) is None


def test_a_critique_that_is_only_its_rule_has_no_context():
    assert critique_context("Never deploy on Fridays.", "Never deploy on Fridays.") == ""
    assert critique_context("Good. Never deploy on Fridays.", "Never deploy on Fridays.") == ""
    rest = critique_context("The release went out at 5 pm on a Friday and nobody was on call. "
                            "Never deploy on Fridays.", "Never deploy on Fridays.")
    assert rest == "The release went out at 5 pm on a Friday and nobody was on call."


@pytest.mark.slow
def test_bare_rules_of_one_domain_do_not_merge_on_word_overlap(gm):
    """'Keep X under N' rules share words, not meaning: their matching similarity is high
    (~0.80, mostly the lexical part), but they have no context and the model's own cosine is
    low (0.54 < DENSE_BAR), so the new evidence must not merge them. With the real model: the
    hash embedding never consults that evidence at all."""
    first = gm.learn("Keep subject lines under 60 characters.").entries[0]
    second = gm.learn("Keep functions under 50 lines.").entries[0]
    assert second.action == "added" and second.guideline_id != first.guideline_id


@pytest.mark.slow
def test_real_model_merges_a_reworded_rule_of_another_critique(gm):
    first = gm.learn("The chart has no units and the y axis starts at 40, which exaggerates the "
                     "dip. Start the axis at zero.", task="Review the quarterly slides")
    start = next(e for e in first.entries if e.text == "Start the axis at zero.")
    again = gm.learn("The bars look like revenue halved, but the axis begins at 90. Begin the "
                     "value axis at 0.", task="Review the board deck")
    merged = [e for e in again.entries if e.action == "merged"]
    assert [e.guideline_id for e in merged] == [start.guideline_id]
    assert "paraphrase by meaning" in merged[0].detail
    assert gm.get(start.guideline_id).reinforcements == 1


def test_look_alikes_kept_apart_rank_on_their_own_merit(tmp_path, monkeypatch):
    """A look-alike linked as related is a distinct instruction until shown otherwise: search
    ranks it where its relevance puts it (demoting it cost the critique stream Recall@5
    0.522 -> 0.503 and hid compound critiques' second instruction)."""
    from skillbank.distill import RuleDistiller
    from skillbank.embeddings import HashEmbedding

    bank = Skillbank.open(tmp_path / "r", embedding_function=HashEmbedding(),
                          include_bundled=False)
    gm = bank.guidelines
    subject = gm.add("Keep subject lines short.", topic="writing").guideline_id
    gm.add("Sign off with your first name.", topic="writing")
    monkeypatch.setattr(RuleDistiller, "relate", lambda self, new, old, *, similarity: "same")
    paragraphs = gm.add("Keep paragraphs short.", topic="writing")
    monkeypatch.undo()
    assert paragraphs.action == "added" and subject in gm.get(paragraphs.guideline_id).related
    query = "keep subject lines short, keep paragraphs short, sign with a name"
    top = [h.id for h in gm.search(query, k=2)]
    assert sorted(top) == sorted([subject, paragraphs.guideline_id])
    bank.close()


@pytest.mark.slow
def test_real_model_keeps_two_instructions_after_one_reviews_preamble(gm):
    """Two comments of one review share their first sentence; each is its own instruction."""
    preamble = ("This pull request adds the CSV export to the reporting service and the diff is "
                "hard to review. ")
    gm.learn(preamble + "Move the refactor into its own commit.")
    second = gm.learn(preamble + "Add a test for empty files.")
    assert [e.action for e in second.entries if e.action != "ignored"] == ["added"]
    texts = [g.text for g in gm.list(status="active")]
    assert any("refactor" in t for t in texts) and any("empty files" in t for t in texts)


def test_a_prohibition_is_never_the_same_rule_as_another_action():
    """A rule that forbids an action and one that prescribes another are two instructions,
    whatever the model cosine or the shared words say (both were merged, and the newer one
    lost: found through the MCP tools and the LangChain middleware)."""
    members = (("Always check the CSV delimiter before you import.", None, None),)
    text = "Never import without a header row."
    assert merge_evidence(text, members, similarity=0.76, dense=0.9) is None
    assert merge_evidence(text, members, similarity=0.99) is None
    # The same action forbidden again, or a paraphrase of the same kind, still merges; so do
    # a prohibition and an avoidance, and a double negation and its positive (review).
    assert merge_evidence("Do not import without the header row.",
                          (("Never import without a header row.", None, None),),
                          similarity=0.9, dense=0.9)
    assert merge_evidence("Check the CSV delimiter first.", members, similarity=0.7, dense=0.9)
    assert merge_evidence("Never log passwords.", (("Avoid logging passwords.", None, None),),
                          similarity=0.9, dense=0.9)
    assert merge_evidence("Never skip the tests before merging.",
                          (("Always run the tests before merging.", None, None),),
                          similarity=0.9, dense=0.9)


def test_a_forbidden_removal_is_a_prohibition_too():
    """"Never drop X" is positive by parity (two negations) yet forbids: it merged into "Write
    the orders table migration in British English." (model cosine 0.93) and was lost."""
    members = (("Write the orders table migration in British English.", None, None),)
    text = "Never drop a column of the orders table in a migration."
    assert merge_evidence(text, members, similarity=0.93, dense=0.93) is None
    # The same things with the positive action are still one rule.
    assert merge_evidence("Never skip the tests before merging.",
                          (("Always run the tests before merging.", None, None),),
                          similarity=0.9, dense=0.9)


def test_one_template_with_other_values_is_two_instructions():
    """"Always label the bravo dashboards with owner golf." merged into "... alpha ...
    foxtrot." on the model's cosine (0.71) and was lost."""
    from skillbank.memories.guidelines.decisions import other_values

    members = (("Always label the alpha dashboards with owner foxtrot.", None, None),)
    text = "Always label the bravo dashboards with owner golf."
    assert other_values(text, members[0][0]) == [("bravo", "alpha"), ("golf", "foxtrot")]
    assert merge_evidence(text, members, similarity=1.0, dense=0.71) is None
    # The same action on one service or another is two rules even with most objects shared.
    assert merge_evidence("Add tests for the billing service.",
                          (("Add tests for the payment service.", None, None),),
                          similarity=0.9, dense=0.9) is None
    # Another form of the same words is still one rule.
    assert other_values("Add a test.", "Add tests.") == []
    assert merge_evidence("Add tests for edge cases.", (("Add tests.", None, None),),
                          similarity=0.9, dense=0.9)


def test_a_prohibition_is_kept_beside_the_rule_it_looks_like(tmp_path):
    if not (MODEL / "onnx" / "model.onnx").is_file():
        pytest.skip("the offline MiniLM model is not at ../shared/models")
    from skillbank.embeddings import MiniLMEmbedding

    old, new = ("Always check the CSV delimiter before you import.",
                "Never import without a header row.")
    with Skillbank.open(tmp_path / "r", embedding_function=MiniLMEmbedding(str(MODEL)),
                        include_bundled=False) as bank:
        bank.guidelines.learn(old, task="Import users.csv")
        entry = bank.guidelines.add(new, topic="csv", when_to_use="importing CSV files")
        assert entry.action == "added", entry.detail
        assert {g.text for g in bank.guidelines.list()} == {old, new}
