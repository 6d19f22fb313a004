"""Approving a rule or record that was never pending says so, changes nothing, audits nothing.

hunt-browser #5 (session 31): "Approve" on an active experience flashed "Approved exp-….", and
on an active rule "Approved gl-…; it is now active." and appended an `approve` event to the
audit log at each click (three clicks, three reviews that never took place). Now the page says
"… is already active; nothing changed." and `guidelines.approve` of an active rule writes no
audit event (an active record's approve already wrote none).

Through the browser's app and the API, on a bank in process and on a client of an owner
process.
"""

from __future__ import annotations

import pytest

from owner_client import bank_for
from skillbank.ui.audit_view import audit_log_of
from test_ui_security import SAME, client


def approvals(bank, item_id: str) -> int:
    return len(audit_log_of(bank).query(action="approve", item_id=item_id))


@pytest.mark.parametrize("remote", [False, True], ids=["in-process", "client-of-owner"])
def test_approving_an_active_rule_or_record_changes_and_audits_nothing(tmp_path, remote):
    """Fails before: "Approved gl-…; it is now active." and one approve event per click."""
    with bank_for(tmp_path, remote) as bank:
        gid = bank.guidelines.add("Pin every dependency to an exact version.",
                                  topic="deps").guideline_id
        eid = bank.experiences.record(task="Rotate the TLS certificates", outcome="success")
        c, guard = client(bank)
        for _ in range(3):
            rule = c.post(f"/guidelines/{gid}/approve", data={"csrf": guard.csrf}, headers=SAME)
            assert rule.status_code == 200
            assert f"{gid} is already active; nothing changed." in rule.text
            assert "Approved" not in rule.text
            record = c.post(f"/experiences/{eid}/approve", data={"csrf": guard.csrf},
                            headers=SAME)
            assert record.status_code == 200
            assert f"{eid} is already active; nothing changed." in record.text
        assert approvals(bank, gid) == 0 and approvals(bank, eid) == 0
        assert bank.guidelines.approve(gid).status == "active"  # the API: the same no-op
        assert approvals(bank, gid) == 0
        assert bank.guidelines.get(gid).status == "active"
