"""A skill delete on a read-only `skills/` folder (hunt-disk #3, session 32).

With `<root>/skills` a read-only mount and the rest of the root writable, `skills delete`
failed as it should (the skill stays) but left a copy of the skill in `<root>/.trash` per try:
`shutil.move` across the mount copied the folder there, then failed to remove it. And the
message said the whole memory root was read-only and that skillbank writes there "even to
read", naming only 'SKILL.md', while reads of the same root all worked. Now the delete is
refused before anything is copied, leaves no trash folder, and the message names the folder.

The read-only mount is simulated (`read_only_skills.py`), in this process and in an owner
process alike; no root, no mount.
"""

from __future__ import annotations

import contextlib
import errno
from pathlib import Path
from typing import Any, Iterator

import pytest

import read_only_skills
from skillbank import Skillbank
from skillbank.embeddings import HashEmbedding
from skillbank.storage_errors import storage_message


@contextlib.contextmanager
def _bank(tmp_path: Path, remote: bool, monkeypatch: Any) -> Iterator[Any]:
    root = tmp_path / "root"
    if remote:
        from owner_client import client_bank, owner_process

        root.mkdir()
        with owner_process(root, preamble=read_only_skills.preamble(tmp_path)), \
                client_bank(root) as bank:
            yield bank
        return
    for target, name, value in read_only_skills.patches(tmp_path):
        monkeypatch.setattr(target, name, value)
    with Skillbank.open(root, embedding_function=HashEmbedding(),
                        include_bundled=False) as bank:
        yield bank


@pytest.mark.parametrize("remote", [False, True], ids=["in-process", "client-of-owner"])
def test_a_refused_delete_leaves_no_trash_copy_and_names_the_read_only_folder(
        tmp_path, remote, monkeypatch):
    """Before: a copy `.trash/deck-<stamp>-<rand>/deck` per try, and "the memory root is on a
    read-only file system ... writes its lock and index files there even to read"."""
    root = tmp_path / "root"
    with _bank(tmp_path, remote, monkeypatch) as bank:
        bank.skills.save("deck", "Make a slide deck.", "# Steps\n\n1. One idea a slide.\n")
        (tmp_path / "skills-read-only").touch()
        for _ in range(2):
            with pytest.raises(OSError) as refused:
                bank.skills.delete("deck")
            assert refused.value.errno == errno.EROFS or "[Errno 30]" in str(refused.value)
        trash = root / ".trash"
        assert not trash.exists() or not any(trash.iterdir()), list(trash.rglob("*"))
        assert not [p.name for p in (root / "skills").iterdir() if p.name.startswith(".")]
        assert bank.skills.names() == ["deck"] and "One idea" in bank.skills.load("deck").body
        said = storage_message(refused.value, root)
        assert said is not None and f"{root / 'skills'} is on a read-only file system" in said
        assert "even to read" not in said and "copy the root" not in said
        (tmp_path / "skills-read-only").unlink()
        bank.skills.delete("deck")  # writable again: deleted, its folder in the trash
        assert bank.skills.names() == []
        assert [p.name for p in trash.glob("*/deck")] == ["deck"]


def test_a_read_only_root_is_still_named_as_the_whole_root(tmp_path):
    """The root itself read-only (or a path outside it): the words for the whole root stay."""
    from skillbank.cli.reporting import _error_details

    ro = OSError(errno.EROFS, "Read-only file system", "/mnt/ro/root/.owner.lock")
    assert "copy the root somewhere writable" in storage_message(ro, "/mnt/ro/root")
    code, message, _ = _error_details(ro, tmp_path / "root")
    assert code == 5 and "copy the root somewhere writable" in message


def test_a_sweep_during_a_delete_across_mounts_keeps_the_skill_whole(tmp_path, monkeypatch):
    """Review 2 (session 32): a delete across file systems moved the folder aside under the
    `.removing-` prefix, which every sync's `sweep_removing` deletes; another process's sync
    during the copy deleted the only whole copy, the copy failed, and the skill was gone with
    nothing in `.trash`. The aside is now a `.moving-` folder no sweep touches: the delete
    ends with the skill whole in the trash."""
    import os
    import shutil

    from skillbank.memories.skills.authoring import sweep_removing

    with Skillbank.open(tmp_path / "root", embedding_function=HashEmbedding(),
                        include_bundled=False) as bank:
        bank.skills.create("csv-report", "Build a CSV report of sales.", "# CSV\n\nSteps.\n")
        skills = bank.skills.writable_root
        for i in range(4):
            (skills / "csv-report" / f"notes-{i}.md").write_text("x" * 100)
        trash = skills.parent / ".trash"
        real_rename, real_copytree = os.rename, shutil.copytree

        def rename(src, dst, *a, **k):  # .trash on another file system
            if Path(dst).parent.parent == trash:
                raise OSError(errno.EXDEV, "Invalid cross-device link")
            return real_rename(src, dst, *a, **k)

        copied: list = []

        def copy2(src, dst, **k):
            copied.append(src)
            if len(copied) == 2:
                sweep_removing(skills)  # another process's sync, meanwhile
            return shutil.copy2(src, dst, **k)

        monkeypatch.setattr(os, "rename", rename)
        monkeypatch.setattr(shutil, "copytree",
                            lambda s, d, **k: real_copytree(s, d, copy_function=copy2, **k))
        bank.skills.delete("csv-report")
        monkeypatch.undo()
        kept = [p for p in trash.rglob("SKILL.md")]
        assert len(kept) == 1 and (kept[0].parent / "notes-3.md").exists()
        assert not (skills / "csv-report").exists()
        assert not [p for p in skills.iterdir() if p.name.startswith(".")]
