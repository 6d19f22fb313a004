"""A JWT principal never takes over a shared namespace by its name (issue 24, review).

With no `namespace_claim`, a caller's own namespace is its principal, and the principal often
is a name people choose themselves (`preferred_username`). A person who signs up as `team` (a
namespace the `[oidc.groups]` share) must not become a contributor whose *own* namespace is the
team's — which would let them overwrite and delete the team's memory as their own. A real test
issuer on loopback signs the tokens (tests/oidc_issuer.py)."""

from __future__ import annotations

import pytest

from oidc_issuer import Issuer


@pytest.fixture
def issuer():
    made = Issuer()
    yield made
    made.close()


def identity(issuer, tmp_path, **extra: str):
    from skillbank.team.auth import TeamIdentity, load_oidc

    config = tmp_path / "auth.toml"
    config.write_text(issuer.config_toml(**extra))
    return TeamIdentity(oidc=load_oidc(config, {}))


def test_a_principal_named_like_a_shared_namespace_is_refused(issuer, tmp_path):
    from skillbank.team.auth import Admitted, Refusal

    team = identity(issuer, tmp_path, principal_claim='"preferred_username"')
    verdict = team.check_token(issuer.token("u-123", preferred_username="team",
                                            groups=["platform"]))
    assert isinstance(verdict, Refusal) and verdict.status == 401, verdict
    assert "'team'" in verdict.reason and "namespace_claim" in verdict.reason, verdict.reason
    # Everyone else is let in as before, and an explicit namespace claim (set by the identity
    # provider's admin, not chosen by the person) may still name a shared namespace.
    alice = team.check_token(issuer.token("u-1", preferred_username="alice", groups=["platform"]))
    assert isinstance(alice, Admitted) and alice.scope.namespace == "alice"
    claimed = identity(issuer, tmp_path, namespace_claim='"skillbank_namespace"')
    bot = claimed.check_token(issuer.token("ci", groups=["agents"], skillbank_namespace="team"))
    assert isinstance(bot, Admitted) and bot.scope.namespace == "team"


def test_a_principal_named_like_a_tokens_file_namespace_is_refused(issuer, tmp_path):
    """Tokens file (bots, small teams) and OIDC at once: someone who signs up as `ci` must not
    own the namespace of the tokens file's `ci` principal."""
    from mcp_server.identity import TokensFile, add_principal
    from skillbank.team.auth import Admitted, Refusal, TeamIdentity, load_oidc

    tokens = tmp_path / "tokens.toml"
    add_principal(tokens, "ci-bot", namespace="ci", role="contributor")
    config = tmp_path / "auth.toml"
    config.write_text(issuer.config_toml(principal_claim='"preferred_username"'))
    both = TeamIdentity(oidc=load_oidc(config, {}), tokens=TokensFile(tokens))
    verdict = both.check_token(issuer.token("u-9", preferred_username="ci"))
    assert isinstance(verdict, Refusal) and verdict.status == 401, verdict
    assert "'ci'" in verdict.reason and "tokens file" in verdict.reason, verdict.reason
    alice = both.check_token(issuer.token("u-1", preferred_username="alice"))
    assert isinstance(alice, Admitted) and alice.scope.namespace == "alice"


def test_a_principal_named_like_the_workers_own_namespace_is_refused(issuer, tmp_path):
    """hunt-oidc #3, session 37: an IdP account named `default` (preferred_username, chosen by
    its owner) got the worker's own namespace, the CLI's and migrated memory, to read and
    forget. Refused as a tokens-file namespace is; a namespace claim may still name it."""
    from skillbank.team.auth import Admitted, Refusal, TeamIdentity, load_oidc

    worker = identity(issuer, tmp_path, principal_claim='"preferred_username"')
    verdict = worker.check_token(issuer.token("u-7", preferred_username="default",
                                              groups=["platform"]))
    assert isinstance(verdict, Refusal) and verdict.status == 401, verdict
    assert "'default'" in verdict.reason and "worker's own namespace" in verdict.reason
    assert "namespace_claim" in verdict.reason
    config = tmp_path / "auth.toml"
    config.write_text(issuer.config_toml(principal_claim='"preferred_username"',
                                         namespace_claim='"skillbank_namespace"'))
    ops = TeamIdentity(oidc=load_oidc(config, {}), bank_namespace="ops")
    assert isinstance(ops.check_token(issuer.token("u-7", preferred_username="default")),
                      Admitted)  # another worker's own namespace is "ops"
    refused = ops.check_token(issuer.token("u-8", preferred_username="ops"))
    assert isinstance(refused, Refusal) and "'ops'" in refused.reason, refused
    claimed = ops.check_token(issuer.token("u-9", preferred_username="svc",
                                           skillbank_namespace="ops"))
    assert isinstance(claimed, Admitted) and claimed.scope.namespace == "ops", claimed


def test_a_group_may_read_every_namespace(issuer, tmp_path):
    """hunt-oidc #4, session 37: `reads = ["*"]` in an [oidc.groups] table stopped the worker
    with a message about writing; a tokens file's --reads '*' is taken. Now so is the group's."""
    from skillbank.team.auth import Admitted, AuthConfigError, TeamIdentity, load_oidc

    config = tmp_path / "auth.toml"
    config.write_text(issuer.config_toml() + '\n[oidc.groups.auditors]\nreads = ["*"]\n\n'
                      '[oidc.groups.admins]\nrole = "reviewer"\nreads = ["*"]\nreviews = ["*"]\n')
    both = TeamIdentity(oidc=load_oidc(config, {}))
    auditor = both.check_token(issuer.token("audrey", groups=["auditors"]))
    assert isinstance(auditor, Admitted), auditor
    scope = auditor.scope
    assert (scope.reads, scope.reads_all, scope.role.value, scope.namespace) == (
        ("*",), True, "reader", "audrey")
    admin = both.check_token(issuer.token("ada", groups=["admins"])).scope
    assert admin.role.value == "reviewer" and admin.reviewable == ("*",), admin
    nobody = both.check_token(issuer.token("nora")).scope
    assert not nobody.reads_all and nobody.readable == ("nora",)
    config.write_text(issuer.config_toml() + '\n[oidc.groups.bad]\nreads = ["*", " x"]\n')
    with pytest.raises(AuthConfigError, match="reads: invalid namespace"):
        load_oidc(config, {})
