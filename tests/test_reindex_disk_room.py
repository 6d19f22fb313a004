"""A reindex on a disk with almost no room left is refused before it drops anything (hunt-disk
#8, session 29).

With 96 KiB free under the root, `skillbank reindex` hung for good without a word: the embedded
Chroma's `delete_collection` never returned (128 KiB free: it failed cleanly). Now a reindex of
the bank's own embedded index needs 1 MiB free (`index_reopen.REINDEX_ROOM`), else it raises
ENOSPC, worded as every full disk is, with nothing dropped: the index still answers.
"""

from __future__ import annotations

import errno
import os
import shutil
import subprocess
from collections import namedtuple

import pytest

from test_damaged_index import skillbank

TASK = "find the commit that introduced a regression with git bisect"


def _almost_full(monkeypatch) -> None:
    usage = namedtuple("usage", "total used free")
    monkeypatch.setattr(shutil, "disk_usage", lambda path: usage(8 << 20, (8 << 20) - 65536,
                                                                 65536))


def test_a_reindex_with_no_room_is_refused_and_drops_nothing(tmp_path, monkeypatch):
    from skillbank import Skillbank
    from skillbank.embeddings import HashEmbedding

    with Skillbank.open(tmp_path / "root", embedding_function=HashEmbedding(),
                        include_bundled=False) as bank:
        bank.skills.create("git-bisect", "Find the commit that introduced a bug with git "
                           "bisect. Use when a regression appeared.", "Run git bisect start.")
        _almost_full(monkeypatch)
        with pytest.raises(OSError) as refused:
            bank.reindex()
        assert refused.value.errno == errno.ENOSPC
        assert "only 64 KiB free" in str(refused.value) and "nothing was dropped" in \
            str(refused.value)
        assert [h.name for h in bank.skills.search(TASK)][:1] == ["git-bisect"]
        monkeypatch.undo()
        assert "git-bisect" in bank.reindex()["skills"].added


def test_the_cli_names_a_disk_too_full_to_reindex(tmp_path):
    """On a real 8 MiB tmpfs filled to 64 KiB: exit 1 with the full disk's words, where the
    command hung for good before (bounded here by the subprocess timeout). Skipped where this
    process may not mount a file system."""
    mount = tmp_path / "mnt"
    mount.mkdir()
    if os.geteuid() != 0 or shutil.which("mount") is None or subprocess.run(
            ["mount", "-t", "tmpfs", "-o", "size=8m", "tmpfs", str(mount)],
            capture_output=True).returncode != 0:
        pytest.skip("cannot mount a small tmpfs here")
    try:
        root = mount / "root"
        made = skillbank(root, "--no-bundled", "skills", "new", "git-bisect", "-d", "Find the "
                         "commit that introduced a bug with git bisect. Use when a regression "
                         "appeared.", "-b", "Run git bisect start.")
        assert made.returncode == 0, made.stderr
        free = shutil.disk_usage(mount).free
        with open(mount / "filler", "wb") as filler:
            filler.write(b"\0" * (free - 65536))
        done = skillbank(root, "--no-bundled", "reindex")
        assert done.returncode == 1, (done.returncode, done.stdout, done.stderr)
        assert "a reindex needs at least 1 MiB" in done.stderr, done.stderr
        assert "free space and retry" in done.stderr, done.stderr
        os.remove(mount / "filler")
        shown = skillbank(root, "--no-bundled", "skills", "search", TASK)
        assert "git-bisect" in shown.stdout, shown.stdout + shown.stderr
    finally:
        subprocess.run(["umount", "-l", str(mount)], capture_output=True)
