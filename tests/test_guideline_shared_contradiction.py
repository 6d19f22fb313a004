"""A newer personal rule that contradicts a shared (team) rule the user reads (hunt-teamvotes #1,
session 38; issue #25: the newer instruction wins, under the trust and scope rules).

alice (contributor of `alice`, reads `team`) learnt "From now on, do not write a changelog
entry." while the team held "Always write a changelog entry.": the learn said "new rule" with
`nearest: []`, and her memory block served both opposite rules (or, when the team rule was
filed under a named topic, only the team rule she had just contradicted). Now the learn names
the team rule, her block and search prefer her rule, and the team rule stays active and served
to everyone else. Real parts: an embedded root with two namespaces, and a team deployment
(real PostgreSQL via tests/pg_cluster.py and a real `chroma run` server), hash embedding.
"""

from __future__ import annotations

from typing import Any

from skillbank import Skillbank
from skillbank.embeddings import HashEmbedding
from skillbank.scope import Scope
from team_worker import two_banks

LEAD = Scope(principal="lead", namespace="team", role="reviewer", face="test")
ALICE = Scope(principal="alice", namespace="alice", reads=("team",), role="contributor",
              face="test")
ALICE_AGENT = Scope(principal="alice-agent", namespace="alice", reads=("team",),
                    role="contributor", trusted=False, face="test")
ALICE_LEAD = Scope(principal="alice-lead", namespace="alice", reads=("team",), role="reviewer",
                   face="test")
BOB = Scope(principal="bob", namespace="bob", reads=("team",), role="contributor", face="test")

TEAM_RULE = "Always write a changelog entry."
HERS = "From now on, do not write a changelog entry."
TASK = "Write the changelog entry for the release"


def _block(bank: Any, scope: Scope, task: str = TASK) -> str:
    return bank.scoped(scope).context_for(task).text


def _searched(bank: Any, scope: Scope, task: str = TASK) -> list[str]:
    return [h.id for h in bank.scoped(scope).guidelines.search(task, k=5)]


def _contradict(bank: Any, learner: Any = None) -> tuple[str, Any]:
    team = bank.scoped(LEAD).guidelines.learn(TEAM_RULE).entries[0].guideline_id
    entry = bank.scoped(learner or ALICE).guidelines.learn(HERS).entries[0]
    return team, entry


def _open(root: Any) -> Skillbank:
    return Skillbank.open(root, embedding_function=HashEmbedding(), include_bundled=False,
                          sync=False)


def test_the_learn_names_the_team_rule_it_contradicts_and_leaves_it_alone(tmp_path):
    bank = _open(tmp_path / "root")
    try:
        team, entry = _contradict(bank)
        assert entry.action == "added"  # never a supersession of the team's rule
        shared = [n for n in entry.nearest if n["id"] == team]
        assert shared and shared[0]["namespace"] == "team" and shared[0]["contradicted"]
        assert team in entry.detail and "'team'" in entry.detail
        held = bank.scoped(LEAD).guidelines.get(team)
        assert (held.status, held.text, held.superseded_by) == ("active", TEAM_RULE, None)
        assert bank.scoped(ALICE).guidelines.get(entry.guideline_id).overrides == [team]
    finally:
        bank.close()


def test_her_block_and_search_prefer_her_rule_others_keep_the_team_rule(tmp_path):
    bank = _open(tmp_path / "root")
    try:
        team, entry = _contradict(bank)
        mine = entry.guideline_id
        block = _block(bank, ALICE)
        assert mine in block and team not in block, block
        assert team not in _searched(bank, ALICE) and mine in _searched(bank, ALICE)
        for other in (LEAD, BOB):  # the team's rule as it was for everyone else
            assert team in _block(bank, other) and mine not in _block(bank, other)
        # A read of the team's namespace alone shows it as it is, and so do list and get.
        assert team in [h.id for h in bank.scoped(ALICE).guidelines.search(
            TASK, k=5, namespace="team")]
        assert team in [g.id for g in bank.scoped(ALICE).guidelines.list(namespace="team")]
    finally:
        bank.close()
    bank = _open(tmp_path / "root")  # kept in her rule's file, read back
    try:
        assert team not in _block(bank, ALICE) and mine in _block(bank, ALICE)
        bank.scoped(ALICE_LEAD).guidelines.retire(mine)  # her rule gone: the team's is back
        assert team in _block(bank, ALICE)
    finally:
        bank.close()


def test_a_rule_filed_under_a_named_topic_is_not_served_instead_of_her_correction(tmp_path):
    bank = _open(tmp_path / "root")
    try:
        team = bank.scoped(LEAD).guidelines.add(
            "Squash commits before merging a pull request.", topic="git").guideline_id
        entry = bank.scoped(ALICE).guidelines.learn(
            "Stop squashing commits before merging a pull request.").entries[0]
        assert team in entry.detail
        block = _block(bank, ALICE, "merge a pull request")
        assert entry.guideline_id in block and team not in block, block
        assert team in _block(bank, BOB, "merge a pull request")
    finally:
        bank.close()


def test_an_untrusted_contradiction_waits_for_approval(tmp_path):
    bank = _open(tmp_path / "root")
    try:
        team, entry = _contradict(bank, ALICE_AGENT)
        assert entry.action == "pending" and team in entry.detail
        assert team in _block(bank, ALICE)  # a proposal changes nothing served
        bank.scoped(ALICE_LEAD).guidelines.approve(entry.guideline_id)
        assert team not in _block(bank, ALICE) and entry.guideline_id in _block(bank, ALICE)
        assert bank.scoped(LEAD).guidelines.get(team).status == "active"
        assert team in _block(bank, BOB)
    finally:
        bank.close()


def test_a_team_deployment_prefers_her_rule_on_every_worker(tmp_path, chroma_server, postgres):
    with two_banks(tmp_path / "a", tmp_path / "b", chroma_server, postgres.url) as (a, b):
        team = a.scoped(LEAD).guidelines.learn(TEAM_RULE).entries[0].guideline_id
        entry = b.scoped(ALICE).guidelines.learn(HERS).entries[0]
        assert any(n["id"] == team and n["namespace"] == "team" for n in entry.nearest)
        for worker in (a, b):
            block = _block(worker, ALICE)
            assert entry.guideline_id in block and team not in block, block
            assert team in _block(worker, BOB)
        assert a.scoped(LEAD).guidelines.get(team).status == "active"


def test_a_personal_rule_that_agrees_or_adds_hides_no_team_rule(tmp_path):
    bank = _open(tmp_path / "root")
    try:
        team = bank.scoped(LEAD).guidelines.learn(TEAM_RULE).entries[0].guideline_id
        for rule in ("Write the changelog entry in the past tense.", TEAM_RULE):
            entry = bank.scoped(ALICE).guidelines.learn(rule).entries[0]
            assert not any(n.get("contradicted") for n in entry.nearest), entry
            assert not bank.scoped(ALICE).guidelines.get(entry.guideline_id).overrides
        assert team in _block(bank, ALICE)
    finally:
        bank.close()


async def test_mcp_learn_names_the_team_rule_and_memory_context_serves_hers(tmp_path):
    from mcp import Client

    from skillbank import scope as scopes
    from skillbank.mcp_server import build_server

    bank = _open(tmp_path / "root")
    try:
        team = bank.scoped(LEAD).guidelines.learn(TEAM_RULE).entries[0].guideline_id
        with scopes.using(ALICE):
            async with Client(build_server(bank, trusted=True)) as client:
                learnt = await client.call_tool("learn_from_critique", {
                    "critique": HERS, "use_client_model": False})
                assert not learnt.is_error, learnt.content[0].text
                said = str(learnt.structured_content)
                assert team in said and "'team'" in said, said
                block = await client.call_tool("memory_context", {"task": TASK})
                text = block.structured_content["text"]
                assert "Do not write a changelog entry." in text and team not in text, text
        assert team in _block(bank, BOB)
    finally:
        bank.close()
