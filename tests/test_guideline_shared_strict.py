"""A personal rule hides a shared rule only when it says it replaces all of it (hunt-xns
review 3, session 38; the change of tests/test_guideline_shared_contradiction.py).

#1 "Do not write commit messages longer than 72 characters." hid the team's "Write commit
messages in English.", and "Don't add type hints to test functions." (an exception) hid
"Always add type hints to public functions.": the in-namespace opposition test (stance cues and
`relate`) was used across namespaces. #2 that test called `relate` per neighbour per read
namespace under the write lock. #3 `playbook` (MCP `guidelines://<topic>`, CLI `guidelines
show --topic`) served both rules. #4 the team rewording its rule (`replaces=`) served both again.
#5 approving a proposal folded into her active rule lost its override. #6 neither `guidelines
show` nor the rule page said a rule is overridden. Real parts: an embedded root, hash embedding.
"""

from __future__ import annotations

import hashlib
import io
from typing import Any

import pytest

from skillbank import Skillbank
from skillbank.distill.rule_distiller import RuleDistiller
from skillbank.embeddings import HashEmbedding
from skillbank.scope import Scope

from test_guideline_shared_contradiction import (  # noqa: F401 - one cast for both files
    ALICE, ALICE_AGENT, ALICE_LEAD, BOB, HERS, LEAD, TASK, TEAM_RULE)


def _open(root: Any, **kw: Any) -> Skillbank:
    return Skillbank.open(root, embedding_function=HashEmbedding(), include_bundled=False,
                          sync=False, **kw)


def _searched(bank: Any, scope: Scope, task: str) -> list[str]:
    return [h.id for h in bank.scoped(scope).guidelines.search(task, k=8)]


@pytest.mark.parametrize("team_rule, hers, task", [
    ("Write commit messages in English.",
     "Do not write commit messages longer than 72 characters.", "write a commit message"),
    ("Write commit messages in English.",
     "From now on, do not write commit messages longer than 72 characters.",
     "write a commit message"),
    ("Always add type hints to public functions.", "Don't add type hints to test functions.",
     "add type hints"),
    ("Always add type hints to public functions.",
     "From now on, don't add type hints to test functions.", "add type hints"),
    (TEAM_RULE, "From now on, do not write a changelog entry for internal refactors.", TASK),
])
def test_a_narrower_or_other_rule_hides_no_team_rule(tmp_path, team_rule, hers, task):
    bank = _open(tmp_path / "root")
    try:
        team = bank.scoped(LEAD).guidelines.add(team_rule).guideline_id
        entry = bank.scoped(ALICE).guidelines.learn(hers).entries[0]
        assert bank.scoped(ALICE).guidelines.get(entry.guideline_id).overrides == []
        assert team in _searched(bank, ALICE, task)
        assert not any(n.get("contradicted") for n in entry.nearest)
        assert "not served" not in entry.detail
    finally:
        bank.close()


@pytest.mark.parametrize("hers", [HERS, "Stop writing changelog entries.",
                                  "No longer write a changelog entry."])
def test_an_explicit_replacement_of_the_whole_rule_hides_it_for_her_only(tmp_path, hers):
    bank = _open(tmp_path / "root")
    try:
        team = bank.scoped(LEAD).guidelines.add(TEAM_RULE).guideline_id
        entry = bank.scoped(ALICE).guidelines.add(hers)
        assert bank.scoped(ALICE).guidelines.get(entry.guideline_id).overrides == [team]
        assert team not in _searched(bank, ALICE, TASK)
        assert team in _searched(bank, BOB, TASK)
    finally:
        bank.close()


class _Counting(RuleDistiller):
    def __init__(self) -> None:
        super().__init__()
        self.calls = 0

    def relate(self, new_rule: str, old_rule: str, *, similarity: float) -> str:
        self.calls += 1
        return super().relate(new_rule, old_rule, similarity=similarity)


def test_the_shared_check_asks_the_distiller_nothing(tmp_path):
    """Reading 6 namespaces costs the learn no `relate` call (review 3 #2: one per neighbour
    per namespace, under the write lock)."""
    distiller = _Counting()
    bank = _open(tmp_path / "root", distiller=distiller)
    spaces = [f"ns{i}" for i in range(6)]
    try:
        for ns in spaces:
            g = bank.scoped(Scope(principal=f"lead-{ns}", namespace=ns, role="reviewer",
                                  face="test")).guidelines
            for rule in ("Always write a changelog entry in {}.", "Keep log lines short in {}.",
                         "Review the release notes of {}."):
                g.add(rule.format(ns))
        calls = {}
        for name, reads in (("none", ()), ("six", tuple(spaces))):
            me = Scope(principal="me", namespace=f"me-{name}", reads=reads, role="contributor",
                       face="test")
            distiller.calls = 0
            bank.scoped(me).guidelines.learn(
                "From now on, do not write release notes for internal changes.")
            calls[name] = distiller.calls
        assert calls["six"] == calls["none"], calls
    finally:
        bank.close()


def test_the_playbook_and_its_digests_leave_out_the_overridden_rule(tmp_path):
    bank = _open(tmp_path / "root")
    try:
        team = bank.scoped(LEAD).guidelines.add(TEAM_RULE, topic="writing").guideline_id
        mine = bank.scoped(ALICE).guidelines.add(HERS, topic="writing").guideline_id
        hers = bank.scoped(ALICE).guidelines
        assert team not in hers.playbook("writing") and mine in hers.playbook("writing")
        assert team not in hers.playbook()
        assert team in bank.scoped(BOB).guidelines.playbook("writing")
        digest = hers.playbook_digests()["writing"]
        assert digest == hashlib.sha256(hers.playbook("writing").encode()).hexdigest()
    finally:
        bank.close()


def test_a_reworded_team_rule_stays_overridden_while_hers_still_replaces_it(tmp_path):
    bank = _open(tmp_path / "root")
    try:
        team = bank.scoped(LEAD).guidelines.add(TEAM_RULE).guideline_id
        bank.scoped(ALICE).guidelines.learn(HERS)
        lead = bank.scoped(LEAD).guidelines
        reworded = lead.add("Always write a changelog entry for every change.",
                            replaces=team).guideline_id
        assert lead.get(team).superseded_by == reworded
        assert reworded not in _searched(bank, ALICE, TASK)
        assert reworded in _searched(bank, BOB, TASK)
        # Replaced by another rule altogether: hers does not replace that one, it is served.
        other = lead.add("Write the changelog in English.", replaces=reworded).guideline_id
        assert other in _searched(bank, ALICE, "write the changelog")
    finally:
        bank.close()


def test_approving_a_proposal_folded_into_her_rule_keeps_its_override(tmp_path):
    bank = _open(tmp_path / "root")
    try:
        mine = bank.scoped(ALICE).guidelines.learn(HERS).entries[0].guideline_id  # before
        team = bank.scoped(LEAD).guidelines.add(TEAM_RULE).guideline_id  # the team's rule
        proposal = bank.scoped(ALICE_AGENT).guidelines.learn(HERS).entries[0]
        assert proposal.action == "pending" and proposal.guideline_id != mine
        assert bank.scoped(ALICE_LEAD).guidelines.get(proposal.guideline_id).overrides == [team]
        assert team in _searched(bank, ALICE, TASK)  # a proposal hides nothing
        bank.scoped(ALICE_LEAD).guidelines.approve(proposal.guideline_id)
        assert bank.scoped(ALICE).guidelines.get(mine).overrides == [team]
        assert team not in _searched(bank, ALICE, TASK) and team in _searched(bank, BOB, TASK)
    finally:
        bank.close()


def test_show_and_the_rule_page_name_the_override_both_ways(tmp_path):
    from rich.console import Console

    from skillbank.cli.memory import render_guideline
    from skillbank.ui.views import guideline_detail

    bank = _open(tmp_path / "root")
    try:
        team = bank.scoped(LEAD).guidelines.add(TEAM_RULE).guideline_id
        mine = bank.scoped(ALICE).guidelines.learn(HERS).entries[0].guideline_id
        reviewer = bank.scoped(Scope(principal="rev", namespace="team", reads=("alice",),
                                     role="reviewer", face="test"))
        rules = {r.id: r for r in reviewer.guidelines.list(namespace="*")}

        class Out:
            console = Console(file=io.StringIO(), width=200)

            def print(self, thing: Any) -> None:
                self.console.print(thing)

        for gid, said in ((mine, f"{team} (namespace team)"),
                          (team, f"namespace alice (overridden by {mine})")):
            out = Out()
            render_guideline(out, reviewer.guidelines.get(gid), rules)
            assert said in out.console.file.getvalue()
        page = guideline_detail(reviewer, team)
        assert [r.id for r in page["overridden_by"]] == [mine] and page["overrides"] == []
        assert [r.id for r in guideline_detail(reviewer, mine)["overrides"]] == [team]
        # A viewer who does not read alice's namespace is told nothing about her rule.
        bob = bank.scoped(BOB)
        assert guideline_detail(bob, team)["overridden_by"] == []
        from test_ui_security import client
        page = client(bank)[0].get(f"/guidelines/{team}")
        assert page.status_code == 200 and 'id="overrides"' in page.text and mine in page.text
    finally:
        bank.close()


def test_her_rewording_of_her_rule_keeps_the_override_it_still_holds(tmp_path):
    """Her rule replaced by her own rewording (`replaces=`) that names no change itself: the
    replace is the explicit act, the rewording still opposes and covers the team's rule."""
    bank = _open(tmp_path / "root")
    try:
        team = bank.scoped(LEAD).guidelines.add(TEAM_RULE).guideline_id
        mine = bank.scoped(ALICE).guidelines.learn(HERS).entries[0].guideline_id
        again = bank.scoped(ALICE).guidelines.add("Skip the changelog entry.", replaces=mine)
        assert bank.scoped(ALICE).guidelines.get(again.guideline_id).overrides == [team]
        assert team not in _searched(bank, ALICE, TASK) and team in _searched(bank, BOB, TASK)
        # Reworded into something that no longer opposes it: the team's rule is served again.
        other = bank.scoped(ALICE).guidelines.add("Write the changelog entry in English.",
                                                  replaces=again.guideline_id)
        assert bank.scoped(ALICE).guidelines.get(other.guideline_id).overrides == []
        assert team in _searched(bank, ALICE, TASK)
    finally:
        bank.close()
