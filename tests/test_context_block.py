"""What a block shows (skillbank/context.py): no rules of another domain riding on one word."""

from __future__ import annotations

from skillbank import Skillbank
from skillbank.embeddings import HashEmbedding


def test_guidelines_of_another_topic_are_not_shown_on_a_shared_word(tmp_path):
    with Skillbank.open(tmp_path / "root", embedding_function=HashEmbedding(),
                        include_bundled=False) as bank:
        g = bank.guidelines
        python = [g.add(text, topic="python").guideline_id for text in (
            "Parse ISO dates in Python with datetime.fromisoformat.",
            "Add type hints to every Python function.",
            "Write a docstring for every public Python function.")]
        support = g.add("Always cite the source of a policy in customer replies.",
                        topic="support").guideline_id
        task = "Write a Python function that parses ISO dates and cite the source"
        assert support in [h.id for h in g.search(task, k=8)]  # keyword overlap finds it
        block = bank.context_for(task, budget_tokens=1600)
        assert support not in block.ids
        assert python[0] in block.ids  # the rule the task is about
