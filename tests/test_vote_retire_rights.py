"""A vote retires a rule only for a caller who may retire it, and only such votes decide when.

A contributor who writes his own namespace and only reads the team's was refused
``retire(gid)`` on a team rule (it needs the reviewer role), yet three "not helpful" votes of
his alone retired it for the whole team, in process and through a client of an owner process.
Then (hunt s18, defect 5) his votes still all counted: ten "harmful" votes made harmful 10, the
rule sank in every ranking, and a reviewer's single vote retired it at once. Now an outsider's
votes count once (the sign of his net) in ranking and never toward the retire margin; the
local user's and a reviewer's repeated votes count as before. Checked in process, through a
client of an owner process, in team mode (PostgreSQL) and through a real MCP session.
"""

from __future__ import annotations

import pytest

from owner_client import bank_for
from skillbank.errors import NotFoundError, PermissionDeniedError
from skillbank.memories.guidelines.files import parse_guideline, render_guideline
from skillbank.scope import Scope
from test_team_guidelines import workers  # noqa: F401 - a fixture

CARL = Scope(principal="carl", namespace="carl", reads=("team",), role="contributor")
REVIEWER = Scope(principal="rita", namespace="team", role="reviewer")


def _votes(bank) -> None:
    margin = bank.guidelines.retire_margin
    gid = bank.guidelines.add("Use conventional commit messages.", namespace="team").guideline_id
    carl = bank.scoped(CARL)
    with pytest.raises(PermissionDeniedError):
        carl.guidelines.retire(gid)
    for _ in range(10):
        answer = carl.rate(gid, helpful=False)
        assert answer["counted"] is True and answer["status"] == "active"
    rule = bank.guidelines.get(gid)
    # Counted once (ranking, what readers see), his net kept for his next votes.
    assert (rule.status, rule.helpful, rule.harmful) == ("active", 0, 1)
    assert rule.outside_votes == {"carl": -10}
    team = bank.scoped(Scope(principal="tina", namespace="team", role="contributor"))
    assert gid in team.context_for("Write a commit message").ids
    # His votes never count toward the margin: the reviewer's own votes decide, all of them.
    reviewer = bank.scoped(REVIEWER)
    assert [reviewer.rate(gid, helpful=False)["status"] for _ in range(margin)] == \
        ["active"] * (margin - 1) + ["retired"]
    assert bank.guidelines.get(gid).harmful == margin + 1
    # Helpful votes stack no more than harmful ones; his net decides his one vote.
    liked = bank.guidelines.add("Squash fixup commits before a merge.",
                                namespace="team").guideline_id
    for helpful in [True] * 10 + [False] * 3:
        carl.rate(liked, helpful=helpful)
    rule = bank.guidelines.get(liked)
    assert (rule.helpful, rule.harmful, rule.outside_votes) == (1, 0, {"carl": 7})
    for _ in range(7):
        carl.rate(liked, helpful=False)  # net 0: no vote of his; -1: one harmful vote
    rule = bank.guidelines.get(liked)
    assert (rule.helpful, rule.harmful, rule.outside_votes) == (0, 0, {})
    assert carl.rate(liked, helpful=False)["status"] == "active"
    assert (bank.guidelines.get(liked).helpful, bank.guidelines.get(liked).harmful) == (0, 1)
    # Carl's own rules he may retire, so each of his votes counts and they retire them; so do
    # the single local user's repeated votes on its rules (it votes after every use).
    mine = carl.guidelines.add("Sign every release tag.").guideline_id
    assert [carl.rate(mine, helpful=False)["status"] for _ in range(margin)][-1] == "retired"
    local = bank.guidelines.add("Keep changelog entries in the imperative.").guideline_id
    assert [bank.rate(local, helpful=False)["status"] for _ in range(margin)] == \
        ["active"] * (margin - 1) + ["retired"]


@pytest.mark.parametrize("remote", [False, True], ids=["in-process", "client-of-owner"])
def test_only_those_who_may_retire_a_rule_decide_its_retirement(tmp_path, remote):
    with bank_for(tmp_path, remote) as bank:
        _votes(bank)


def _own_retire(bank) -> None:
    """hunt-teamvotes #4, session 38: Carl could forget his own rule and retire it with his
    votes, yet `retire()` said "needs the reviewer role"; now retiring an active rule takes what
    forgetting takes. Untrusted he still may not, nor retire a rule of a namespace he only reads,
    nor reach a pending rule (his reviewer's)."""
    carl = bank.scoped(CARL)
    mine = carl.guidelines.add("Sign every release tag.").guideline_id
    team = bank.guidelines.add("Use conventional commit messages.", namespace="team").guideline_id
    with pytest.raises(PermissionDeniedError):
        bank.scoped(CARL.untrusted()).guidelines.retire(mine)
    with pytest.raises(PermissionDeniedError):
        carl.guidelines.retire(team)
    pending = bank.scoped(CARL.untrusted()).guidelines.add(
        "Tag releases from the main branch only.").guideline_id
    with pytest.raises(NotFoundError):
        carl.guidelines.retire(pending)
    assert bank.guidelines.get(mine).status == "active"
    assert carl.guidelines.retire(mine).status == "retired"
    assert bank.guidelines.get(mine).status == "retired"
    assert (bank.guidelines.get(team).status, bank.guidelines.get(pending).status) == \
        ("active", "pending")


@pytest.mark.parametrize("remote", [False, True], ids=["in-process", "client-of-owner"])
def test_a_trusted_contributor_retires_her_own_active_rule(tmp_path, remote):
    with bank_for(tmp_path, remote) as bank:
        _own_retire(bank)


def test_a_trusted_contributor_retires_her_own_active_rule_in_team_mode(workers):
    a, b = workers
    _own_retire(a)


def test_outside_votes_round_trip_through_the_rule_file(tmp_path):
    with bank_for(tmp_path, False) as bank:
        gid = bank.guidelines.add("Pin the CI images.", namespace="team").guideline_id
        for _ in range(4):
            bank.scoped(CARL).rate(gid, helpful=False)
        rule = bank.guidelines.get(gid)
    text = render_guideline(rule)
    assert "outside_votes:\n  carl: -4\n" in text
    again, findings = parse_guideline(text, expected_id=gid, expected_topic=rule.topic)
    assert again.outside_votes == {"carl": -4} and again.harmful == 1 and not findings
    bad, findings = parse_guideline(text.replace("carl: -4", "carl: lots"), expected_id=gid,
                                    expected_topic=rule.topic)
    assert bad.outside_votes == {} and [f.code for f in findings] == ["outside-votes-type"]


def test_outsiders_do_not_decide_in_team_mode(workers):
    a, b = workers
    margin = a.guidelines.retire_margin
    gid = a.guidelines.add("Run migrations inside a transaction.", namespace="team").guideline_id
    for _ in range(5):
        a.scoped(CARL).rate(gid, helpful=False)
    rule = b.guidelines.get(gid)  # the other worker reads the row
    assert (rule.harmful, rule.outside_votes) == (1, {"carl": -5})
    statuses = [b.scoped(REVIEWER).rate(gid, helpful=False)["status"] for _ in range(margin)]
    assert statuses == ["active"] * (margin - 1) + ["retired"]
    rule = a.guidelines.get(gid)
    assert (rule.status, rule.harmful, rule.outside_votes) == ("retired", margin + 1,
                                                               {"carl": -5})


@pytest.mark.slow  # a server process
async def test_outsiders_votes_through_a_real_mcp_session(tmp_path):
    from mcp_http import bearer_session, call_ok
    from skillbank import Skillbank
    from skillbank.embeddings import HashEmbedding
    from skillbank.mcp_server.identity import add_principal
    from test_scope_faces import http_server

    root, path = tmp_path / "root", tmp_path / "tokens.toml"
    with Skillbank.open(root, embedding_function=HashEmbedding(), include_bundled=False) as bank:
        gid = bank.guidelines.add("Always run the database migrations inside a transaction.",
                                  namespace="team").guideline_id
    alice = add_principal(path, "alice", namespace="alice", role="contributor", reads=["team"])
    bob = add_principal(path, "bob", namespace="team", role="reviewer")
    async with http_server(root, path) as url:
        async with bearer_session(url, alice) as session:
            for _ in range(10):
                rated = await call_ok(session, "rate_memory", {"id": gid, "helpful": False})
            assert rated["counted"] is True and rated["status"] == "active"
            found = await call_ok(session, "search_guidelines",
                                  {"task": "database migrations transaction"})
            assert [(g["id"], g["harmful"]) for g in found["guidelines"]] == [(gid, 1)]
        async with bearer_session(url, bob) as session:
            rated = await call_ok(session, "rate_memory", {"id": gid, "helpful": False})
            assert rated["status"] == "active"  # his one vote is not the third


def test_migrate_keeps_each_sides_outside_voters():
    """`skillbank migrate` rerun: the root's outsiders join the team's (counted once each)."""
    from skillbank.team.migrate_guidelines import merged

    base = {"helpful": 0, "harmful": 1}
    root = {"helpful": 1, "harmful": 1, "outside_votes": {"dan": 2}}
    team = {"helpful": 0, "harmful": 2, "outside_votes": {"carl": -3}}
    out = merged(root, team, base)
    assert out["outside_votes"] == {"dan": 2, "carl": -3}
    assert (out["helpful"], out["harmful"]) == (1, 2)
