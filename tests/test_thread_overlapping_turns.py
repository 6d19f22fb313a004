"""Overlapping turns of one conversation (hunt-teamclock #3, session 30): two turns of one
`thread` recorded at once (a LangChain middleware recording in the background, two replicas or
two threads of an app) both land on the thread's one record.

Before, a turn looked its thread up and read the version it extends before taking the write
lock. Two first turns each started a record (the thread split in two), and of two later turns
the second journaled an update on the version both had read, so the first one's steps were
gone: 12 of 20 turns kept, in one process with two threads as across team workers. Each
call answered normally.

No timing: the first turn's embedding (made between its look-up and the lock) holds on a file
(`held_embedding.py`, the word "otters" in its feedback) while the other turn is recorded
whole, which is the overlap, every time. In one process (two threads on one bank) and on two
team workers of one deployment; an owner process runs its clients' writes one at a time, so
there the turns of two clients are only checked to be kept.
"""

from __future__ import annotations

import contextlib
import re
import threading
import time
import uuid
from pathlib import Path
from typing import Any, Iterator

from held_embedding import HeldEmbedding
from team_worker import until

TASK = "Migrate the orders table to the new schema"
THREAD = "conversation-7"
HELD_FEEDBACK = "The otters import script needs the read replica."


def _turn(who: str, number: int) -> list[dict[str, str]]:
    return [{"role": "user", "content": f"Next part of the migration please ({who}-{number})"},
            {"role": "assistant", "content": f"step {who}-{number}: migrated the next batch"}]


def _kept(experience: Any) -> list[str]:
    return re.findall(r"step (\w+-\d+)", " ".join(str(s) for s in experience.steps))


@contextlib.contextmanager
def _while_held(folder: Path, first: Any, second: Any) -> Iterator[dict[str, Any]]:
    """Run `first` in a thread until its embedding holds, then `second` whole, then let `first`
    go; yields what each returned (joined when the block is entered)."""
    (folder / "hold").touch()
    answers: dict[str, Any] = {}

    def run_first() -> None:
        try:
            answers["first"] = first()
        except BaseException as exc:  # noqa: BLE001 - reported by the test
            answers["first"] = exc

    worker = threading.Thread(target=run_first, daemon=True)
    worker.start()
    deadline = time.monotonic() + 120  # a wait for the hold, not a bound on anything
    while not (folder / "embedding").exists():
        assert worker.is_alive(), f"the first turn ended without embedding: {answers}"
        assert time.monotonic() < deadline, "the first turn never reached its embedding"
        time.sleep(0.02)
    try:
        answers["second"] = second()
    finally:
        (folder / "hold").unlink()
        worker.join(timeout=120)
    assert not worker.is_alive(), "the first turn did not finish"
    assert not isinstance(answers["first"], BaseException), answers["first"]
    yield answers


@contextlib.contextmanager
def _bank(tmp_path: Path) -> Iterator[tuple[Any, Path]]:
    """A bank in this process whose embedding holds."""
    from skillbank import Skillbank

    folder = tmp_path / "gate"
    folder.mkdir()
    with Skillbank.open(tmp_path / "root", embedding_function=HeldEmbedding(folder),
                        include_bundled=False) as bank:
        yield bank, folder


def _record(bank: Any, who: str, number: int, **extra: Any) -> str:
    return bank.experiences.record_messages(_turn(who, number), task=TASK, thread=THREAD,
                                            **extra)


def _thread_records(bank: Any) -> list[Any]:
    return [e for e in bank.experiences.list(namespace="*", kind="experience", limit=100)
            if e.thread == THREAD]


def test_two_first_turns_at_once_are_one_record(tmp_path):
    """Before: each first turn found no record and started one (two records, each answered
    as the thread's)."""
    with _bank(tmp_path) as (bank, folder):
        with _while_held(folder, lambda: _record(bank, "a", 0, feedback=HELD_FEEDBACK),
                         lambda: _record(bank, "b", 0)) as answers:
            pass
        [record] = _thread_records(bank)
        assert answers["first"] == answers["second"] == record.id
        assert sorted(_kept(record)) == ["a-0", "b-0"]
        assert record.feedback == HELD_FEEDBACK


def test_a_turn_recorded_while_another_is_embedded_keeps_both(tmp_path):
    """Before: the held turn journaled an update on the version both turns had read, and the
    other turn's steps were gone from the record (its call had answered the record's id)."""
    with _bank(tmp_path) as (bank, folder):
        first = _record(bank, "a", 0)
        with _while_held(folder, lambda: _record(bank, "a", 1, feedback=HELD_FEEDBACK),
                         lambda: _record(bank, "b", 1)) as answers:
            pass
        [record] = _thread_records(bank)
        assert answers["first"] == answers["second"] == first == record.id
        assert _kept(record) == ["a-0", "b-1", "a-1"]
        assert record.feedback == HELD_FEEDBACK
        _record(bank, "b", 2)  # and the thread goes on from there
        assert _kept(bank.experiences.get(first)) == ["a-0", "b-1", "a-1", "b-2"]


def test_overlapping_turns_on_two_team_workers_keep_every_turn(tmp_path, chroma_server,
                                                                 postgres):
    """Worker A's turn is held after A read the thread (A's copy of the index still shows the
    version before); worker B records a turn meanwhile. Before: A's update extended the
    version before B's, and B's turn was gone; two first turns made two records."""
    from skillbank import Skillbank
    from skillbank.embeddings import HashEmbedding

    folder = tmp_path / "gate"
    folder.mkdir()
    deployment = uuid.uuid4().hex[:16]
    options = dict(include_bundled=False, chroma_url=chroma_server, database_url=postgres.url,
                   deployment=deployment)
    with Skillbank.open(tmp_path / "machine-a", embedding_function=HeldEmbedding(folder),
                        **options) as a, \
            Skillbank.open(tmp_path / "machine-b", embedding_function=HashEmbedding(),
                           **options) as b:
        with _while_held(folder, lambda: _record(a, "a", 0, feedback=HELD_FEEDBACK),
                         lambda: _record(b, "b", 0)) as answers:
            pass
        assert answers["first"] == answers["second"]
        eid = answers["first"]
        assert sorted(_kept(a.experiences.get(eid))) == ["a-0", "b-0"]
        with _while_held(folder, lambda: _record(a, "a", 1, feedback=HELD_FEEDBACK + " Again."),
                         lambda: _record(b, "b", 1)) as answers:
            pass
        assert answers["first"] == answers["second"] == eid
        assert [r.id for r in _thread_records(a)] == [eid]
        kept = _kept(a.experiences.get(eid))
        assert sorted(kept[:2]) == ["a-0", "b-0"] and kept[2:] == ["b-1", "a-1"]
        # B reads the same one record (once its copy of the index has heard of A's write).
        until(lambda: [(r.id, _kept(r)) for r in _thread_records(b)] == [(eid, kept)])


def test_turns_of_one_thread_from_two_clients_of_an_owner_at_once(tmp_path):
    """Through clients of an owner process the owner runs client writes one at a time (its
    `writes` lock), so their turns never overlap there and no embedding can be held between
    them (the second would wait for the first): this passed before too, and guards that two
    clients recording one conversation at once still keep every turn on one record."""
    from owner_client import client_bank, owner_process

    root = tmp_path / "root"
    root.mkdir()
    with owner_process(root), client_bank(root) as one, client_bank(root) as two:
        threads = [threading.Thread(target=lambda bank=bank, who=who: [
            _record(bank, who, number) for number in range(4)])
            for bank, who in ((one, "a"), (two, "b"))]
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join(timeout=300)
        [record] = _thread_records(one)
        assert sorted(_kept(record)) == sorted(f"{w}-{n}" for w in "ab" for n in range(4))
