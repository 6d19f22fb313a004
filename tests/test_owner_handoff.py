"""An owner that ends, by `close()` or by just exiting, finishes the clients' calls it took and
turns the others away unrun (hunt-handoff #1 and #2, session 33).

#1: the threads of a client process share one connection. When the owner closed (waiting for a
write it was running), another thread's call was refused, and that thread closed the shared
connection: the running write was cut, and its caller told "it may or may not have been applied"
for a write the owner finished. A refused or dead connection is now retired: closed when the
last call on it ends.

#2: an owner whose script ended without `bank.close()` went on admitting calls while the process
exited and died under them (writes it never ran reported "may or may not"). It now stops serving
at exit as close does: the calls it took run to their end, the rest go to the next owner.

The owner's embedding holds (tests/held_embedding.py) so the write is surely running in the owner
while it ends: the order is made by files, not by timing.
"""

from __future__ import annotations

import subprocess
import sys
import threading
import time

from owner_client import client_bank, owner_process
from test_multiprocess import env_for
from workers.common import open_bank

TASK = "Feed the otters at noon"  # "otters": the word the held embedding holds on


def _wait_for(check, what: str, seconds: float = 120.0) -> None:
    deadline = time.monotonic() + seconds
    while not check():
        assert time.monotonic() < deadline, f"waited {seconds} s for {what}"
        time.sleep(0.05)


def _write_in_thread(bank, task: str = TASK) -> tuple[threading.Thread, dict]:
    result: dict = {}

    def write() -> None:
        try:
            result["id"] = bank.experiences.record(task=task, outcome="success")
        except Exception as exc:  # noqa: BLE001 - the test says what it was
            result["error"] = exc

    thread = threading.Thread(target=write)
    thread.start()
    return thread, result


def _held(tmp_path):
    """A root, and the folder whose `hold` file makes the owner's embedding hold (it exists)."""
    root, held = tmp_path / "root", tmp_path / "held"
    (root / "skills").mkdir(parents=True)
    held.mkdir()
    (held / "hold").touch()
    return root, held


def _closing_while_writing(owner, bank, root, held) -> tuple[threading.Thread, dict]:
    """A write held in the owner, which is then told to close: it waits for the write and
    refuses new calls (its endpoint withdrawn)."""
    writing, result = _write_in_thread(bank)
    _wait_for((held / "embedding").exists, "the owner to run the write")
    owner.stdin.close()
    _wait_for(lambda: not (root / ".owner.json").exists(), "the owner to start closing")
    return writing, result


def _recorded(bank, task: str = TASK) -> list[str]:
    return [e.id for e in bank.experiences.list() if e.task == task]


def test_a_thread_refused_by_a_closing_owner_does_not_cut_another_thread_s_write(
        tmp_path, monkeypatch):
    from skillbank.sharing import connection

    retired = threading.Event()
    real_retire = connection._Connection.retire

    def retire(self) -> None:
        retired.set()
        real_retire(self)

    monkeypatch.setattr(connection._Connection, "retire", retire)
    root, held = _held(tmp_path)
    with owner_process(root, held=held) as owner, client_bank(root) as bank:
        writing, result = _closing_while_writing(owner, bank, root, held)
        other = threading.Thread(target=lambda: bank.skills.names(), daemon=True)
        other.start()  # another thread's call: refused, its connection retired
        assert retired.wait(60), "the other thread's call was not refused"
        (held / "hold").unlink()
        writing.join(120)
        assert "error" not in result, result.get("error")
        assert owner.wait(60) == 0
        other.join(60)
        assert _recorded(bank) == [result["id"]]  # finished by the closing owner, once


OWNER_EXITS = """
import sys
from skillbank import Skillbank
from held_embedding import HeldEmbedding
bank = Skillbank.open(sys.argv[1], embedding_function=HeldEmbedding(sys.argv[2]),
                      include_bundled=False)
print('ready', flush=True)
sys.stdin.readline()
# the script ends here without bank.close(): a normal interpreter exit
"""


def test_an_owner_that_exits_without_close_finishes_the_calls_it_took(tmp_path):
    root, held = _held(tmp_path)
    owner = subprocess.Popen([sys.executable, "-c", OWNER_EXITS, str(root), str(held)],
                             env=env_for(root), stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                             text=True)
    try:
        assert owner.stdout.readline().strip() == "ready"
        _wait_for((root / ".owner.json").exists, "the owner to serve")
        with client_bank(root) as bank:
            writing, result = _write_in_thread(bank)
            _wait_for((held / "embedding").exists, "the owner to run the write")
            owner.stdin.write("end\n")
            owner.stdin.flush()  # the owner's script ends while it runs the write
            _wait_for(lambda: not (root / ".owner.json").exists(), "the owner to stop serving")
            # a call now is turned away unrun, and goes to the next owner (this process)
            later, later_result = _write_in_thread(bank, "Water the ferns")
            (held / "hold").unlink()
            writing.join(120)
            later.join(120)
            assert "error" not in result, result.get("error")  # cut before: OwnerLostError
            assert "error" not in later_result, later_result.get("error")
            assert owner.wait(60) == 0
            assert _recorded(bank) == [result["id"]]
            assert _recorded(bank, "Water the ferns") == [later_result["id"]]
    finally:
        if owner.poll() is None:
            owner.kill()
            owner.wait()



WAITS_FOR_THE_LOCK = """
import sys
from workers.common import open_bank
print('started', flush=True)
bank = open_bank(sys.argv[1], lock_timeout=2)
print(bank.experiences.record(task='Water the ferns', outcome='success'), flush=True)
bank.close()
"""


def test_another_process_waits_for_a_closing_owner_past_its_lock_timeout(tmp_path):
    """hunt-handoff #3: a closing owner withdraws its endpoint and waits (up to 120 s) for the
    calls it took; another process gave up after its lock_timeout with "it has not published
    its endpoint yet ... share=False ... older skillbank", naming no process. It now waits for
    the closing owner (`.owner-holder.json`), then takes the root over."""
    root, held = _held(tmp_path)
    with owner_process(root, held=held) as owner, client_bank(root) as bank:
        writing, result = _closing_while_writing(owner, bank, root, held)
        other = subprocess.Popen([sys.executable, "-c", WAITS_FOR_THE_LOCK, str(root)],
                                 env=env_for(root), stdout=subprocess.PIPE,
                                 stderr=subprocess.PIPE, text=True)
        try:
            assert other.stdout.readline().strip() == "started"
            time.sleep(4)  # past its lock_timeout of 2 s, the owner still closing
            (held / "hold").unlink()
            out, err = other.communicate(timeout=180)
        finally:
            if other.poll() is None:
                other.kill()
        assert other.returncode == 0, err[-3000:]
        writing.join(120)
        assert "error" not in result, result.get("error")
        assert owner.wait(60) == 0
    with open_bank(root) as bank:
        assert _recorded(bank, "Water the ferns") == [out.strip()]
        assert _recorded(bank) == [result["id"]]


def test_a_call_on_a_connection_another_thread_retired_is_sent_on_the_next(tmp_path,
                                                                            monkeypatch):
    """Review of session 33: a thread that took the shared connection and had not sent its call
    yet, while another thread retired it (closed at once: no call on it), raised RuntimeError
    ("the client has been closed") to its caller. It now goes out on the next connection.
    The window is made by a hook, not by timing."""
    from skillbank.sharing import connection

    root = tmp_path / "root"
    (root / "skills").mkdir(parents=True)
    with owner_process(root), client_bank(root) as bank:
        bank.experiences.record(task="Warm up the connection", outcome="success")
        real_call = connection._Connection.call
        retired: list = []

        def call(self, payload):
            if not retired:
                retired.append(self)
                bank._drop(self)  # another thread found it dead, in the window
            return real_call(self, payload)

        monkeypatch.setattr(connection._Connection, "call", call)
        eid = bank.experiences.record(task=TASK, outcome="success")
        assert retired and _recorded(bank) == [eid]


OWNER_EXITS_WITH_WORK_LEFT = """
import sys, threading, time
from skillbank import Skillbank
from skillbank.embeddings import HashEmbedding
bank = Skillbank.open(sys.argv[1], embedding_function=HashEmbedding(), include_bundled=False)
print('ready', flush=True)
sys.stdin.readline()
threading.Thread(target=time.sleep, args=(6,)).start()  # the app's own work, not a daemon
# the script ends here without bank.close()
"""


def test_an_ending_owner_serves_after_the_interpreter_refuses_new_work(tmp_path):
    """Review of session 33: the exit hook runs at atexit, after the interpreter has shut
    `concurrent.futures` down and while it joins the app's own threads; the owner still serves
    then (as long as the app runs), and a client's `context_for` (its searches side by side on
    an executor) failed with "cannot schedule new futures after interpreter shutdown". They now
    run one after another then. (Stopping at threading's exit hooks instead stopped a parent's
    server from every forked child: review 2.)"""
    root = tmp_path / "root"
    (root / "skills").mkdir(parents=True)
    owner = subprocess.Popen([sys.executable, "-c", OWNER_EXITS_WITH_WORK_LEFT, str(root)],
                             env=env_for(root), stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                             text=True)
    try:
        assert owner.stdout.readline().strip() == "ready"
        _wait_for((root / ".owner.json").exists, "the owner to serve")
        with client_bank(root) as bank:
            bank.experiences.record(task=TASK, outcome="success")
            owner.stdin.write("end\n")
            owner.stdin.flush()
            time.sleep(1.5)  # within the 6 s the owner's process still ends
            ctx = bank.context_for("feed the otters")
            assert TASK in ctx.text
            assert owner.wait(60) == 0
    finally:
        if owner.poll() is None:
            owner.kill()
            owner.wait()


OWNER_HELD_WHILE_OPENING = """
import sys, time
from pathlib import Path
import skillbank.sharing.owner as owner_module
real_start = owner_module.OwnerServer.start
def start(self):  # holds the root's lock, not yet serving, until the gate file goes
    print('opening', flush=True)
    while Path(sys.argv[2]).exists():
        time.sleep(0.05)
    return real_start(self)
owner_module.OwnerServer.start = start
from workers.common import open_bank
bank = open_bank(sys.argv[1])
print('ready', flush=True)
sys.stdin.readline()
bank.close()
"""


def test_a_process_still_opening_the_root_is_named_and_a_stopped_one_said_so(tmp_path):
    """hunt-handoff #3 (B): a process that held the root's lock while it opened (or was stopped
    then) gave others "another process holds the memory root ...: it has not published its
    endpoint yet. A process that opened it with share=False ...": no pid, nothing of the stop.
    `.owner-holder.json` now names it: still opening (try again), or stopped (kill -CONT)."""
    import os
    import signal

    from skillbank.errors import BusyError
    from skillbank.sharing.client import OwnerNotAnsweringError

    root, gate = tmp_path / "root", tmp_path / "gate"
    (root / "skills").mkdir(parents=True)
    gate.touch()
    owner = subprocess.Popen([sys.executable, "-c", OWNER_HELD_WHILE_OPENING, str(root),
                              str(gate)], env=env_for(root), stdin=subprocess.PIPE,
                             stdout=subprocess.PIPE, text=True)
    try:
        assert owner.stdout.readline().strip() == "opening"
        try:
            open_bank(root, lock_timeout=1).close()
        except BusyError as exc:
            opening = str(exc)
        else:
            raise AssertionError("opened while another process held the root")
        assert f"process {owner.pid}" in opening and "opening the root" in opening, opening
        assert "share=False" not in opening, opening
        os.kill(owner.pid, signal.SIGSTOP)
        try:
            open_bank(root, lock_timeout=1).close()
        except OwnerNotAnsweringError as exc:
            stopped = str(exc)
        else:
            raise AssertionError("opened while another process held the root")
        finally:
            os.kill(owner.pid, signal.SIGCONT)
        assert f"process {owner.pid}" in stopped and f"kill -CONT {owner.pid}" in stopped, stopped
        gate.unlink()
        assert owner.stdout.readline().strip() == "ready"
        with client_bank(root) as bank:  # served now: the note is gone with the opening
            bank.experiences.record(task=TASK, outcome="success")
            assert not (root / ".owner-holder.json").exists()
    finally:
        if owner.poll() is None:
            owner.stdin.close()
            try:
                owner.wait(60)
            except subprocess.TimeoutExpired:
                owner.kill()
                owner.wait()


OWNER_FORKS = """
import multiprocessing, os, sys, time
from workers.common import open_bank
with open_bank(sys.argv[1]) as bank:
    bank._server.ready.wait(60)
    child = os.fork()
    if child == 0:
        sys.exit(0)  # a child that ends normally: it leaves the `with` and runs the exit hooks
    for _ in range(1200):  # a hung child is said so, not waited for without end
        if os.waitpid(child, os.WNOHANG)[0]:
            break
        time.sleep(0.05)
    else:
        os.kill(child, 9)
        print('child hung', flush=True)
    worker = multiprocessing.get_context("fork").Process(target=int)
    worker.start()
    worker.join()
    print('forked', flush=True)
    sys.stdin.readline()
"""


def test_a_forked_child_of_an_owner_leaves_its_parent_serving(tmp_path):
    """Review 2 of session 33: a forked child (os.fork, or multiprocessing's default start on
    Linux) ran the exit hook it inherited, stopped its copy of the parent's server and removed
    the parent's endpoint: every other process then waited 125 s and was told the owner was
    closing. A stop is a no-op in any process but the one that serves. Review 3: a child
    leaving the parent's `with Skillbank.open(...)` block closed the copy of the bank (its
    Chroma close hung, so the parent waited for ever; the lock it shares is the parent's): a
    close in a forked child now only marks its copy closed."""
    root = tmp_path / "root"
    (root / "skills").mkdir(parents=True)
    owner = subprocess.Popen([sys.executable, "-c", OWNER_FORKS, str(root)], env=env_for(root),
                             stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)
    try:
        assert owner.stdout.readline().strip() == "forked"
        assert (root / ".owner.json").exists() and not (root / ".owner-holder.json").exists()
        bank = open_bank(root, lock_timeout=5)
        try:
            assert bank.is_remote and bank.owner_pid == owner.pid
            bank.experiences.record(task=TASK, outcome="success")
        finally:
            bank.close()
    finally:
        owner.stdin.close()
        try:
            owner.wait(60)
        except subprocess.TimeoutExpired:
            owner.kill()
            owner.wait()


def test_a_failed_shared_open_takes_its_opening_note_away(tmp_path):
    """Review 2 of session 33: an open that failed after taking the lock (an embedding the
    root's index refuses, on a takeover) left its "opening" note while its process lived on;
    a later holder (share=False) was then named after it, "opening the root ... try again"."""
    import pytest

    from skillbank.settings import load_settings
    from skillbank.sharing import open_shared

    root = tmp_path / "root"

    def fail(lock):
        raise RuntimeError("the index refuses this embedding")

    with pytest.raises(RuntimeError):
        open_shared(load_settings(root), fail)
    assert not (root / ".owner-holder.json").exists()
    from skillbank.locks import owner_lock_held

    assert not owner_lock_held(root)
