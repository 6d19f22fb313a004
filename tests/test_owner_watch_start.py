"""A skill added by hand after an owner opened the root, before its first client came, is
indexed (session 16).

The owner starts watching the skill folders at its first client's hello, and the watcher only
reacted to changes made after that: a `git pull` in between was never synced, and clients'
`skills.list()` missed the skill until some later change woke the watcher. The watcher now
syncs once when it starts.
"""

from __future__ import annotations

import time

from conftest import write_skill
from owner_client import client_bank, owner_process


def test_a_skill_added_before_the_first_client_is_listed(tmp_path):
    root = tmp_path / "root"
    root.mkdir()
    folder = tmp_path / "skills"
    folder.mkdir()
    with owner_process(root, (folder,)):
        write_skill(folder, "pdf-tools", "Merge and split PDF files with qpdf.")
        with client_bank(root) as bank:
            deadline = time.monotonic() + 60
            while "pdf-tools" not in [s.name for s in bank.skills.list()]:
                assert time.monotonic() < deadline, "the skill was never indexed"
                time.sleep(0.2)
            assert [h.name for h in bank.skills.search("merge two pdf files")] == ["pdf-tools"]
