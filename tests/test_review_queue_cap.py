"""The review queue has a cap per namespace, and a pending rule keeps an excerpt of its critique.

Users met (hunt s18, defect 7): an untrusted client (MCP without trust, an untrusted token, an
adapter with `trusted=False`) added pending guidelines and experiences without end, each call
up to 20 rule files, and each file carried the whole critique (20,000 characters x 20). Now an
untrusted write that would take a namespace past `max_pending_guidelines` /
`max_pending_experiences` is refused with QueueFullError naming the cap and what a reviewer
does; trusted writes never are, and a reviewer's decision makes room again. A pending rule
keeps a bounded excerpt of an untrusted critique around the sentence it came from. In
process, through a client of an owner process and through a real MCP client session.
"""

from __future__ import annotations

import pytest

from owner_client import bank_for
from skillbank.errors import QueueFullError
from skillbank.scope import Scope

AGENT = Scope(principal="agent", namespace="default", role="contributor", trusted=False)
OTHER = Scope(principal="other", namespace="other", role="contributor", trusted=False)
RULES = ["Always pin the base image digest in every Dockerfile.",
         "Never commit secrets such as API tokens to the repository.",
         "Write the changelog entry before opening a merge request.",
         "Run the database migrations inside one transaction."]


def _capped(tmp_path, rules: int = 3, experiences: int = 2) -> None:
    root = tmp_path / "root"
    root.mkdir()
    (root / "skillbank.toml").write_text(
        f"max_pending_guidelines = {rules}\nmax_pending_experiences = {experiences}\n")


def _guidelines(bank) -> None:
    agent = bank.scoped(AGENT)
    added = [agent.guidelines.add(text, topic="practice") for text in RULES[:3]]
    assert [e.action for e in added] == ["pending"] * 3
    with pytest.raises(QueueFullError) as refused:
        agent.guidelines.add(RULES[3], topic="practice")
    message = str(refused.value)
    assert "max_pending_guidelines = 3" in message and "approve|reject" in message
    with pytest.raises(QueueFullError):  # a critique too, before anything is written
        agent.guidelines.learn("Some critique.", rules=[{"text": RULES[3]}])
    # Trusted writes are never refused; another namespace has its own queue.
    assert bank.guidelines.add("Tag every release in git.").action == "added"
    assert bank.scoped(OTHER).guidelines.add(RULES[3], topic="practice").action == "pending"
    # A reviewer's decision makes room again: one rule of a three-rule critique fits, and the
    # two others are said to be refused (never dropped silently).
    bank.guidelines.reject(added[0].guideline_id)
    report = agent.guidelines.learn("Three rules from a review.", rules=[
        {"text": RULES[3]}, {"text": "Keep every function under fifty lines."},
        {"text": "Name branches after their ticket number."}])
    assert [e.action for e in report.entries] == ["pending", "ignored", "ignored"]
    assert all("max_pending_guidelines = 3" in e.detail for e in report.entries[1:])


def _experiences(bank) -> None:
    agent = bank.scoped(AGENT)
    first = agent.experiences.record(task="Deploy the web service", outcome="success")
    agent.experiences.record(task="Rotate the signing keys", outcome="failure")
    with pytest.raises(QueueFullError) as refused:
        agent.experiences.record(task="Restore the nightly backup", outcome="success")
    assert "max_pending_experiences = 2" in str(refused.value)
    assert bank.experiences.record(task="Restore the nightly backup", outcome="success")
    bank.experiences.reject(first)
    with pytest.raises(QueueFullError):  # two do not fit in one place: refused whole
        agent.experiences.record_many([{"task": "Migrate the orders table"},
                                       {"task": "Vacuum the analytics database"}])
    assert len(bank.experiences.pending(namespace="*")) == 1
    agent.experiences.record_many([{"task": "Migrate the orders table"}])
    assert len(bank.experiences.pending(namespace="*")) == 2


def _excerpt(bank) -> None:
    filler = " ".join(f"Paragraph {i} talks about the weather and nothing else."
                      for i in range(170))
    critique = filler + " Always pin the base image digest in every Dockerfile. " + filler
    assert 18_000 < len(critique) <= 20_000
    pending = bank.scoped(AGENT).guidelines.learn(critique, rules=[RULES[0]]).ids()[0]
    kept = bank.guidelines.get(pending).sources[0].critique
    assert len(kept) < 1700 and "Always pin the base image digest" in kept
    assert f"of {len(critique)} characters" in kept
    trusted = bank.guidelines.learn(critique, rules=[
        {"text": "Sign every release tag with the team key."}]).ids()[0]
    assert bank.guidelines.get(trusted).sources[0].critique == critique  # a person's: whole


@pytest.mark.parametrize("remote", [False, True], ids=["in-process", "client-of-owner"])
def test_the_review_queue_is_capped_for_untrusted_writes(tmp_path, remote):
    _capped(tmp_path)
    with bank_for(tmp_path, remote) as bank:
        _guidelines(bank)
        _experiences(bank)


@pytest.mark.parametrize("remote", [False, True], ids=["in-process", "client-of-owner"])
def test_a_pending_rule_keeps_an_excerpt_of_an_untrusted_critique(tmp_path, remote):
    with bank_for(tmp_path, remote) as bank:
        _excerpt(bank)


async def test_an_untrusted_mcp_client_is_told_the_queue_is_full(tmp_path):
    from mcp import Client

    from skillbank import Skillbank
    from skillbank.embeddings import HashEmbedding
    from skillbank.mcp_server import build_server

    _capped(tmp_path, rules=2, experiences=1)
    with Skillbank.open(tmp_path / "root", embedding_function=HashEmbedding(),
                        include_bundled=False) as bank:
        async with Client(build_server(bank, trusted=False, sampling=False)) as client:
            for text in RULES[:2]:
                added = await client.call_tool("add_guideline", {"text": text,
                                                                 "topic": "practice"})
                assert added.structured_content["action"] == "pending"
            refused = await client.call_tool("add_guideline", {"text": RULES[2]})
            assert refused.is_error and "max_pending_guidelines = 2" in str(refused.content)
            refused = await client.call_tool("learn_from_critique", {
                "critique": "Never commit secrets such as API tokens to the repository."})
            assert refused.is_error and "reviewer" in str(refused.content)
            recorded = await client.call_tool("record_experience", {
                "task": "Deploy the web service", "outcome": "success"})
            assert not recorded.is_error
            refused = await client.call_tool("record_experience", {
                "task": "Rotate the signing keys", "outcome": "success"})
            assert refused.is_error and "max_pending_experiences = 1" in str(refused.content)
        assert len(bank.guidelines.list(status="pending", namespace="*")) == 2
        assert bank.guidelines.add(RULES[3]).action == "added"  # the user is never refused


def _turn(n: int) -> list[dict[str, str]]:
    return [{"role": "user", "content": f"turn {n} quux{n}"},
            {"role": "assistant", "content": f"answer {n}"}]


@pytest.mark.parametrize("remote", [False, True], ids=["in-process", "client-of-owner"])
def test_a_conversation_already_queued_goes_on_at_the_cap(tmp_path, remote):
    """Review, session 19: at the cap, every later turn of an untrusted conversation already
    waiting in the queue was refused, though it only updates that record and adds nothing;
    the middleware logged it, and the turns, outcome and feedback were lost. A new
    conversation is still refused."""
    _capped(tmp_path, experiences=2)
    with bank_for(tmp_path, remote) as bank:
        agent = bank.scoped(AGENT).experiences
        first = agent.record_messages(_turn(0), task="Thread A goal", thread="A")
        agent.record_messages(_turn(0), task="Thread B goal", thread="B")
        again = agent.record_messages(_turn(1), task="Thread A goal", thread="A", followup=True)
        assert again == first
        assert len(bank.experiences.get(first).steps) >= 2
        with pytest.raises(QueueFullError):
            agent.record_messages(_turn(0), task="Thread C goal", thread="C")


def _import_at_the_cap(bank, tmp_path) -> None:
    """An untrusted import that fills the queue keeps its report: what was stored, and which
    lines wait (the QueueFullError lost the report while the lines before it stayed stored)."""
    import json

    lines = [{"task": task, "outcome": "success"} for task in (
        "Deploy the web service", "Rotate the signing keys", "Restore the nightly backup",
        "Vacuum the analytics database")]
    path = tmp_path / "runs.jsonl"
    path.write_text("".join(json.dumps(line) + "\n" for line in lines))
    report = bank.scoped(AGENT).experiences.import_(path)
    assert len(report.added) == 2
    assert report.skipped == ["runs.jsonl:3", "runs.jsonl:4"]
    [finding] = [f for f in report.findings if f.code == "queue-full"]
    assert finding.path == "runs.jsonl:3" and "max_pending_experiences = 2" in finding.message
    assert sorted(e.task for e in bank.experiences.pending(namespace="*")) == [
        "Deploy the web service", "Rotate the signing keys"]


@pytest.mark.parametrize("remote", [False, True], ids=["in-process", "client-of-owner"])
def test_an_import_that_fills_the_queue_says_what_it_stored(tmp_path, remote):
    _capped(tmp_path)
    with bank_for(tmp_path, remote) as bank:
        _import_at_the_cap(bank, tmp_path)
