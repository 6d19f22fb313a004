"""No call tells a caller who may not review a namespace that another caller's pending item
exists: each answers exactly as for an id or wording that does not exist (session 33, the items
session 32 left after fix-pget).

docs/scope.md: a pending item is shown only to whoever may decide on it. Session 32 made `get`,
votes, marks and `rate_memory` of such an id "not found". Four ways still told it:
1. an untrusted client whose rule had another client's pending proposal's wording was answered
   "merged: same as gl-… '<its text>' (its pending proposal's wording); reinforcements now 1";
2. `approve`/`reject`/`retire` (and `forget`) of a pending id said "needs the reviewer role",
   where a made-up id is "not found";
3. `replaces=<a pending id>` said "that rule is pending" to a trusted contributor, and an
   untrusted client's replace of it was taken (a made-up id is "not found");
4. `experiences.distill(<a pending run>)` returned lesson ids.
A reviewer still sees, decides on, replaces and distills them; the join still makes one
proposal per wording. In process, through a client of an owner process, and through MCP.
"""

from __future__ import annotations

import pytest

from owner_client import bank_for
from skillbank.scope import Scope

RULE = "Always send the pecan invoices to account 4417-PRIVATE."
OTHER = "Always file the walnut receipts under folder 88-PRIVATE."
UNKNOWN_GL = "gl-000000000000"
UNKNOWN_EXP = "exp-000000000000"


def _views(bank):
    def view(principal, role, trusted=True):
        return bank.scoped(Scope(principal=principal, namespace="team", role=role,
                                 trusted=trusted))
    return (view("mal", "contributor", False), view("mal2", "contributor", False),
            view("tc", "contributor"), view("rev", "reviewer"))


def _refusal(call, item_id: str) -> tuple[str, str]:
    try:
        call(item_id)
    except Exception as exc:  # noqa: BLE001 - the answer is what is compared
        return type(exc).__name__, str(exc).replace(item_id, "<id>")
    raise AssertionError(f"{item_id} was accepted")


def _same_as_unknown(call, item_id: str, unknown: str) -> None:
    seen = _refusal(call, item_id)
    assert seen == _refusal(call, unknown)
    assert seen[0] == "NotFoundError"


@pytest.mark.parametrize("remote", [False, True], ids=["in-process", "client-of-owner"])
def test_joining_another_clients_proposal_is_answered_as_a_new_proposal(tmp_path, remote):
    """#1: before, "merged", "same as gl-… '…' (its pending proposal's wording);
    reinforcements now 1": someone had proposed these words, and how often."""
    with bank_for(tmp_path, remote) as bank:
        mal, mal2, _tc, rev = _views(bank)
        gid = mal.guidelines.add(RULE, topic="billing").guideline_id
        fresh = mal2.guidelines.add(OTHER, topic="billing")  # a wording nobody proposed
        joined = mal2.guidelines.add(RULE.upper().rstrip("."), topic="billing")
        assert (joined.action, joined.detail, joined.superseded_id, joined.nearest) == \
            (fresh.action, fresh.detail, fresh.superseded_id, fresh.nearest)
        assert joined.text == RULE.upper().rstrip(".")  # its own words, not the proposal's
        learnt = mal2.guidelines.learn(RULE)
        assert [e.action for e in learnt.entries] == ["pending"] and learnt.pending_review
        assert "reinforce" not in learnt.entries[0].detail and "same as" not in str(learnt)
        # The dedupe stays: one proposal per wording, with every caller's critique.
        pending = rev.guidelines.list(status="pending")
        assert sorted(g.text for g in pending) == sorted([RULE, OTHER])
        proposal = rev.guidelines.get(gid)
        assert len(proposal.sources) == 3 and proposal.text == RULE
        # The id it was told answers as the caller's own pending id does.
        assert joined.guideline_id == gid
        _same_as_unknown(mal2.guidelines.get, gid, UNKNOWN_GL)
        _same_as_unknown(mal2.guidelines.get, fresh.guideline_id, UNKNOWN_GL)


@pytest.mark.parametrize("remote", [False, True], ids=["in-process", "client-of-owner"])
def test_deciding_on_a_pending_item_one_may_not_review_is_not_found(tmp_path, remote):
    """#2: before, "approve gl-… needs the reviewer role for namespace 'team'" for a pending
    id, "no guideline 'gl-000000000000'" for a made-up one (experiences alike)."""
    with bank_for(tmp_path, remote) as bank:
        mal, mal2, tc, rev = _views(bank)
        gid = mal.guidelines.add(RULE, topic="billing").guideline_id
        eid = mal.experiences.record(task="Pay the pecan supplier", outcome="success",
                                     feedback="used the card ending 4417-PRIVATE")
        for view in (mal2, tc):
            for verb in ("approve", "reject", "retire"):
                _same_as_unknown(getattr(view.guidelines, verb), gid, UNKNOWN_GL)
            for verb in ("approve", "reject"):
                _same_as_unknown(getattr(view.experiences, verb), eid, UNKNOWN_EXP)
        # Forgetting: an untrusted client, or a contributor of another namespace that reads
        # this one (a trusted contributor of it may forget there, as before).
        _same_as_unknown(mal2.experiences.forget, eid, UNKNOWN_EXP)
        outsider = bank.scoped(Scope(principal="tc2", namespace="tc2", reads=("team",),
                                     role="contributor"))
        _same_as_unknown(outsider.guidelines.forget, gid, UNKNOWN_GL)
        _same_as_unknown(outsider.experiences.forget, eid, UNKNOWN_EXP)
        # Nothing changed, and a reviewer still decides.
        assert rev.guidelines.get(gid).status == "pending"
        assert rev.experiences.get(eid).status == "pending"
        assert rev.guidelines.approve(gid).status == "active"
        assert rev.experiences.reject(eid)["rejected"]


@pytest.mark.parametrize("remote", [False, True], ids=["in-process", "client-of-owner"])
def test_replacing_a_pending_rule_one_may_not_review_is_not_found(tmp_path, remote):
    """#3: before, "replaces='gl-…': that rule is pending, and only a reviewer …" to a trusted
    contributor, and an untrusted client's replace was taken ("would supersede gl-…")."""
    with bank_for(tmp_path, remote) as bank:
        mal, mal2, tc, rev = _views(bank)
        gid = mal.guidelines.add(RULE, topic="billing").guideline_id
        text = "Send the pecan invoices to account 5000."
        for view in (tc, mal2):
            _same_as_unknown(lambda i: view.guidelines.add(text, replaces=i), gid, UNKNOWN_GL)
            _same_as_unknown(lambda i: view.guidelines.learn(
                critique=text, candidates=[{"text": text, "replaces": i}]), gid, UNKNOWN_GL)
        # The call's own trusted=False narrows the local admin too.
        _same_as_unknown(lambda i: bank.guidelines.add(text, trusted=False, replaces=i),
                         gid, UNKNOWN_GL)
        assert rev.guidelines.list(status="pending") == [rev.guidelines.get(gid)]
        replaced = rev.guidelines.add(text, topic="billing", replaces=gid)
        assert replaced.superseded_id == gid  # a reviewer's replace of it still works


@pytest.mark.parametrize("remote", [False, True], ids=["in-process", "client-of-owner"])
def test_distilling_a_pending_run_one_may_not_review_is_not_found(tmp_path, remote):
    """#4: before, another client's pending run was distilled and its lesson ids returned."""
    with bank_for(tmp_path, remote) as bank:
        mal, mal2, tc, rev = _views(bank)
        eid = mal.experiences.record(task="Pay the pecan supplier", outcome="failure",
                                     feedback="Always check the account number first.")
        before = rev.experiences.list(kind="lesson", status="pending")
        for view in (mal2, tc):
            _same_as_unknown(view.experiences.distill, eid, UNKNOWN_EXP)
        assert rev.experiences.list(kind="lesson", status="pending") == before
        assert all(i.startswith("lsn-") for i in rev.experiences.distill(eid))


@pytest.mark.parametrize("remote", [False, True], ids=["in-process", "client-of-owner"])
async def test_an_untrusted_mcp_session_is_not_told_another_ones_proposal(tmp_path, remote):
    """#1 and #3 through MCP: `add_guideline` answered "merged" naming the proposal, and its
    `replaces=` took the pending id a made-up one is refused for."""
    from mcp import Client

    from skillbank.mcp_server import build_server

    with bank_for(tmp_path, remote) as bank:
        mal = bank.scoped(Scope(principal="mal", namespace=bank.settings.namespace,
                                role="contributor", trusted=False))
        gid = mal.guidelines.add(RULE, topic="billing").guideline_id
        async with Client(build_server(bank, trusted=False)) as untrusted:
            fresh = (await untrusted.call_tool("add_guideline", {
                "text": OTHER, "topic": "billing"})).structured_content
            joined = (await untrusted.call_tool("add_guideline", {
                "text": RULE, "topic": "billing"})).structured_content
            assert joined["action"] == fresh["action"] == "pending"
            assert joined["detail"] == fresh["detail"]
            answers = []
            for item in (gid, UNKNOWN_GL):
                got = await untrusted.call_tool("add_guideline", {
                    "text": "Send the pecan invoices to account 5000.", "replaces": item},
                    )
                assert got.is_error
                answers.append(got.content[0].text.replace(item, "<id>"))
            assert answers[0] == answers[1]
        assert len(bank.guidelines.get(gid).sources) == 2


@pytest.mark.parametrize("remote", [False, True], ids=["in-process", "client-of-owner"])
def test_a_proposal_that_replaces_another_rule_is_not_lost_in_a_join(tmp_path, remote):
    """Review of session 33: an untrusted `add(RULE, replaces=OLD)` worded as another client's
    proposal joined it and lost its `replaces=` (the reviewer never saw OLD was to go), and its
    answer (no `superseded_id`) differed from a fresh proposal's: an oracle again. Such a rule
    is now a proposal of its own, answered as the fresh one is."""
    with bank_for(tmp_path, remote) as bank:
        mal, mal2, _tc, rev = _views(bank)
        old = rev.guidelines.add(OTHER, topic="billing").guideline_id
        alone = mal2.guidelines.add(RULE, topic="billing", replaces=old)
        rev.guidelines.reject(alone.guideline_id)  # gone: the next proposal of RULE is fresh
        mal.guidelines.add(RULE, topic="billing")  # another client proposes the same words
        joined = mal2.guidelines.add(RULE, topic="billing", replaces=old)
        assert (joined.action, joined.superseded_id, joined.detail) == \
            (alone.action, alone.superseded_id, alone.detail)
        assert rev.guidelines.get(joined.guideline_id).supersedes == [old]
