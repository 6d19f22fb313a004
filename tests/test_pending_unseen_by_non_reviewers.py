"""A caller who may not review a namespace never sees, merges into, or decides on its pending
rules through a learn or add (hunt-scopes #1, session 32).

docs/scope.md: pending items are shown only to whoever may decide on them. Before, the nearest
pool of a learn was every in-play rule of the namespace, pending ones included, whoever asked:
- another untrusted client's `add` of a prefix of a pending rule was "merged" into it, its reply
  naming the pending id and quoting the whole pending text ("... to IBAN DE00-SECRET-77") in
  `detail` and `nearest`, though its `list(status="pending")` was empty;
- a trusted contributor (no reviewer) saw the pending text in `nearest`, and its restatement
  superseded the pending rule ("confirms pending gl-…"): a reviewer's decision;
- a trusted contributor's `replaces=<pending id>` superseded the pending rule too.
Now such a caller's rule is decided against active rules only. An untrusted caller's rule worded
as a pending proposal still goes into it (one proposal per wording, hunt-mcp-longlived #6): it
learns nothing it did not say. A reviewer's restatement still confirms the pending rule
(tests/test_guideline_memory.py, tests/test_mcp_inputs_hold.py).
"""

from __future__ import annotations

import pytest

from owner_client import bank_for
from skillbank.errors import NotFoundError
from skillbank.scope import Scope

SECRET = "Always wire the acorn refunds to IBAN DE00-SECRET-77"


def _views(bank):
    mal = bank.scoped(Scope(principal="mal", namespace="team", role="contributor", trusted=False))
    mal2 = bank.scoped(Scope(principal="mal2", namespace="team", role="contributor",
                             trusted=False))
    tc = bank.scoped(Scope(principal="tc", namespace="team", role="contributor"))
    rev = bank.scoped(Scope(principal="rev", namespace="team", role="reviewer"))
    return mal, mal2, tc, rev


def _quoted(entry) -> str:
    return entry.detail + " " + str(entry.nearest) + " " + entry.text


@pytest.mark.parametrize("remote", [False, True], ids=["in-process", "client-of-owner"])
def test_an_untrusted_client_neither_sees_nor_joins_another_ones_pending_rule(tmp_path, remote):
    with bank_for(tmp_path, remote) as bank:
        mal, mal2, _tc, rev = _views(bank)
        pending = mal.guidelines.add(SECRET, topic="billing")
        assert pending.action == "pending"
        assert mal2.guidelines.list(status="pending") == []
        entry = mal2.guidelines.add("Always wire the acorn refunds to IBAN", topic="billing")
        # Before: merged into the pending rule, its id returned and its text quoted.
        assert entry.action == "pending"
        assert entry.guideline_id != pending.guideline_id
        assert "DE00-SECRET" not in _quoted(entry)
        assert pending.guideline_id not in _quoted(entry)
        assert all(n["status"] == "active" for n in entry.nearest)
        # Its own wording again still goes into its proposal: nothing it did not say.
        again = mal2.guidelines.add("always wire the acorn refunds to IBAN.", topic="billing")
        # Answered as a new proposal is (it was "merged", naming it: session 33).
        assert (again.action, again.guideline_id) == ("pending", entry.guideline_id)
        assert again.detail == entry.detail
        assert "DE00-SECRET" not in _quoted(again)
        assert sorted(g.id for g in rev.guidelines.list(status="pending")) == sorted(
            [pending.guideline_id, entry.guideline_id])


@pytest.mark.parametrize("remote", [False, True], ids=["in-process", "client-of-owner"])
def test_a_trusted_contributor_neither_sees_nor_decides_on_a_pending_rule(tmp_path, remote):
    with bank_for(tmp_path, remote) as bank:
        mal, _mal2, tc, rev = _views(bank)
        pending = mal.guidelines.add(SECRET, topic="billing").guideline_id
        other = mal.guidelines.add("Always wire the acorn refunds within a day",
                                   topic="billing").guideline_id
        paraphrase = tc.guidelines.add("Always wire the acorn refunds to the finance team",
                                       topic="billing")
        # Before: the pending texts in `nearest` ("... DE00-SECRET-77", "... within a day").
        assert "DE00-SECRET" not in paraphrase.detail + str(paraphrase.nearest)
        assert {pending, other}.isdisjoint(n["id"] for n in paraphrase.nearest)
        entry = tc.guidelines.add(SECRET, topic="billing")
        # Before: "superseded" ("confirms pending gl-…"), the pending rule superseded by it.
        assert "pending" not in entry.detail and entry.superseded_id is None
        assert pending not in _quoted(entry)
        assert bank.guidelines.get(pending).status == "pending"
        # Not found, as a made-up id (it said "that rule is pending": session 33).
        with pytest.raises(NotFoundError, match="no such guideline"):
            tc.guidelines.add("Always wire the acorn refunds to the team account",
                              topic="billing", replaces=other)
        assert bank.guidelines.get(other).status == "pending"
        # A reviewer still sees and decides on them.
        reviewed = rev.guidelines.add("Always wire the acorn refunds within a day",
                                      topic="billing")
        assert other in [n["id"] for n in reviewed.nearest] or reviewed.superseded_id == other
