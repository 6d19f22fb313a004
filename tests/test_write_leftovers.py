"""What a write cut short leaves (`atomic_write`'s `.<name>.<random>.tmp`) is removed where it
is safe: by the one writer of the file. Before, a `..owner.json.*.tmp` (a dead owner's secret)
stayed in the root for good; a forgotten rule's leftover is tested in test_forget.py."""

from __future__ import annotations

import time
from pathlib import Path

from owner_client import client_bank, owner_process
from skillbank.fsutil import remove_leftovers


def test_remove_leftovers_takes_only_the_files_own_temp_files(tmp_path):
    target = tmp_path / "a[1].md"  # glob characters in a name match only themselves
    mine = [tmp_path / ".a[1].md.x7k2m9qp.tmp", tmp_path / ".a[1].md.00000000.tmp"]
    others = [tmp_path / ".a1.md.x7k2m9qp.tmp", tmp_path / ".b.md.x7k2m9qp.tmp",
              tmp_path / "a[1].md", tmp_path / ".a[1].md.x7k2m9qp.tmpx"]
    for path in mine + others:
        path.write_text("x")
    remove_leftovers(target)
    assert [p for p in mine if p.exists()] == []
    assert all(p.exists() for p in others)
    remove_leftovers(tmp_path / "missing-folder" / "f")  # nothing there: no error


def test_a_new_owner_removes_what_a_killed_owner_left_of_its_endpoint(tmp_path):
    root = tmp_path / "root"
    root.mkdir()
    leftover = root / "..owner.json.q8w7e6r5.tmp"
    leftover.write_text('{"token": "a dead owner\'s secret"}')
    leftover.chmod(0o600)
    with owner_process(root):
        deadline = time.time() + 60
        while not (root / ".owner.json").exists() and time.time() < deadline:
            time.sleep(0.05)
        with client_bank(root) as bank:  # the endpoint the owner published works
            assert bank.experiences.count(namespace="*") == 0
        assert not leftover.exists()
    assert [p.name for p in Path(root).glob("..owner.json.*.tmp")] == []
