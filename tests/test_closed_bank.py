"""A closed bank refuses every call with ClosedError and writes nothing (hunt-rag #6, session 24).

A LangChain chain or agent built inside `with Skillbank.open(root) as bank:` and used after it
(a wiring mistake, an app reload) kept answering: its retrievers, tools and `bank.experiences`
reopened Chroma and wrote into the root while another process owned it by then, and that
owner's next guideline search crashed in Chroma ("Error finding id"). A client of another
process's owner said BusyError ("this bank ... is closed"), as if waiting could help.
"""

from __future__ import annotations

import pytest
from owner_client import bank_for, client_bank, owner_process

from adapters.langchain import SkillRetriever, skillbank_tools
from adapters.llamaindex import SkillbankRetriever as LlamaIndexRetriever
from skillbank import Skillbank
from skillbank.embeddings import HashEmbedding
from skillbank.errors import ClosedError

REMOTE = pytest.mark.parametrize("remote", [False, True], ids=["in-process", "client-of-owner"])
RULE = "Lead release notes with breaking changes."


def _seed(bank) -> None:
    bank.skills.create("release-notes", "Write release notes from merged changes.",
                       "# Steps\n\n1. Group by kind.\n")
    bank.guidelines.add(RULE, topic="writing")
    bank.experiences.record(task="Write release notes for v2.0", outcome="success")
    bank.flush()


def _contents(bank) -> tuple[list[str], list[str], list[str]]:
    return ([e.task for e in bank.experiences.list(limit=100)],
            sorted(g.text for g in bank.guidelines.list(namespace="*")),
            sorted(bank.skills.names()))


@REMOTE
def test_every_call_of_a_closed_bank_raises_and_writes_nothing(tmp_path, remote):
    with bank_for(tmp_path, remote) as bank:
        _seed(bank)
        before = _contents(bank)
        hits = bank.guidelines.search("release notes")
        # Memories kept from before close: they wrote their files, then failed in Chroma.
        experiences, guidelines, skills = bank.experiences, bank.guidelines, bank.skills
        retriever = SkillRetriever(bank=bank)
        llama_retriever = LlamaIndexRetriever(bank, "guidelines")
        tools = {t.name: t for t in skillbank_tools(bank, include="all")}
        bank.close()

        calls = {
            "experiences.record": lambda: bank.experiences.record(task="Fix the login bug",
                                                                  outcome="success"),
            "guidelines.learn": lambda: bank.guidelines.learn(
                "Always write tests before fixing a bug."),
            "skills.create": lambda: bank.skills.create("late", "Made after close."),
            "skills.search": lambda: bank.skills.search("release notes"),
            "guidelines.search": lambda: bank.guidelines.search("release notes"),
            "experiences.recall": lambda: bank.experiences.recall("release notes"),
            "context_for": lambda: bank.context_for("write release notes"),
            "rate": lambda: bank.rate(hits[0].id, helpful=True),
            "forget": lambda: bank.forget(hits[0].id),
            "sync": lambda: bank.sync(),
            "scoped view": lambda: bank.scoped(bank.caller_scope()).guidelines.search("rules"),
            "stats": lambda: bank.stats(),
            "kept memory, record": lambda: experiences.record(task="Kept memory write",
                                                              outcome="success"),
            "kept memory, recall": lambda: experiences.recall("release notes"),
            "kept memory, add": lambda: guidelines.add("Never deploy on Fridays."),
            "kept memory, create": lambda: skills.create("late", "Made after close."),
            "LangChain retriever": lambda: retriever.invoke("release notes"),
            "LlamaIndex retriever": lambda: llama_retriever.retrieve("release notes"),
        }
        for name, call in calls.items():
            with pytest.raises(ClosedError, match="was closed; open the root again"):
                call()
        # Tools answer a model with the error's text, as for any refused call.
        assert "was closed" in tools["record_experience"].invoke(
            {"task": "Fix the login bug", "outcome": "success"})
        assert "was closed" in tools["learn_from_critique"].invoke(
            {"critique": "Always write tests before fixing a bug."})

        bank.close()  # twice: harmless
        bank.flush()
        assert hits[0].record.text == RULE  # results fetched before close stay readable

    # Opened again (here: the owner process of the client-of-owner case has gone), the root
    # holds what it held before close.
    with Skillbank.open(tmp_path / "root", embedding_function=HashEmbedding()) as again:
        assert _contents(again) == before


@REMOTE
def test_a_closed_bank_leaves_the_next_owner_working(tmp_path, remote, minilm):
    """The hunter's case: another process opens the root after this bank closed and owns it;
    the closed bank's writes raise, and the owner's guideline search answers (it crashed in
    Chroma when the closed bank had written behind its back)."""
    with bank_for(tmp_path, remote, minilm) as bank:
        _seed(bank)
        tools = {t.name: t for t in skillbank_tools(bank, include="all")}
    root = tmp_path / "root"
    with owner_process(root, minilm=True):
        with pytest.raises(ClosedError):
            bank.experiences.record(task="Fix the login bug", outcome="success")
        with pytest.raises(ClosedError):
            bank.guidelines.learn("Always write tests before fixing a bug.")
        assert "was closed" in tools["learn_from_critique"].invoke(
            {"critique": "Always write tests before fixing a bug."})
        with client_bank(root) as other:  # its calls run in the owner process
            assert [h.record.text for h in other.guidelines.search(
                "breaking changes in release notes")] == [RULE]
            assert [e.task for e in other.experiences.list(limit=100)] == \
                ["Write release notes for v2.0"]
