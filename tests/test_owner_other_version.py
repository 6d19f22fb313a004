"""A client and an owner of different skillbank versions refuse each other clearly (s22 review).

The wire changed (`RecordedId` values, the catalog's records in their own module) without a new
protocol number: an old client got "unknown value tag 'rstr'" for a record the owner had stored,
and `catalog()` failed both ways. Now the protocol is 3, and a process meeting an owner of
another protocol says so at once instead of waiting its lock timeout for an endpoint.
"""

from __future__ import annotations

import json
import os

import pytest

from owner_client import owner_process
from skillbank import Skillbank
from skillbank.errors import BusyError
from skillbank.sharing import endpoint


def test_an_owner_of_another_version_is_named_not_waited_for(tmp_path):
    root = tmp_path / "root"
    root.mkdir()
    with owner_process(root) as owner:
        path = root / endpoint.ENDPOINT_FILE
        data = json.loads(path.read_text())
        data["protocol"] = endpoint.PROTOCOL - 1  # what an owner of the older version publishes
        tmp = path.with_suffix(".tmp")
        tmp.write_text(json.dumps(data))
        os.chmod(tmp, 0o600)
        os.replace(tmp, path)
        with pytest.raises(BusyError) as caught:
            Skillbank.open(root, lock_timeout=20)
        message = str(caught.value)
        assert "another version of skillbank" in message and str(owner.pid) in message
