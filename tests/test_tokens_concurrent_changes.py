"""Two `skillbank tokens` changes of one file at once both land (hunt-mcphttp #1, session 36).

`tokens remove mallory` (revoking a leaked token) while a script ran `tokens add newhire`:
each read the file, changed its copy and renamed it into place, so the last write undid the
other and the revoked token was back. Now each holds `<file>.lock` from its read to its write.

No timing: another process reads the file and stops there (before its write) until the test
lets it go; meanwhile this process's `remove_principal` runs on a thread. The test goes on once
that removal either read the file (the old code: it did not wait) or asked for the lock.
"""

from __future__ import annotations

import os
import subprocess
import sys
import threading
from pathlib import Path

import filelock
import pytest

from skillbank.errors import BusyError
from skillbank.mcp_server import identity
from skillbank.mcp_server.identity import add_principal, read_for_change, remove_principal

#: Adds `newhire`, pausing between its read of the file and its write until told to go on.
PAUSED_ADD = r"""
import sys
from skillbank.mcp_server import identity
real = identity.read_for_change
def paused(*args, **kwargs):
    found = real(*args, **kwargs)
    print("read", flush=True)
    sys.stdin.readline()
    return found
identity.read_for_change = paused
identity.add_principal(sys.argv[1], "newhire", namespace="hires", role="contributor")
print("added", flush=True)
"""


def test_a_removal_during_another_processs_add_is_not_undone(tmp_path, monkeypatch):
    path = tmp_path / "tokens.toml"
    revoked = add_principal(path, "mallory", namespace="m", role="contributor")
    adder = subprocess.Popen([sys.executable, "-c", PAUSED_ADD, str(path)],
                             stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True,
                             env=dict(os.environ))
    try:
        assert adder.stdout.readline().strip() == "read"  # it has read; it has not written
        started = threading.Event()  # the removal read the file or asked for the lock
        real_read, real_acquire = identity.read_for_change, filelock.FileLock.acquire

        def read(*args, **kwargs):
            found = real_read(*args, **kwargs)
            started.set()  # once read: then neither write can carry the other's change
            return found

        def acquire(self, *args, **kwargs):
            started.set()
            return real_acquire(self, *args, **kwargs)

        monkeypatch.setattr(identity, "read_for_change", read)
        monkeypatch.setattr(filelock.FileLock, "acquire", acquire)
        failed: list[BaseException] = []

        def remove() -> None:
            try:
                remove_principal(path, "mallory")
            except BaseException as exc:  # noqa: BLE001 - reported by the test below
                failed.append(exc)

        remover = threading.Thread(target=remove)
        remover.start()
        started.wait()
        adder.stdin.write("go\n")
        adder.stdin.flush()
        assert adder.stdout.readline().strip() == "added"
        assert adder.wait() == 0
        remover.join()
    finally:
        if adder.poll() is None:
            adder.kill()
    assert not failed, failed
    names = set(read_for_change(path))
    # The old code lost one change: mallory's revoked token back, or newhire missing.
    assert names == {"newhire"}, f"a change was lost: {names}"
    assert identity.TokensFile(path).lookup(revoked) is None


def test_a_change_waits_for_the_lock_and_says_so_when_it_does_not_come(tmp_path):
    from skillbank.mcp_server.identity import changing

    path = tmp_path / "tokens.toml"
    add_principal(path, "mallory", namespace="m", role="contributor")
    before = path.read_bytes()
    held = filelock.FileLock(f"{path}.lock", thread_local=False)  # another `tokens` command
    with held:
        with pytest.raises(BusyError, match="another `skillbank tokens` command is changing"):
            with changing(path, timeout=0):
                pass
    assert path.read_bytes() == before
    remove_principal(path, "mallory")  # released: the next change goes through
    assert read_for_change(path) == {}
