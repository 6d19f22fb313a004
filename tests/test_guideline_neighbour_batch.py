"""A learn embeds its neighbours' wordings in one model call (session 22).

Each rule the learn compares a new one with is profiled from its wordings (rule, sentence,
critique), and each text went to the model alone: the first learn after a restart, or one among
500 pending rules, made dozens of ~5 ms model calls. A batch makes it ~25% cheaper on MiniLM
(cold process, 480 pending rules: median add 97-105 -> 74-79 ms); the count of calls is what
this test can hold on a loaded machine.
"""

from __future__ import annotations

from skillbank import Skillbank
from skillbank.embeddings import HashEmbedding


class CountingEmbedding(HashEmbedding):
    """The tests' hash embedding, counting model calls (batches) rather than texts."""

    def __init__(self) -> None:
        super().__init__()
        self.batches = 0

    def embed(self, texts):
        self.batches += 1
        return super().embed(texts)


def test_a_learn_after_a_restart_embeds_its_neighbours_in_one_batch(tmp_path):
    root = tmp_path / "root"
    with Skillbank.open(root, embedding_function=HashEmbedding(), share=False) as bank:
        for i in range(40):
            bank.guidelines.learn(f"The report for service{i} was wrong.",
                                  rules=[f"Always check the service{i} widget totals."])
    embedding = CountingEmbedding()
    with Skillbank.open(root, embedding_function=embedding, share=False) as bank:
        before = embedding.batches
        entry = bank.guidelines.learn("The widget totals were wrong again.",
                                      rules=["Always check the widget totals twice."])
        assert entry.entries, "nothing learnt"
        # the candidate's own texts, the index's query, the neighbours, the stored vector:
        # a handful of calls (5), where one call per neighbour text made 52
        assert embedding.batches - before <= 8
