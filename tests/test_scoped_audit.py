"""A scoped view's `audit` is the log as its caller may read it, and is never written through
(hunt-scope #2, session 28).

`bank.scoped(scope).audit` was the bank's whole log, passed through as any other value: a
contributor of bob listed alice's events and ids — ids every other call of the view answers
"not found" — and `view.audit.append` wrote events as any principal. Now the view's `audit`
applies the one rule MCP's `skillbank://audit` and the browser's Audit page apply
(`skillbank.audit.visible_to`): below reviewer refused, a reviewer sees the namespaces it
reviews; `append` is refused.

In process and through a client of an owner process; the browser as people meet it.
"""

from __future__ import annotations

import pytest

from owner_client import bank_for
from skillbank.audit import event, open_log
from skillbank.errors import PermissionDeniedError
from skillbank.scope import Scope
from test_ui_security import client

BOTH = pytest.mark.parametrize("remote", [False, True], ids=["in-process", "client-of-owner"])
ALICE = Scope(principal="alice", namespace="alice", role="contributor", face="test")
BOB = Scope(principal="bob", namespace="bob", role="contributor", face="test")
BOB_REVIEWER = Scope(principal="brev", namespace="bob", role="reviewer", face="test")


def _alice_and_bob_write(bank) -> tuple[str, str]:
    alices = bank.scoped(ALICE).experiences.record(task="Alice's private task", outcome="success")
    bobs = bank.scoped(BOB).experiences.record(task="Bob's own task", outcome="success")
    return alices, bobs


@BOTH
def test_a_views_audit_shows_only_what_its_caller_reviews(tmp_path, remote):
    with bank_for(tmp_path, remote) as bank:
        alices, bobs = _alice_and_bob_write(bank)
        # Fails before: bob's view listed alice's record and its id.
        with pytest.raises(PermissionDeniedError, match="for reviewers; bob is a contributor"):
            bank.scoped(BOB).audit.query()
        reviewer = bank.scoped(BOB_REVIEWER).audit
        assert [(e.namespace, e.id) for e in reviewer.query()] == [("bob", bobs)]
        assert reviewer.query(namespace="alice") == [] and reviewer.query(item_id=alices) == []
        assert [e.id for e in reviewer.query(limit=1)] == [bobs]  # the newest of its own
        untrusted = bank.scoped(Scope(principal="brev", namespace="bob", role="reviewer",
                                      trusted=False, face="test"))
        with pytest.raises(PermissionDeniedError, match="an untrusted reviewer"):
            untrusted.audit.query()
        # The whole log is still the bank's own.
        assert [e.id for e in open_log(tmp_path / "root").query()] == [alices, bobs]


@BOTH
def test_a_view_never_appends_to_the_log(tmp_path, remote):
    with bank_for(tmp_path, remote) as bank:
        _alice_and_bob_write(bank)
        before = open_log(tmp_path / "root").query()
        forged = event("forget", "experience", "exp-000000000000", namespace="alice")
        for scope in (BOB, BOB_REVIEWER):
            with pytest.raises(PermissionDeniedError, match="does not append"):
                bank.scoped(scope).audit.append([forged])
        assert open_log(tmp_path / "root").query() == before


@BOTH
def test_the_browser_over_a_view_shows_its_callers_events_only(tmp_path, remote):
    with bank_for(tmp_path, remote) as bank:
        alices, bobs = _alice_and_bob_write(bank)
        c, _ = client(bank.scoped(BOB_REVIEWER))
        page = c.get("/audit").text
        assert bobs in page and alices not in page
        c, _ = client(bank.scoped(BOB))
        refused = c.get("/audit")
        assert refused.status_code == 409 and "for reviewers" in refused.text
        assert alices not in refused.text and bobs not in refused.text
