"""The skill walk knows a folder by (device, inode) (c5eaf63, #27 cold start). Where a stat
gives no inode (`os.DirEntry.stat()` on Windows sets st_ino and st_dev to 0; some network
and FUSE mounts report 0), every folder would be "the same folder": the walk would keep the
first and skip every other skill. Such folders are known by their real path, as before."""

from __future__ import annotations

import os

from conftest import write_skill
from test_skill_library import open_bank


class _NoInode:
    """A DirEntry whose stat() has no inode, as on Windows."""

    def __init__(self, entry: os.DirEntry) -> None:
        self._entry, self.name, self.path = entry, entry.name, entry.path

    def is_dir(self) -> bool:
        return self._entry.is_dir()

    def is_file(self) -> bool:
        return self._entry.is_file()

    def stat(self) -> os.stat_result:
        real = self._entry.stat()
        return os.stat_result((real.st_mode, 0, 0, real.st_nlink, real.st_uid, real.st_gid,
                               real.st_size, int(real.st_atime), int(real.st_mtime),
                               int(real.st_ctime)))


def test_folders_whose_stat_has_no_inode_are_all_walked(tmp_path, monkeypatch):
    root = tmp_path / "skills"
    write_skill(root, "top", "A skill at the top of the root.")
    write_skill(root / "group", "nested", "A skill one folder down.")
    write_skill(root / "other", "second", "A skill in another group.")
    (root / "group" / "loop").symlink_to(root, target_is_directory=True)
    bank = open_bank(tmp_path / "bank", [root])
    try:
        real_scandir = os.scandir
        under = str(root)

        def scandir(path):
            entries = list(real_scandir(path))
            if str(path).startswith(under):
                return [_NoInode(e) for e in entries]
            return entries

        monkeypatch.setattr(os, "scandir", scandir)
        walked = sorted(p.parent.name for p in bank.skills._walk(root))
        monkeypatch.undo()
        assert walked == ["nested", "second", "top"]  # and the loop still skipped
    finally:
        bank.close()
