"""Drafts of one namespace set neither block nor reveal another's (hunt-untrusted, session 27).

#2 MEDIUM: a contributor's pending revision of a shared skill, drawn from her own failed runs,
   held the only slot a revision of that skill had (its name): the team reviewer's `propose`,
   with two failed team runs and lessons the skill lacked, wrote nothing and said "Nothing new
   to propose"; the team may not see, adopt or discard her draft, so its evidence waited on
   someone who reviews her namespace. So did the team's runs drawn into a draft of hers that
   the team may not read (the ledger said they were covered).
#3 LOW: a new-skill draft came back `export-table-parquet-2`, telling the team that another
   namespace held a draft `export-table-parquet` (and roughly what her private runs were about).

Now a draft drawn from namespaces other than the bank's own is named `<skill>-<tag>` (the tag
from those namespaces alone) and adopting it writes `<skill>` (a record naming any other folder
is not a draft). In process and through a client
of another process that owns the root; `propose_skills` through real MCP sessions of two
principals of a tokens file.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from owner_client import bank_for
from skillbank.errors import AlreadyExistsError, InvalidInputError
from skillbank.scope import Scope

REMOTE = pytest.mark.parametrize("remote", [False, True], ids=["in-process", "client-of-owner"])
LEAD = Scope(principal="lead", namespace="team", role="reviewer", face="test")
EVE = Scope(principal="eve", namespace="eve", role="contributor", face="test")
EVE_LEAD = Scope(principal="eve-lead", namespace="eve", role="reviewer", face="test")
ALICE = Scope(principal="alice", namespace="alice", reads=("team",), role="contributor",
              face="test")
SKILL = "deploy-service"
EVES = ["Pin the image tag to the commit sha.", "Check the rollout status before leaving."]
TEAMS = ["Run the database migrations before the rollout.",
         "Scale the old replica set down only after health checks pass."]
ALICES = ["Warm the cache before switching traffic.", "Keep the previous release for rollback."]


def shared_skill(bank) -> None:
    bank.skills.create(SKILL, "Deploy a service to the staging cluster when asked to deploy.",
                       "# Deploy\n\n1. Build the image.\n2. Push it.\n3. kubectl apply.\n")


def fail(view, lessons: list[str], service: str) -> list[str]:
    return [view.experiences.record(task=f"Deploy the {service} service to staging (try {i})",
                                    outcome="failure", tags=[f"skill:{SKILL}"], lessons=[lesson])
            for i, lesson in enumerate(lessons)]


def text(draft) -> str:
    return Path(draft.path).read_text(encoding="utf-8")


def added(draft) -> str:
    return "\n".join(line for line in draft.diff.splitlines() if line.startswith("+"))


@REMOTE
def test_another_namespaces_pending_revision_leaves_the_team_its_own(tmp_path, remote):
    with bank_for(tmp_path, remote) as bank:
        shared_skill(bank)
        eve, lead = bank.scoped(EVE), bank.scoped(LEAD)
        fail(eve, EVES, "billing")
        (hers,) = eve.skills.propose()
        fail(lead, TEAMS, "search")

        (ours,) = lead.skills.propose()  # was [] ("Nothing new to propose")
        assert ours.revises == ours.skill == SKILL and ours.namespaces == ["team"]
        assert ours.name != hers.name and ours.name.startswith(f"{SKILL}-team-")
        assert all(lesson in added(ours) for lesson in TEAMS)
        assert not any(lesson in text(ours) for lesson in EVES)
        # each sees and decides on its own revision only; hers is untouched
        assert [d.name for d in lead.skills.drafts()] == [ours.name]
        assert [d.name for d in eve.skills.drafts()] == [hers.name]
        assert text(eve.skills.draft(hers.name)) == text(hers)
        assert lead.skills.propose() == []  # its own pending revision: nothing new

        assert lead.skills.adopt(ours.name).name == SKILL  # writes the skill, not a new one
        body = bank.skills.load(SKILL).body
        assert all(lesson in body for lesson in TEAMS) and not any(l in body for l in EVES)
        assert [d.name for d in bank.skills.drafts()] == [hers.name]

        # hers, stale now, is drawn again from the skill as it is, under its name
        (again,) = eve.skills.propose()
        assert again.name == hers.name and all(lesson in added(again) for lesson in EVES)
        assert bank.scoped(EVE_LEAD).skills.adopt(hers.name).name == SKILL
        body = bank.skills.load(SKILL).body
        assert all(lesson in body for lesson in TEAMS + EVES)
        assert bank.skills.drafts() == []


def parquet_runs(view, tables: list[str]) -> None:
    for table in tables:
        view.experiences.record(task=f"Export the {table} table to a parquet file",
                                outcome="success", when_to_use="Exporting tables to parquet",
                                steps=[{"action": "query the table"},
                                       {"action": "write parquet with pyarrow"}])


@REMOTE
def test_a_new_drafts_name_does_not_depend_on_drafts_the_caller_may_not_read(tmp_path, remote):
    named = {}
    for eve_first in (True, False):
        where = tmp_path / f"eve-first-{eve_first}"
        where.mkdir()
        with bank_for(where, remote) as bank:
            eve, lead = bank.scoped(EVE), bank.scoped(LEAD)
            if eve_first:
                parquet_runs(eve, ["orders", "refunds", "shipments"])
                (hers,) = eve.skills.propose()
            parquet_runs(lead, ["customers", "products", "suppliers"])
            (ours,) = lead.skills.propose()
            named[eve_first] = (ours.name, ours.skill)
            assert "-2" not in ours.name and ours.name.startswith(f"{ours.skill}-team-")
            if not eve_first:
                continue
            assert hers.skill == ours.skill and hers.name != ours.name
            assert lead.skills.adopt(ours.name).name == ours.skill
            # hers would write the same skill: refused plainly, and kept
            with pytest.raises(AlreadyExistsError, match="already exists"):
                bank.scoped(EVE_LEAD).skills.adopt(hers.name)
            assert [d.name for d in eve.skills.drafts()] == [hers.name]
    assert named[True] == named[False]  # with or without eve's draft: the same name


@REMOTE
def test_a_draft_that_drew_the_teams_runs_but_the_team_may_not_read_blocks_nothing(tmp_path,
                                                                                   remote):
    with bank_for(tmp_path, remote) as bank:
        shared_skill(bank)
        alice, lead = bank.scoped(ALICE), bank.scoped(LEAD)
        fail(lead, TEAMS, "search")
        fail(alice, ALICES, "billing")
        # (min_support 5: the four failed runs are not also drafted as a new skill)
        (mixed,) = alice.skills.propose(min_support=5)  # her runs and the team's
        assert mixed.namespaces == ["alice", "team"] and lead.skills.drafts() == []

        (ours,) = lead.skills.propose(min_support=5)  # was []: the ledger said they were drawn
        assert ours.namespaces == ["team"] and ours.revises == SKILL
        assert all(lesson in added(ours) for lesson in TEAMS)
        assert not any(lesson in text(ours) for lesson in ALICES)
        assert {d.name for d in alice.skills.drafts()} == {mixed.name, ours.name}

        # a person's edit is a valid skill of the name it becomes, not of the draft's name
        edited = text(ours).replace("kubectl apply.", "kubectl apply --wait.")
        with pytest.raises(InvalidInputError, match="not a valid skill"):
            lead.skills.edit_draft(ours.name, edited.replace(f"name: {SKILL}",
                                                             f"name: {ours.name}"))
        assert lead.skills.edit_draft(ours.name, edited).skill == SKILL
        assert "--wait" in lead.skills.adopt(ours.name).body


@REMOTE
def test_a_record_naming_a_skill_outside_the_library_is_not_a_draft(tmp_path, remote):
    with bank_for(tmp_path, remote) as bank:
        parquet_runs(bank.scoped(LEAD), ["customers", "products", "suppliers"])
        (ours,) = bank.scoped(LEAD).skills.propose()
        meta = Path(ours.path).parent / ".draft.json"
        meta.write_text(meta.read_text().replace(f'"skill": "{ours.skill}"',
                                                 '"skill": "../../escaped"'))
        assert bank.skills.drafts() == []  # as a record naming another folder: never adopted
        meta.write_text(meta.read_text().replace('"../../escaped"', f'"{ours.skill}"'))
        assert bank.skills.adopt(ours.name).name == ours.skill


@pytest.mark.slow  # a server process
async def test_two_principals_each_get_their_revision_over_mcp(tmp_path):
    from mcp_http import bearer_session, call_ok, serving_principals

    principals = {"lead": ("team", "reviewer", []), "eve": ("eve", "contributor", [])}
    with serving_principals(tmp_path, principals) as (url, tokens, _):
        async with bearer_session(url, tokens["lead"]) as lead:
            await call_ok(lead, "save_skill", {
                "name": SKILL, "body": "1. Build the image.\n2. Push it.\n3. kubectl apply.",
                "description": "Deploy a service to the staging cluster when asked to deploy."})
        async with bearer_session(url, tokens["eve"]) as eve:
            for i, feedback in enumerate(EVES):
                await call_ok(eve, "record_experience", {
                    "task": f"Deploy the billing service to staging (try {i})",
                    "outcome": "failure", "tags": [f"skill:{SKILL}"], "feedback": feedback})
            hers = (await call_ok(eve, "propose_skills", {}))["drafts"]
        async with bearer_session(url, tokens["lead"]) as lead:
            for i, feedback in enumerate(TEAMS):
                await call_ok(lead, "record_experience", {
                    "task": f"Deploy the search service to staging (try {i})",
                    "outcome": "failure", "tags": [f"skill:{SKILL}"], "feedback": feedback})
            answer = await call_ok(lead, "propose_skills", {})
    assert [(d["revises"], d["skill"]) for d in hers] == [(SKILL, SKILL)]
    (ours,) = answer["drafts"]  # was none: "Nothing new to propose"
    assert answer["pending_review"] and ours["revises"] == ours["skill"] == SKILL
    assert ours["name"] != hers[0]["name"] and ours["name"] in ours["path"]
    assert all(lesson in ours["diff"] for lesson in TEAMS)
    assert not any(lesson in ours["diff"] for lesson in EVES)


# ------------------------------------------------------------ the second review (session 27)

@REMOTE
def test_runs_of_a_skill_another_namespace_got_adopted_draw_no_unadoptable_draft(tmp_path,
                                                                                  remote):
    """review2 #1: the tagged draft's name was looked up as a skill, so once the team's draft
    of the same skill was adopted, eve's kind was drawn again after every discard as a draft
    nobody could adopt ("already exists")."""
    with bank_for(tmp_path, remote) as bank:
        eve, lead, eve_lead = bank.scoped(EVE), bank.scoped(LEAD), bank.scoped(EVE_LEAD)
        parquet_runs(eve, ["orders", "refunds", "shipments"])
        (hers,) = eve.skills.propose()
        parquet_runs(lead, ["customers", "products", "suppliers"])
        (ours,) = lead.skills.propose()
        lead.skills.adopt(ours.name)
        eve_lead.skills.discard(hers.name)
        parquet_runs(eve, ["returns", "coupons", "payouts", "ledgers"])
        assert [d.skill for d in eve.skills.propose() if d.revises is None] == []


@REMOTE
def test_revisions_of_two_long_skill_names_keep_apart(tmp_path, remote):
    """review2 #3: a namespaced name was cut to fit 64 characters, so two skills sharing their
    first 52 characters got one revision name, the second written over the first."""
    long = "deploy-the-payment-service-to-the-staging-kubernetes-cluster-"
    with bank_for(tmp_path, remote) as bank:
        lead = bank.scoped(LEAD)
        for region in ("eu", "us"):
            bank.skills.create(long + region, f"Deploy payments to the {region} staging cluster.",
                               "# Deploy\n\n1. Build.\n2. kubectl apply.\n")
            for i, lesson in enumerate([f"Pin the {region} image tag.",
                                        f"Check the {region} rollout status."]):
                lead.experiences.record(task=f"Deploy payments to {region} staging (try {i})",
                                        outcome="failure", tags=[f"skill:{long + region}"],
                                        lessons=[lesson])
        written = lead.skills.propose(min_support=5)
        assert sorted(d.skill for d in written) == [long + "eu", long + "us"]
        assert len({d.name for d in written}) == 2 and all(len(d.name) <= 64 for d in written)
        assert sorted(d.skill for d in lead.skills.drafts()) == [long + "eu", long + "us"]


@REMOTE
def test_a_kind_drawn_again_from_the_banks_own_namespace_is_named_as_its_skill(tmp_path,
                                                                               remote):
    """review2 #4: drawn first from mixed namespaces (a tagged name), adopted, deleted, then
    drawn from the bank's own runs, the draft's skill was the old tagged name."""
    boss = Scope(principal="boss", namespace="default", reads=("alice",), role="reviewer",
                 face="test")
    own = Scope(principal="own", namespace="default", role="reviewer", face="test")
    with bank_for(tmp_path, remote) as bank:
        boss, own = bank.scoped(boss), bank.scoped(own)
        parquet_runs(own, ["orders", "refunds"])
        parquet_runs(bank.scoped(Scope(principal="alice", namespace="alice", face="test")),
                     ["shipments"])
        (mixed,) = boss.skills.propose()
        assert mixed.name != mixed.skill
        boss.skills.adopt(mixed.name)
        bank.skills.delete(mixed.skill)
        parquet_runs(own, ["invoices"])
        drawn = [d for d in own.skills.propose() if d.revises is None]
        assert [(d.name, d.skill) for d in drawn] == [(mixed.skill, mixed.skill)]
