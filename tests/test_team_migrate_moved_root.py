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


def _root_with_rules(root) -> list[str]:
    bank = _open(root)
    try:
        return [bank.guidelines.learn(text).ids()[0] for text in (
            "Pin the base image of every container build.",
            "Rotate the staging keys each Friday.")]
    finally:
        bank.close()


def _team_votes(url: str, deployment: str, gid: str, helpful: int) -> None:
    """The team moves on: `helpful` more votes on one imported rule (the deployment's store)."""
    from skillbank.store.postgres import PostgresStore

    with PostgresStore(url, deployment=deployment) as store:
        records = store.guidelines()
        rule = records.load().records[gid][0]
        records.save(rule.model_copy(update={"helpful": rule.helpful + helpful}), rule)


def _team_rules(url: str, deployment: str) -> dict[str, tuple[str, int]]:
    from skillbank.store.postgres import PostgresStore

    with PostgresStore(url, deployment=deployment) as store:
        return {gid: (g.status, g.helpful)
                for gid, (g, _) in store.guidelines().load().records.items()}


def _restore_elsewhere(root, to):
    """operating.md's backup (`tar --exclude=chroma --exclude=.cache`), the old folder removed,
    the backup unpacked at a new path, and the root opened there (its index rebuilt)."""
    shutil.copytree(root, to, symlinks=True, ignore=shutil.ignore_patterns("chroma", ".cache"))
    shutil.rmtree(root)
    _open(to).close()


def test_the_rules_of_a_root_restored_to_a_new_path_are_not_imported_again(tmp_path, postgres):
    """hunt-teamport #4, session 35: migrate kept each rule's digest with the file's full path
    in it, so after a restore to a new path every rule the team had changed since (a vote) was
    merged, saved again and reported: "Imported 2 guidelines", for a root that changed none.
    Now the digest migrate keeps names the file's place in the root's `guidelines/` folder."""
    from skillbank.team.migrate import migrate_root

    laptop = tmp_path / "laptop"
    rules = _root_with_rules(laptop)
    deployment = uuid.uuid4().hex[:16]
    assert migrate_root(laptop, postgres.url, deployment=deployment).imported["guidelines"] == 2
    for gid in rules:
        _team_votes(postgres.url, deployment, gid, 3)
    team = _team_rules(postgres.url, deployment)

    moved = tmp_path / "restored" / "laptop"
    _restore_elsewhere(laptop, moved)
    again = migrate_root(moved, postgres.url, deployment=deployment)
    assert again.copy_of is None, again.summary()
    assert again.imported["guidelines"] == 0 and not again.changed, again.summary()
    assert _team_rules(postgres.url, deployment) == team


def test_a_note_an_older_run_kept_by_full_path_still_holds_and_is_renewed(tmp_path, postgres):
    """A deployment migrated by an older skillbank keeps each rule's digest by the file's full
    path: a rerun on the root where it was leaves its rules alone (as before) and notes them
    again by their place in the folder, so the root can move after it."""
    import psycopg
    from psycopg.types.json import Jsonb

    from skillbank.store.files.guidelines import FileGuidelineRecords
    from skillbank.team.migrate import migrate_root

    laptop = tmp_path / "laptop"
    rules = _root_with_rules(laptop)
    deployment = uuid.uuid4().hex[:16]
    migrate_root(laptop, postgres.url, deployment=deployment)
    folder = laptop / "guidelines"
    full_path = {gid: FileGuidelineRecords._digest(path, path.read_bytes())
                 for gid in rules for path in folder.glob(f"*/{gid}.md")}
    with psycopg.connect(postgres.url) as conn:  # as an older run wrote it
        conn.execute("UPDATE sb_imports SET position = %s WHERE deployment = %s "
                     "AND part = 'guidelines'", (Jsonb(full_path), deployment))
    for gid in rules:
        _team_votes(postgres.url, deployment, gid, 2)
    team = _team_rules(postgres.url, deployment)

    again = migrate_root(laptop, postgres.url, deployment=deployment)
    assert again.imported["guidelines"] == 0, again.summary()
    moved = tmp_path / "restored" / "laptop"
    _restore_elsewhere(laptop, moved)
    third = migrate_root(moved, postgres.url, deployment=deployment)
    assert third.imported["guidelines"] == 0 and not third.changed, third.summary()
    assert _team_rules(postgres.url, deployment) == team
