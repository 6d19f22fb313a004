"""A scope reviews only namespaces it reads: refused where it is made (hunt-scopes #2, s. 32).

docs/scope.md: `reviews` is "only namespaces it reads". `Scope(namespace="team",
role="reviewer", reviews=("team", "bob"))` with no read of bob was accepted: it wrote rules and
experiences into bob (a reviewer writes where it reviews), and a learn's `nearest` quoted bob's
rules, active and pending, though `list(namespace="bob")` was empty. A hand-edited tokens file
with such `reviews` was loaded by the server (`/readyz` in force), though `tokens add` refused
it. Now `Scope` refuses it with InvalidInputError (also a scope sent over the wire), and reading
the tokens file reports it as `tokens add` does: one check, `scope.unread_reviews`.
"""

from __future__ import annotations

import os

import pytest

from owner_client import bank_for
from skillbank.errors import InvalidInputError, PermissionDeniedError
from skillbank.mcp_server.identity import TokensFile, TokensFileError, hash_token
from skillbank.scope import Scope


def test_a_scope_reviewing_a_namespace_it_does_not_read_is_refused():
    for reviews, reads in ((("team", "bob"), ()), (("bob",), ("team",)), (("*",), ("team",))):
        with pytest.raises(InvalidInputError, match="reviews only namespaces it reads") as err:
            Scope(principal="rev", namespace="team", role="reviewer", reads=reads,
                  reviews=reviews)
        assert "'bob'" in str(err.value) or "'*'" in str(err.value)
    with pytest.raises(InvalidInputError, match="does not read 'bob'"):
        Scope.from_wire({"principal": "rev", "namespace": "team", "role": "reviewer",
                         "reviews": ["bob"]})  # what an owner process is sent
    # What it reads it may review: its own namespace, a shared one, or all with "*".
    assert Scope(principal="rev", namespace="team", role="reviewer",
                 reviews=("team",)).can_review("team")
    assert Scope(principal="rev", namespace="team", role="reviewer", reads=("bob",),
                 reviews=("bob",)).can_review("bob")
    assert Scope(principal="rev", namespace="team", role="reviewer", reads=("*",),
                 reviews=("bob",)).can_review("bob")


@pytest.mark.parametrize("remote", [False, True], ids=["in-process", "client-of-owner"])
def test_a_reviewer_writes_only_where_it_reads(tmp_path, remote):
    """The write that leaked before is refused for every scope that can still be made."""
    with bank_for(tmp_path, remote) as bank:
        rev = bank.scoped(Scope(principal="rev", namespace="team", role="reviewer",
                                reviews=("team",)))
        with pytest.raises(PermissionDeniedError):
            rev.guidelines.add("Injected rule into bob", namespace="bob")
        with pytest.raises(PermissionDeniedError):
            rev.experiences.record(task="Injected run", outcome="success", namespace="bob")
        assert bank.guidelines.list(namespace="bob") == []


def _write(path, reviews: str) -> None:
    path.write_text(f'[principals.rev]\nsha256 = "{hash_token("sbk_rev")}"\n'
                    f'namespace = "team"\nrole = "reviewer"\nreviews = {reviews}\n')
    os.chmod(path, 0o600)


def test_a_hand_edited_tokens_file_reviewing_unread_namespaces_is_a_problem(tmp_path):
    path = tmp_path / "tokens.toml"
    _write(path, '["team", "bob"]')
    # Before: loaded, rev's scope reviewing bob; now refused at start-up, as `tokens add` does.
    with pytest.raises(TokensFileError, match="principal 'rev'.*does not read 'bob'"):
        TokensFile(path)
    _write(path, '["team"]')
    tokens = TokensFile(path)
    assert tokens.lookup("sbk_rev").scope().can_review("team")
    _write(path, '["team", "bob"]')
    os.utime(path, ns=(1, 1))  # another version of the file, whatever the clock's resolution
    status = tokens.status()  # a broken edit while it runs: the last good version, said
    assert not status["in_force"] and "does not read 'bob'" in status["problem"]
    assert not tokens.lookup("sbk_rev").scope().can_review("bob")


def test_an_oidc_group_s_reviews_count_where_the_caller_reads():
    """Groups' reviews are a union, as their reads: a caller in a group reviewing `team` but in
    none reading it reviews nothing there (its scope would be refused, every token a failure)."""
    from skillbank.team.oidc_config import OidcConfig

    config = OidcConfig.from_table({
        "issuer": "https://issuer.example", "audience": "skillbank", "default_role": "reader",
        "groups": {"leads": {"role": "reviewer", "reviews": ["team", "ops"]},
                   "platform": {"reads": ["team"]}}}, "skillbank.toml")
    both = config.scope_for({"sub": "ann", "groups": ["leads", "platform"]})
    assert both.can_review("team") and not both.can_review("ops")
    lead = config.scope_for({"sub": "bo", "groups": ["leads"]})
    assert not lead.can_review("team") and not lead.can_review("ops")


@pytest.mark.parametrize("role", ["reviewer", "admin"])
def test_an_oidc_caller_whose_granted_reviews_are_all_unread_reviews_nothing(role):
    """Review 1 #1, session 32: dropping a group's unread `reviews` left `reviews=()`, which
    means "everything it reads": a caller in `platform` (reads team-platform) and `secops-leads`
    (reviewer of secops, no reads) became a reviewer of alice and team-platform, which no group
    granted. Now a caller whose granted reviews are all dropped reviews nothing (a contributor)."""
    from skillbank.team.oidc_config import OidcConfig

    config = OidcConfig.from_table({
        "issuer": "https://issuer.example", "audience": "skillbank", "namespace_claim": "ns",
        "groups": {"platform": {"reads": ["team-platform"]},
                   "secops-leads": {"role": role, "reviews": ["secops"]}}}, "skillbank.toml")
    scope = config.scope_for({"sub": "alice", "ns": "alice",
                              "groups": ["platform", "secops-leads"]})
    assert scope.reviewable == ()
    for namespace in ("team-platform", "alice", "secops"):
        assert not scope.can_review(namespace)
    assert not scope.can_change("team-platform")
    assert scope.role.value == "contributor" and scope.can_change("alice")  # its own, still
    # A grant it can use is kept as granted, no wider.
    config = OidcConfig.from_table({
        "issuer": "https://issuer.example", "audience": "skillbank", "namespace_claim": "ns",
        "groups": {"platform": {"reads": ["team-platform", "secops"]},
                   "secops-leads": {"role": role, "reviews": ["secops"]}}}, "skillbank.toml")
    scope = config.scope_for({"sub": "alice", "ns": "alice",
                              "groups": ["platform", "secops-leads"]})
    assert scope.reviewable == ("secops",) and not scope.can_review("team-platform")
    # A reader granted unread reviews stays a reader (the role is only ever lowered).
    config = OidcConfig.from_table({
        "issuer": "https://issuer.example", "audience": "skillbank",
        "groups": {"watchers": {"reviews": ["secops"]}}}, "skillbank.toml")
    assert config.scope_for({"sub": "ann", "groups": ["watchers"]}).role.value == "reader"
