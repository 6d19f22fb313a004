"""A block's topic family is read off each rule's own words, not the task it was learnt on.

Found by replaying the critique stream's blocks (benchmarks/learning_loop.py, agent-written
rules): an agent's rule without a topic is filed by the keyword guess over the rule, the task
and the critique, so "Make every code sample complete and runnable" learnt on "Write the
quickstart for the Python SDK" was filed under `python`. In a documentation task's block it
then voted for the code family, and Python rules were shown for a README.
"""

from __future__ import annotations

from types import SimpleNamespace

from skillbank import Skillbank
from skillbank.block_family import rule_family
from skillbank.embeddings import HashEmbedding

REVIEW = "The Python snippet in the quickstart fails when pasted: it never imports the client."
LEARNT_ON = "Write the quickstart for the Python SDK"
SAMPLE_RULE = {"text": "Make every code sample complete and runnable as pasted, with its imports.",
               "when_to_use": "Docs, tutorials and READMEs that contain code snippets."}
DOCS_RULES = (("Put the answer first in every docs page and README.",
               "Documentation pages and READMEs."),
              ("List prerequisites before the first step of a tutorial.",
               "Tutorials and setup docs."))
CODE_RULES = ("Add type hints to public Python functions.",
              "Catch specific exceptions instead of a bare except in Python code.")
DOCS_TASK = "Write a README tutorial with code samples for the docs"


def _rule(topic: str, text: str, when: str = "") -> SimpleNamespace:
    return SimpleNamespace(topic=topic, text=text, when_to_use=when)


def test_a_rules_family_comes_from_its_text_and_when():
    assert rule_family(_rule("python", SAMPLE_RULE["text"], SAMPLE_RULE["when_to_use"])) == \
        "writing"
    assert rule_family(_rule("sql", "List the needed columns explicitly instead of SELECT *.",
                             "Writing SQL queries")) == "data"
    # A general rule whose words name a domain belongs to it; words that name none keep it.
    assert rule_family(_rule("general", "Label chart axes with units.", "Slides and decks")) \
        == "slides"
    assert rule_family(_rule("general", "Be kind.", "Any task")) == "general"


def test_a_named_topic_or_a_rule_without_when_keeps_its_stored_family():
    # A topic outside the keyword guess's vocabulary was named by a person or an agent.
    assert rule_family(_rule("customer-support", SAMPLE_RULE["text"],
                             SAMPLE_RULE["when_to_use"])) == "customer-support"
    assert rule_family(_rule("python", SAMPLE_RULE["text"])) == "code"  # no when: stored


def _docs_block(bank) -> None:
    g = bank.guidelines
    sample = g.learn(REVIEW, task=LEARNT_ON, rules=[SAMPLE_RULE]).entries[0].guideline_id
    assert g.get(sample).topic == "python"  # the task's words filed it (stored, unchanged)
    docs = {g.add(text, topic="writing", when_to_use=when).guideline_id
            for text, when in DOCS_RULES}
    code = {g.add(text, topic="python").guideline_id for text in CODE_RULES}
    best = g.search_candidates(DOCS_TASK, k=10)
    assert best[0].id == sample  # the best hit is the misfiled rule, and it used to vote
    block = bank.context_for(DOCS_TASK, budget_tokens=1600)
    assert set(block.ids) == {sample} | docs, block.text
    assert not code & set(block.ids)
    # A stated topic still names stored topics (the caller's words, not the guess's).
    stated = bank.context_for(DOCS_TASK, budget_tokens=1600, topic="python")
    assert sample in stated.ids and not docs & set(stated.ids), stated.text


def test_a_docs_block_shows_docs_rules_not_the_python_ones(tmp_path):
    with Skillbank.open(tmp_path / "root", embedding_function=HashEmbedding(),
                        include_bundled=False) as bank:
        _docs_block(bank)


def test_a_docs_block_through_a_client_of_an_owner_process(tmp_path):
    from owner_client import client_of_owner

    with client_of_owner(tmp_path / "root") as bank:
        _docs_block(bank)
