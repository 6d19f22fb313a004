"""`skillbank migrate` carries the outsiders' nets, so an outsider still counts once (session 20).

An outsider's ratings count once per item, as his net (`skillbank.outside_votes`). migrate
copied the counters and not the nets: after a move, an outsider who had sunk an experience on
the root voted on the team from zero and counted twice. Now the nets come along (merged with
the team's own, the counters corrected so the merged net counts once) and a rerun changes
nothing. Real private PostgreSQL cluster.
"""

from __future__ import annotations

import uuid

import pytest

from skillbank import Skillbank
from skillbank.embeddings import HashEmbedding
from skillbank.scope import Scope

pytest.importorskip("psycopg")

CARL = Scope(principal="carl", namespace="carl", reads=("team",), role="contributor")
TINA = Scope(principal="tina", namespace="team", role="contributor")


def _counts(usage) -> tuple[int, int]:
    return usage.successes, usage.failures


def test_an_outsider_counts_once_across_a_migration(tmp_path, postgres):
    from skillbank.store.postgres import PostgresStore
    from skillbank.team.migrate import migrate_root

    embedded = tmp_path / "laptop"
    with Skillbank.open(embedded, embedding_function=HashEmbedding(),
                        include_bundled=False) as bank:
        sunk = bank.scoped(TINA).experiences.record(task="Rotate the team's signing keys",
                                                    outcome="success")
        praised = bank.scoped(TINA).experiences.record(task="Restore the nightly backup",
                                                       outcome="success")
        for _ in range(3):
            bank.scoped(CARL).rate(sunk, helpful=False)
        bank.scoped(CARL).rate(praised, helpful=True)
        assert _counts(bank.experiences.get(sunk).usage) == (0, 1)
    deployment = uuid.uuid4().hex[:16]
    migrate_root(embedded, postgres.url, deployment=deployment)
    with PostgresStore(postgres.url, deployment=deployment) as store:
        usage = store.usage("experiences")
        assert usage.outside(sunk) == {"carl": -3}
        assert _counts(usage.get(sunk)) == (0, 1)
        # On the team he goes on from his net: one more "not helpful" is no second vote, and
        # four "helpful" turn his one vote around.
        usage.vote(sunk, "carl", False)
        assert _counts(usage.get(sunk)) == (0, 1)
        for _ in range(5):
            usage.vote(sunk, "carl", True)
        assert usage.outside(sunk) == {"carl": 1} and _counts(usage.get(sunk)) == (1, 0)
        # The team had a net of its own for him on the other record: merged, counted once.
        usage.vote(praised, "carl", True)
        assert _counts(usage.get(praised)) == (1, 0)

    # He votes again on the laptop; the rerun merges only what moved, and counts once.
    with Skillbank.open(embedded, embedding_function=HashEmbedding(),
                        include_bundled=False) as bank:
        bank.scoped(CARL).rate(praised, helpful=True)
    migrate_root(embedded, postgres.url, deployment=deployment)
    with PostgresStore(postgres.url, deployment=deployment) as store:
        usage = store.usage("experiences")
        assert usage.outside(sunk) == {"carl": 1} and _counts(usage.get(sunk)) == (1, 0)
        assert usage.outside(praised) == {"carl": 3}
        assert _counts(usage.get(praised)) == (1, 0)
    third = migrate_root(embedded, postgres.url, deployment=deployment)
    assert not third.changed, third.imported


def test_a_net_withdrawn_or_turned_on_the_root_between_runs(tmp_path, postgres):
    """Second review: his net went -1 -> 0 on one record and -1 -> +1 on another between two
    runs; the counts import read the shrinking counter as a reset, and the team kept the
    withdrawn vote (0, 1) or counted him twice (1, 1)."""
    from skillbank.store.postgres import PostgresStore
    from skillbank.team.migrate import migrate_root

    embedded = tmp_path / "laptop"
    with Skillbank.open(embedded, embedding_function=HashEmbedding(),
                        include_bundled=False) as bank:
        withdrawn = bank.scoped(TINA).experiences.record(task="Rotate the signing keys",
                                                         outcome="success")
        turned = bank.scoped(TINA).experiences.record(task="Restore the nightly backup",
                                                      outcome="success")
        for eid in (withdrawn, turned):
            bank.scoped(CARL).rate(eid, helpful=False)
    deployment = uuid.uuid4().hex[:16]
    migrate_root(embedded, postgres.url, deployment=deployment)
    with Skillbank.open(embedded, embedding_function=HashEmbedding(),
                        include_bundled=False) as bank:
        bank.scoped(CARL).rate(withdrawn, helpful=True)
        bank.scoped(CARL).rate(turned, helpful=True)
        bank.scoped(CARL).rate(turned, helpful=True)
        assert _counts(bank.experiences.get(withdrawn).usage) == (0, 0)
        assert _counts(bank.experiences.get(turned).usage) == (1, 0)
    migrate_root(embedded, postgres.url, deployment=deployment)
    with PostgresStore(postgres.url, deployment=deployment) as store:
        usage = store.usage("experiences")
        assert usage.outside(withdrawn) == {} and _counts(usage.get(withdrawn)) == (0, 0)
        assert usage.outside(turned) == {"carl": 1} and _counts(usage.get(turned)) == (1, 0)
    assert not migrate_root(embedded, postgres.url, deployment=deployment).changed
