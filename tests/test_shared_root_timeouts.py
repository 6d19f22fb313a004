"""A client's ordinary call and a connect or pool timeout (#23/#24 review).

`httpx.ConnectTimeout` and `PoolTimeout` are raised before a request is sent: the owner never
saw the call, so it is safe to send again (as after a refused connection), and the reconnect
itself is bounded by the client's connect deadline. They used to be taken for a silent owner
(`OwnerNotAnsweringError`, "it may or may not have been applied") — on a loaded machine a
write failed that the owner would have run. A real owner process on the root; the timeout is
raised once at the client's send, before anything goes out.
"""

from __future__ import annotations

import httpx
import pytest

from test_shared_root import owner_process
from workers.common import open_bank


@pytest.mark.parametrize("timeout", [httpx.ConnectTimeout, httpx.PoolTimeout])
def test_a_write_retries_a_timeout_raised_before_it_was_sent(tmp_path, monkeypatch, timeout):
    from skillbank.sharing import client as client_module

    real_call = client_module._Connection.call
    left = {"n": 1}

    def flaky_call(self, payload):
        if left["n"]:
            left["n"] -= 1
            raise timeout("timed out before sending (a loaded machine)")
        return real_call(self, payload)

    monkeypatch.setattr(client_module._Connection, "call", flaky_call)
    root = tmp_path / "root"
    (root / "skills").mkdir(parents=True)
    with owner_process(root):
        bank = open_bank(root)
        try:
            assert bank.is_remote
            entry = bank.guidelines.add("Tag every release with the ticket number.")
            assert left["n"] == 0  # the timeout was raised, and the call went through after it
            rules = [g for g in bank.guidelines.list() if "ticket number" in g.text]
            assert [g.id for g in rules] == [entry.guideline_id]  # applied once
        finally:
            bank.close()
