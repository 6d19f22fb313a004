"""A block shows one critique's rules after the other critiques' rules of the task's family.

Found by replaying the critique stream's blocks (benchmarks/learning_loop.py): one critique
often yields two or three rules, and they rank side by side because the critique and its task
are part of what each one is found by. At 400 tokens they filled the block, and another
critique's rule for the same kind of task fell off the end.
"""

from __future__ import annotations

from types import SimpleNamespace

from skillbank import Skillbank
from skillbank.block_family import siblings_last
from skillbank.embeddings import HashEmbedding

TASK = "Write the onboarding guide for the billing dashboard"
REVIEW = ("The onboarding guide for the billing dashboard buries the steps under a long intro, "
          "and the intro is one huge paragraph.")
SIBLINGS = [{"text": "Lead the onboarding guide with the steps, before any background.",
             "when_to_use": "Documentation guides and help pages.", "topic": "writing"},
            {"text": "Split long paragraphs of the onboarding guide into short ones.",
             "when_to_use": "Documentation guides and help pages.", "topic": "writing"}]
OTHER_REVIEW = "Nobody outside finance knows what ARR means in this guide."
OTHER_TASK = "Write the FAQ page for the billing dashboard guide"
OTHER = {"text": "Define billing jargon and acronyms at first use in the guide.",
         "when_to_use": "Documentation guides and help pages.", "topic": "writing"}


def _hit(name: str, *critiques: str) -> SimpleNamespace:
    sources = [SimpleNamespace(critique=c, task="t") for c in critiques]
    return SimpleNamespace(name=name, record=SimpleNamespace(sources=sources))


def test_a_rule_sharing_a_critique_with_a_better_one_goes_after_the_others():
    hits = [_hit("a1", "A"), _hit("a2", "A"), _hit("b", "B"), _hit("a3", "A", "C"),
            _hit("c", "C"), _hit("none")]
    # a3 waits (A), but does not make c wait: no rule of critique C was shown first.
    assert [h.name for h in siblings_last(hits)] == ["a1", "b", "c", "none", "a2", "a3"]
    # The same critique text on another task is another review: not a sibling.
    other_task = _hit("x", "A")
    other_task.record.sources[0].task = "u"
    assert [h.name for h in siblings_last([_hit("a1", "A"), other_task])] == ["a1", "x"]
    assert siblings_last([]) == []


def _block(bank) -> None:
    g = bank.guidelines
    first, second = (e.guideline_id for e in g.learn(REVIEW, task=TASK, rules=SIBLINGS).entries)
    other = g.learn(OTHER_REVIEW, task=OTHER_TASK, rules=[OTHER]).entries[0].guideline_id
    ranked = [h.id for h in g.search_candidates(TASK, k=10)]
    assert ranked.index(second) < ranked.index(other), ranked  # the crowding this is about
    full = bank.context_for(TASK, budget_tokens=1600)
    assert full.ids == [ranked[0], other, ranked[1]], full.text  # room for all: all shown
    # The largest budget with room for two of the three lines has room for any two of them.
    blocks = [bank.context_for(TASK, budget_tokens=b) for b in range(60, 600, 4)]
    two = [block for block in blocks if len(block.ids) == 2][-1]
    assert two.ids == [ranked[0], other], two.text


def test_a_small_block_shows_another_critiques_rule_before_a_sibling(tmp_path):
    with Skillbank.open(tmp_path / "root", embedding_function=HashEmbedding(),
                        include_bundled=False) as bank:
        _block(bank)


def test_a_small_block_through_a_client_of_an_owner_process(tmp_path):
    from owner_client import client_of_owner

    with client_of_owner(tmp_path / "root") as bank:
        _block(bank)
