"""Proposal branch names (issue 24, review): two principals never share one. The slug of a
principal that is not branch-safe carries a hash of it; a principal that merely *looks* like
such a slug (`alice-<that hash>`, a name anyone can compute and sign up as) must not get the
other person's branch — it would continue their proposal and list it as its own."""

from __future__ import annotations

import hashlib

from skillbank.team.skills_repo import principal_slug, proposal_branch


def test_a_principal_named_like_anothers_slug_gets_its_own_branch():
    victim = principal_slug("Alice")
    assert victim.startswith("alice-")
    assert principal_slug(victim) != victim
    assert proposal_branch(victim, "deploy") != proposal_branch("Alice", "deploy")
    # Brute force over names that slug alike ("alice-…" + any punctuation) needs the whole
    # hash to match, not a few hex digits.
    tail = victim.rsplit("-", 1)[1]
    assert len(tail) >= 12
    assert tail == hashlib.sha256(b"Alice").hexdigest()[:len(tail)]
    assert principal_slug("alice") == "alice" and principal_slug("bob.smith") == "bob.smith"
