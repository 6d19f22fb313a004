"""A pending replace whose target another rule replaced since is not approved blind.

An untrusted client proposed P replacing T; a trusted caller then replaced T with N. Approving P
made P and N both active, two contradicting rules served, and nothing said so (hunt-ui #2,
session 27). Approval is refused with the newer rule named; nothing changes. In process and
through a client of another process that owns the root; the CLI and the browser say it too.
"""

from __future__ import annotations

import pytest

from owner_client import bank_for
from skillbank.errors import InvalidInputError

REMOTE = pytest.mark.parametrize("remote", [False, True], ids=["in-process", "client-of-owner"])


def _stale(bank) -> tuple[str, str, str]:
    rules = bank.guidelines
    t = rules.add("Never deploy on Fridays.", topic="deploy").guideline_id
    p = rules.add("Deploy on Fridays only before noon.", topic="deploy", replaces=t,
                  trusted=False).guideline_id
    n = rules.add("Deploy on Fridays whenever the tests pass.", topic="deploy",
                  replaces=t).guideline_id
    return t, p, n


@REMOTE
def test_approving_a_replace_of_a_rule_replaced_since_is_refused(tmp_path, remote):
    with bank_for(tmp_path, remote) as bank:
        t, p, n = _stale(bank)
        with pytest.raises(InvalidInputError, match=f"{n} replaced since"):
            bank.guidelines.approve(p)
        g = bank.guidelines
        assert (g.get(p).status, g.get(n).status, g.get(t).status) == \
            ("pending", "active", "superseded")
        assert g.get(t).superseded_by == n
        g.reject(p)  # the way on the message offers
        assert g.get(p).status == "retired"


@REMOTE
def test_a_replace_of_a_rule_still_in_play_is_approved(tmp_path, remote):
    with bank_for(tmp_path, remote) as bank:
        rules = bank.guidelines
        t = rules.add("Never deploy on Fridays.", topic="deploy").guideline_id
        p = rules.add("Deploy on Fridays only before noon.", topic="deploy", replaces=t,
                      trusted=False).guideline_id
        assert rules.approve(p).status == "active"
        assert rules.get(t).superseded_by == p


def test_the_browser_says_why_it_was_not_approved(tmp_path):
    import html

    from test_ui_security import SAME, client

    with bank_for(tmp_path, False) as bank:
        t, p, n = _stale(bank)
        ui, guard = client(bank)
        done = ui.post(f"/guidelines/{p}/approve", headers=SAME, follow_redirects=True,
                       data={"csrf": guard.csrf, "next": "/guidelines"})
        assert f"{n} replaced since" in html.unescape(done.text)
        assert bank.guidelines.get(p).status == "pending"


def test_approving_again_finishes_a_replace_a_failure_left_half_done(tmp_path):
    """Review 3 (session 31): approving an active rule became "nothing changed", so a replace
    whose approval saved the rule active and then failed before the rule it replaces was marked
    superseded (PostgreSQL gone mid-way, the process killed) could not be finished: both rules
    stayed active. Approving it again supersedes what is still in play (and audits that), as
    before; an approval that changes nothing still writes no audit event. In process only: the
    failure is injected in this process's memory."""
    from skillbank import Skillbank
    from skillbank.embeddings import HashEmbedding

    with Skillbank.open(tmp_path / "root", embedding_function=HashEmbedding(),
                        include_bundled=False) as bank:
        rules = bank.guidelines
        t = rules.add("Never deploy on Fridays.", topic="deploy").guideline_id
        p = rules.add("Deploy on Fridays only before noon.", topic="deploy", replaces=t,
                      trusted=False).guideline_id

        def fails(self, *args, **kwargs):
            raise OSError("the disk went away")

        with pytest.MonkeyPatch.context() as patch:
            patch.setattr(type(rules), "_mark_superseded", fails)
            with pytest.raises(OSError):
                rules.approve(p)
        assert (rules.get(p).status, rules.get(t).status) == ("active", "active")
        rules.approve(p)
        assert rules.get(t).status == "superseded" and rules.get(t).superseded_by == p
        approvals = [e for e in bank.audit.query() if e.action == "approve" and e.id == p]
        rules.approve(p)  # nothing left to do: no audit event
        assert [e for e in bank.audit.query() if e.action == "approve" and e.id == p] == approvals
