"""A root moved to another disk or restored from a backup is the same root to `skillbank
migrate` (review of skillbank/team/migrate_source.py).

Users met this: a root moved across file systems (`mv` to another disk, `rsync`, `cp -a`, a
restore from backup to a new path) has a new folder AND a new inode for its `.skillbank-id`;
the next migrate took it for a copy of the root at a folder that no longer existed, imported it
as a source of its own from its beginning, and its usage counts were doubled. Now a root whose
recorded origin folder no longer holds a root with its id is taken as moved. A copy whose
original is still there stays a copy, and stays one after its original is gone.
Real private PostgreSQL cluster.
"""

from __future__ import annotations

import shutil
import uuid

import pytest

from skillbank import Skillbank
from skillbank.embeddings import HashEmbedding

pytest.importorskip("psycopg")


def _open(root):
    return Skillbank.open(root, embedding_function=HashEmbedding(), include_bundled=False,
                          share=False)


def _usage(url: str, deployment: str) -> list[tuple]:
    import psycopg

    with psycopg.connect(url) as conn:
        return sorted(conn.execute("SELECT memory, item_id, uses, successes FROM sb_usage "
                                   "WHERE deployment = %s", (deployment,)).fetchall())


def _root_with_usage(root) -> None:
    bank = _open(root)
    try:
        eid = bank.experiences.record("Rotate the staging keys", "success",
                                      feedback="done via vault")
        for _ in range(3):
            bank.rate(eid, True)
    finally:
        bank.close()


def test_a_root_moved_to_another_disk_is_not_imported_again(tmp_path, postgres):
    from skillbank.team.migrate import migrate_root

    laptop = tmp_path / "laptop"
    _root_with_usage(laptop)
    deployment = uuid.uuid4().hex[:16]
    migrate_root(laptop, postgres.url, deployment=deployment)
    usage = _usage(postgres.url, deployment)
    assert any(successes == 3 for *_, successes in usage), usage

    moved = tmp_path / "newdisk" / "laptop"  # a copy then a delete: a new inode, a new folder
    shutil.copytree(laptop, moved, symlinks=True)
    shutil.rmtree(laptop)
    again = migrate_root(moved, postgres.url, deployment=deployment)
    assert again.copy_of is None, again.summary()
    assert not again.changed, again.summary()
    assert _usage(postgres.url, deployment) == usage, "the moved root's usage was doubled"
    # The origin now records where the root is: a copy of it made later is still a copy.
    third = tmp_path / "third"
    shutil.copytree(moved, third, symlinks=True)
    assert migrate_root(third, postgres.url, deployment=deployment).copy_of == str(
        moved.resolve())


def test_a_copy_stays_a_copy_once_its_original_is_gone(tmp_path, postgres):
    from skillbank.team.migrate import migrate_root

    alice, bob = tmp_path / "alice", tmp_path / "bob"
    _root_with_usage(alice)
    shutil.copytree(alice, bob)  # cp -r while alice is in use
    deployment = uuid.uuid4().hex[:16]
    migrate_root(alice, postgres.url, deployment=deployment)
    first = migrate_root(bob, postgres.url, deployment=deployment)
    assert first.copy_of == str(alice.resolve())
    usage = _usage(postgres.url, deployment)
    shutil.rmtree(alice)
    again = migrate_root(bob, postgres.url, deployment=deployment)
    assert not again.changed, again.summary()
    assert _usage(postgres.url, deployment) == usage
