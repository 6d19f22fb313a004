"""`Hits.pending` counts only what the caller reads (review 1 #8, session 32).

While the model (or the Chroma server) is out, `experiences.recall` set `Hits.pending` to
`index.count()` and `guidelines.search` (and its fallback while the index cannot answer) to
every rule in the bank: a caller scoped to one namespace learnt how much memory the other
namespaces (other tenants) hold, over the sharing wire too. Now both count the records of the
namespaces the caller reads. In process and through a client of an owner process, with a
scoped view (`scope.narrowed`, as an adapter's ``namespace="{user_id}"`` run has).
"""

from __future__ import annotations

import pytest

from owner_client import bank_for
from skillbank import scope as scopes

TASK = "Migrate the orders table to the new schema"
OTHER_RULES = ["Lock the orders table before migrating its schema.",
               "Write invoices in the customer's own currency.",
               "Answer support tickets within one business day.",
               "Rotate the API keys of the billing service every month."]


@pytest.mark.parametrize("remote", [False, True], ids=["in-process", "client-of-owner"])
def test_pending_counts_the_callers_namespaces_only(tmp_path, remote, monkeypatch):
    """Before: recall gave pending 6 and guideline search 5 to a caller who reads one of each."""
    from skillbank.embeddings import MiniLMEmbedding

    monkeypatch.setenv("SKILLBANK_MODEL_DIR", str(tmp_path / "no-model-here"))
    monkeypatch.setenv("HOME", str(tmp_path / "home"))
    monkeypatch.setattr("skillbank.index_fill._warned_keyword_only", False)
    with bank_for(tmp_path, remote, embedding=MiniLMEmbedding()) as bank:
        for number in range(5):  # another tenant's memory
            bank.experiences.record(task=f"{TASK} number {number}", outcome="success",
                                    namespace="tenant-a")
        for rule in OTHER_RULES:
            bank.guidelines.add(rule, namespace="tenant-a")
        bank.experiences.record(task=TASK, outcome="failure", namespace="tenant-b",
                                feedback="Lock the orders table before migrating it.")
        bank.guidelines.add("Lock a table before migrating its schema.", topic="sql",
                            namespace="tenant-b")
        with scopes.using(scopes.narrowed("tenant-b")):
            recalled = bank.experiences.recall("migrate the orders table schema")
            rules = bank.guidelines.search("migrate the orders table schema")
        assert recalled.dense_complete is False and "found by keyword" in recalled.note
        assert recalled.pending == 1, "recall counted other namespaces' records"
        assert rules.dense_complete is False and rules.pending == 1, \
            "guideline search counted other namespaces' rules"
        # A caller reading the other namespace gets that one's count.
        with scopes.using(scopes.narrowed("tenant-a")):
            assert bank.experiences.recall("migrate the orders table schema").pending == 5
            assert bank.guidelines.search("migrate the orders table schema").pending == 4


def test_the_fallback_counts_the_callers_rules_only(tmp_path, monkeypatch):
    """The guideline search that answers from the records while the index cannot
    (`guidelines/fallback.py`) counted `len(self._items)`, every namespace's rules."""
    from skillbank import Skillbank
    from skillbank.embeddings import HashEmbedding
    from skillbank.index_outage import ChromaUnavailableError
    from skillbank.memories.guidelines.search import GuidelineSearch

    with Skillbank.open(tmp_path / "root", embedding_function=HashEmbedding(),
                        include_bundled=False) as bank:
        for rule in OTHER_RULES:
            bank.guidelines.add(rule, namespace="tenant-a")
        bank.guidelines.add("Lock a table before migrating its schema.", topic="sql",
                            namespace="tenant-b")

        def down(*args, **kwargs):
            raise ChromaUnavailableError("the Chroma server is down (test)")

        monkeypatch.setattr(GuidelineSearch, "_fuse", down)
        with scopes.using(scopes.narrowed("tenant-b")):
            rules = bank.guidelines.search("migrate the orders table schema")
        assert rules.dense_complete is False and rules.note
        assert rules.pending == 1, "the fallback counted other namespaces' rules"
