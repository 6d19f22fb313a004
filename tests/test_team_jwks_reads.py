"""Reading the issuer's keys holds no one up, and a load-balanced issuer mid-rotation does not
cost valid tokens 401s (hunt-jwks #1 #4, session 37).

Real parts: the loopback issuer of tests/oidc_issuer.py (RSA keys, its JWKS over HTTP) and the
worker's verifier (`TeamIdentity`). A hung issuer is a fetch that blocks on an Event; time is a
clock the test moves (`auth.time`), so nothing here waits on the wall clock.
"""

from __future__ import annotations

import threading
import time
from pathlib import Path
from types import SimpleNamespace
from typing import Any

import pytest

from oidc_issuer import Issuer, new_key


def identity_for(issuer: Issuer, tmp_path: Path) -> Any:
    from skillbank.team.auth import TeamIdentity, load_oidc

    config = tmp_path / "auth.toml"
    config.write_text(issuer.config_toml())
    return TeamIdentity(oidc=load_oidc(config, {}))


@pytest.fixture
def clock(monkeypatch) -> list[float]:
    """auth.py's monotonic clock, moved by the test (wall-clock `time.time` is left alone)."""
    from skillbank.team import auth

    now = [1000.0]
    monkeypatch.setattr(auth, "time", SimpleNamespace(monotonic=lambda: now[0], time=time.time))
    return now


def test_a_hung_issuer_holds_up_no_token_whose_key_the_last_good_set_holds(
        issuer, tmp_path, monkeypatch):
    """The lock was held across the fetch: once the lifespan passed, every request queued
    behind a JWKS read that hung (10 s each, one after another; hunt-jwks #1)."""
    import jwt

    from skillbank.team import auth
    from skillbank.team.auth import Admitted

    identity = identity_for(issuer, tmp_path)
    assert isinstance(identity.check_token(issuer.token("alice")), Admitted)
    keys = identity.jwt.client()
    entered, release, calls = threading.Event(), threading.Event(), []

    def hung() -> Any:
        calls.append(1)
        entered.set()
        release.wait()
        raise jwt.PyJWKClientConnectionError("timed out")

    monkeypatch.setattr(keys._fetcher, "fetch_data", hung)
    monkeypatch.setattr(auth, "JWKS_LIFESPAN", 0.0)  # every token finds the set due
    monkeypatch.setattr(auth, "JWKS_REFRESH_COOLDOWN", 0.0)  # and may re-read it
    results: dict[int, Any] = {}

    def one(i: int) -> None:
        results[i] = identity.check_token(issuer.token(f"user{i}"))

    threads = [threading.Thread(target=one, args=(i,)) for i in range(6)]
    try:
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join(60)  # a safety net only: they end at once, or never while it hangs
        assert not any(thread.is_alive() for thread in threads), "held up by the hung read"
        assert entered.is_set() and not release.is_set()
        assert all(isinstance(v, Admitted) for v in results.values()) and len(results) == 6
        assert len(calls) == 1  # one read at a time, not one per request
    finally:
        release.set()
        for thread in threads:
            thread.join(60)
    keys.wait_read(60)
    assert isinstance(identity.check_token(issuer.token("after")), Admitted)  # set kept


def test_the_cooldown_after_a_read_that_timed_out_runs_from_its_end(issuer, tmp_path, clock,
                                                                   monkeypatch):
    """The cooldown was stamped at the read's start: a read that took the whole 10 s timeout
    used it up, and the next request fetched (and waited) again at once (hunt-jwks #1)."""
    import jwt

    from skillbank.team.auth import Admitted

    identity = identity_for(issuer, tmp_path)
    assert isinstance(identity.check_token(issuer.token("alice")), Admitted)
    keys = identity.jwt.client()
    calls = []

    def times_out() -> Any:
        calls.append(clock[0])
        clock[0] += 10.0  # the fetch's timeout
        raise jwt.PyJWKClientConnectionError("timed out")

    monkeypatch.setattr(keys._fetcher, "fetch_data", times_out)
    clock[0] += 400.0  # past JWKS_LIFESPAN
    assert isinstance(identity.check_token(issuer.token("bob")), Admitted)
    keys.wait_read(60)
    assert len(calls) == 1
    clock[0] += 2.0  # 12 s after the read began, 2 s after it gave up
    assert isinstance(identity.check_token(issuer.token("carol")), Admitted)
    keys.wait_read(60)
    assert len(calls) == 1, "re-read right after a read that timed out"
    verdict = identity.check_token(issuer.token("dave", key=new_key(), kid="key-9"))
    assert verdict.status == 503 and len(calls) == 1  # an unknown kid does not re-read either


def test_a_key_one_node_of_a_load_balanced_issuer_lacks_is_kept_until_two_reads_miss_it(
        issuer, tmp_path, clock):
    """Two IdP nodes mid-rotation, one publishing {key-1}, the other {key-1, key-2}: a read
    from the first dropped key-2, and tokens signed with it were 401s for the cooldown
    (hunt-jwks #4). A key withdrawn for good still goes after two reads that miss it."""
    from skillbank.team.auth import Admitted, Refusal

    k1, k2 = issuer.keys["key-1"], new_key()
    nodes = [{"key-1": k1, "key-2": k2}, {"key-1": k1}]
    served = issuer.jwks
    reads = [0]

    def balanced() -> dict[str, Any]:
        issuer.keys = dict(nodes[reads[0] % 2])
        reads[0] += 1
        return served()

    issuer.jwks = balanced  # type: ignore[method-assign]
    identity = identity_for(issuer, tmp_path)
    keys = identity.jwt.client()
    assert isinstance(identity.check_token(issuer.token("alice", key=k1, kid="key-1")), Admitted)
    clock[0] += 400.0  # past JWKS_LIFESPAN: the next read hits the node without key-2
    assert isinstance(identity.check_token(issuer.token("bob", key=k1, kid="key-1")), Admitted)
    keys.wait_read(60)
    assert reads[0] == 2
    clock[0] += 1.0  # within the cooldown: no re-read allowed
    verdict = identity.check_token(issuer.token("carol", key=k2, kid="key-2"))
    assert isinstance(verdict, Admitted), verdict
    clock[0] += 10.0  # the cooldown has passed: key-2's next token re-reads, and it is back
    assert isinstance(identity.check_token(issuer.token("dave", key=k2, kid="key-2")), Admitted)
    assert reads[0] == 3

    nodes[0] = {"key-1": k1}  # key-2 withdrawn on every node now
    clock[0] += 400.0
    assert isinstance(identity.check_token(issuer.token("erin", key=k1, kid="key-1")), Admitted)
    keys.wait_read(60)
    clock[0] += 10.0
    verdict = identity.check_token(issuer.token("mallory", key=k2, kid="key-2"))
    assert isinstance(verdict, Refusal) and verdict.status == 401, verdict
    assert "not among" in verdict.reason and reads[0] == 5
