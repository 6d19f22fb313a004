"""`forget` while other calls run leaves Chroma's SQLite file whole (hunt-mcpmany #1, session 24).

The erase rewrote `chroma.sqlite3` through Python's `sqlite3` module while Chroma's own SQLite
copy had it open in the same process: their locks never met, and under a few concurrent
sessions the file was damaged for good within seconds ("disk I/O error", then "database disk
image is malformed" on most calls; `PRAGMA integrity_check`: "Rowid ... out of order"). Here
threads search, record and add rules while another forgets, in this process and through a
client of the owner process; on the old code the file broke within the first few forgets.
"""

from __future__ import annotations

import random
import subprocess
import sys
import threading
import time
from pathlib import Path

import pytest

from owner_client import bank_for
from test_forget import open_bank

pytestmark = pytest.mark.slow

#: Forgets the test waits for: the old code broke the file within about three.
FORGETS = 12
WORDS = ("kafka redis postgres nginx terraform docker helm grafana webpack pytest celery "
         "airflow spark flask django react kotlin swift rust golang").split()


def integrity(db: Path) -> str:
    """`PRAGMA integrity_check` of `db`, from a process of its own (no Chroma beside it)."""
    done = subprocess.run([sys.executable, "-c", "import sqlite3, sys; print(sqlite3.connect("
                           "sys.argv[1]).execute('PRAGMA integrity_check').fetchone()[0])",
                           str(db)], capture_output=True, text=True, timeout=120)
    return (done.stdout or done.stderr).strip()


@pytest.mark.parametrize("remote", [False, True], ids=["in-process", "client-of-owner"])
def test_forget_beside_searches_and_writes_keeps_the_index_whole(tmp_path, remote):
    errors: list[str] = []
    experiences: dict[str, str] = {}  # acknowledged id -> its marker
    rules: list[str] = []
    forgotten: dict[str, str] = {}
    lock = threading.Lock()
    done = threading.Event()
    deadline = time.monotonic() + 300  # a stuck run fails below, never hangs the suite

    def guarded(what: str, call) -> None:
        try:
            call()
        except Exception as exc:  # noqa: BLE001 - every failure is a finding
            errors.append(f"{what}: {type(exc).__name__}: {exc}"[:300])

    with bank_for(tmp_path, remote) as bank:
        def reader(seed: int) -> None:
            rnd = random.Random(seed)
            while not done.is_set():
                guarded("search", lambda: bank.guidelines.search(" ".join(rnd.sample(WORDS, 4))))
                guarded("recall", lambda: bank.experiences.recall(" ".join(rnd.sample(WORDS, 4))))

        def writer(seed: int) -> None:
            rnd = random.Random(seed)
            while not done.is_set():
                marker = f"mark{seed}x{rnd.getrandbits(40):x}"

                def record() -> None:
                    eid = str(bank.experiences.record(
                        task=f"{marker} {' '.join(rnd.sample(WORDS, 5))}", outcome="failure",
                        feedback=f"{marker} feedback {' '.join(rnd.sample(WORDS, 3))}"))
                    with lock:
                        experiences[eid] = marker

                def rule() -> None:
                    added = bank.guidelines.add(f"Always check {' '.join(rnd.sample(WORDS, 4))} "
                                                f"before deploy {rnd.getrandbits(40):x}.")
                    with lock:
                        rules.append(added.guideline_id)

                guarded("record", record)
                guarded("add rule", rule)

        def forgetter() -> None:
            rnd = random.Random(7)
            while len(forgotten) < FORGETS and time.monotonic() < deadline and not errors:
                with lock:
                    open_ = [i for i in experiences if i not in forgotten]
                if len(open_) < 3:  # a few stay, for the checks after
                    time.sleep(0.05)
                    continue
                victim = rnd.choice(open_)
                guarded("forget", lambda: bank.forget(victim))
                forgotten[victim] = experiences[victim]
            done.set()

        threads = [threading.Thread(target=reader, args=(i,), daemon=True) for i in range(2)]
        threads += [threading.Thread(target=writer, args=(10 + i,), daemon=True)
                    for i in range(2)]
        threads.append(threading.Thread(target=forgetter, daemon=True))
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join(max(1.0, deadline + 60 - time.monotonic()))
        assert not [t for t in threads if t.is_alive()], f"a call never returned: {errors[:3]}"
    root = tmp_path / "root"
    assert integrity(root / "chroma" / "chroma.sqlite3") == "ok"
    assert errors == [], errors[:5]
    assert len(forgotten) == FORGETS
    data = (root / "chroma" / "chroma.sqlite3").read_bytes()
    assert not [m for m in forgotten.values() if m.encode() in data]  # forget means gone
    bank = open_bank(root)
    try:  # every acknowledged write is there, and no forgotten one
        kept = [i for i in experiences if i not in forgotten]
        assert [i for i in kept if i not in bank.experiences] == []
        assert [i for i in forgotten if i in bank.experiences] == []
        assert [g for g in rules if g not in bank.guidelines] == []
        found = bank.experiences.recall(experiences[kept[-1]], k=3)
        assert kept[-1] in [hit.id for hit in found]
    finally:
        bank.close()


def _last_slots(chroma: Path) -> list[tuple[Path, int]]:
    """(data_level0.bin, offset of its last slot) of every HNSW segment folder under `chroma`."""
    from skillbank.forgetting import _HEADER

    slots = []
    for header in sorted(chroma.glob("*/header.bin")):
        _, _, max_elements, count, per_element, _, _ = _HEADER.unpack_from(header.read_bytes())
        assert count < max_elements - 1
        slots.append((header.parent / "data_level0.bin", (max_elements - 1) * per_element))
    return slots


def test_forget_zeroes_hnsw_files_only_between_chroma_calls(tmp_path):
    """hnswlib's unused capacity (uninitialised memory, seen holding text) is zeroed by
    `forget`, but only while no call into Chroma runs in the process: Chroma writes those files
    in place during any call that applies its log, a search's too, and a tail zeroed meanwhile
    could wipe vectors it had just written (hunt-mcpmany #1, session 24). A call in flight is
    held here at the gate every call passes (`skillbank.chroma_gate`), as a call inside Chroma
    holds it. In this process only: the gate is the owner process's own."""
    from skillbank.chroma_gate import gate_of

    root = tmp_path / "root"
    bank = open_bank(root)
    try:
        ids = [str(bank.experiences.record(task=f"Rotate the keys of cluster {i}",
                                           outcome="success")) for i in range(5)]
        slots = _last_slots(root / "chroma")
        assert slots  # the segment files exist (the test can fail)
        for path, at in slots:  # what hnswlib dumps from uninitialised memory, as it were
            with path.open("r+b") as handle:
                handle.seek(at)
                handle.write(b"\xab" * 64)
        gate = gate_of(bank.client)
        forgot = threading.Thread(target=bank.forget, args=(ids[0],))
        with gate.call():  # a Chroma call in flight
            forgot.start()
            deadline = time.monotonic() + 120
            while not gate._waiting and forgot.is_alive() and time.monotonic() < deadline:
                time.sleep(0.01)
            assert gate._waiting == 1  # the forget waits for the call to end
            assert all(path.read_bytes()[at:at + 64] == b"\xab" * 64 for path, at in slots)
        forgot.join(120)
        assert not forgot.is_alive()
        assert all(path.read_bytes()[at:at + 64] == bytes(64) for path, at in slots)
        assert ids[0] not in bank.experiences
    finally:
        bank.close()


def test_the_gate_gives_up_on_a_call_that_does_not_end():
    """A Chroma call that does not end (a lock another process holds) leaves the zeroing for
    the close instead of holding every later call back (`skillbank.chroma_gate`)."""
    from skillbank.chroma_gate import Gate

    gate = Gate()
    later = threading.Event()

    def another_call() -> None:
        with gate.call():
            later.set()

    with gate.call():
        with gate.alone(wait=0.2) as alone:
            assert alone is False
        with gate.call():  # a call made inside a call goes through
            pass
        thread = threading.Thread(target=another_call)
        thread.start()
        thread.join(60)
        assert later.is_set()  # not held back once the zeroing gave up
    with gate.alone(wait=60) as alone:
        assert alone is True


def test_a_second_zeroing_that_gives_up_leaves_the_first_ones_hold():
    """Two forgets zeroing at once: the one whose wait ran out cleared the other's hold, and
    Chroma calls ran while the first was still zeroing hnswlib's files (review F5, session 25).
    Events, not timing: the second gives up while the first holds the gate."""
    from skillbank.chroma_gate import Gate

    gate = Gate()
    holding, second_done, released = threading.Event(), threading.Event(), threading.Event()
    ran_while_held: list[bool] = []

    def first() -> None:
        with gate.alone(wait=60) as alone:
            assert alone
            holding.set()
            second_done.wait(60)
            caller.start()
            caller.join(0.5)  # a call must wait for the hold to end
            ran_while_held.append(not caller.is_alive())
        released.set()

    def second() -> None:
        holding.wait(60)
        with gate.alone(wait=0.05) as alone:
            assert alone is False
        second_done.set()

    def a_call() -> None:
        with gate.call():
            pass

    caller = threading.Thread(target=a_call)
    threads = [threading.Thread(target=first), threading.Thread(target=second)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(120)
    caller.join(60)
    assert released.is_set() and ran_while_held == [False]
    assert not caller.is_alive()  # and it went through once the hold ended
