"""`skillbank serve` stopped with SIGTERM closes its bank (hunt-ops #2).

SIGTERM is what `systemctl stop`, `docker stop`, a supervisor and MCP clients send. Python's
default for it ended the server at once (exit 143): recall use counts a client's calls had
buffered in the owner were lost (they decide pruning), as were the background writer's queue and
the keyword snapshot, and `.owner.json` was left behind. Now SIGTERM stops the server as Ctrl-C
does, for both transports: the bank is closed and the counts are on disk.
"""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from conftest import free_port
from mcp_http import wait_until_serving
from owner_client import client_bank
from test_mcp_transports import base_env
from workers.common import open_bank


def _wait_for_owner(proc: subprocess.Popen, root: Path, log: Path) -> None:
    """Until the server owns the root (its endpoint published); generous, for a loaded box."""
    deadline = time.time() + 300
    while not (root / ".owner.json").exists():
        if proc.poll() is not None:
            pytest.fail("server exited: " + log.read_text()[-3000:])
        assert time.time() < deadline, log.read_text()[-3000:]
        time.sleep(0.2)


def _terminate(proc: subprocess.Popen) -> int | None:
    """SIGTERM, as a supervisor sends it; its exit code (killed after a generous wait)."""
    try:
        proc.send_signal(signal.SIGTERM)
        return proc.wait(timeout=120)
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()


@pytest.mark.parametrize("transport", ["stdio", "http"])
def test_sigterm_closes_the_bank_and_keeps_buffered_use_counts(tmp_path, transport):
    root = tmp_path / "root"
    with open_bank(root) as bank:
        eid = bank.experiences.record(task="Migrate the orders table", outcome="success",
                                      feedback="Lock the table first.")
    port = free_port()
    argv = [sys.executable, "-m", "skillbank.cli", "serve", "--root", str(root), "--no-bundled"]
    if transport == "http":
        argv += ["--transport", "http", "--port", str(port)]
    log = tmp_path / "serve.log"
    proc = subprocess.Popen(argv, stdin=subprocess.PIPE, stdout=subprocess.DEVNULL,
                            stderr=log.open("w"), env=base_env(SKILLBANK_EMBEDDING="hash"))
    try:
        if transport == "http":
            wait_until_serving(proc, f"http://127.0.0.1:{port}", log, probe="/readyz",
                               status=200, seconds=300)
        _wait_for_owner(proc, root, log)
        with client_bank(root) as client:
            for _ in range(3):
                assert [hit.id for hit in client.experiences.recall("migrate the orders table")
                        ] == [eid]
    finally:
        code = _terminate(proc)
        proc.stdin.close()
    assert code == 0, log.read_text()[-3000:]
    assert not (root / ".owner.json").exists()
    with open_bank(root) as bank:
        assert not bank.is_remote
        assert bank.experiences.get(eid).usage.uses == 3


def test_sigterm_stops_a_team_worker_cleanly(tmp_path, chroma_server, postgres):
    """The team worker too: uvicorn raised SIGTERM again after its own shutdown and Python's
    default ended the process (143) before `bank.close()`."""
    from team_worker import start_server

    log = tmp_path / "worker.log"
    proc, _ = start_server(tmp_path / "root", chroma_server, postgres.url, log=log)
    code = _terminate(proc)
    said = log.read_text()
    assert code == 0, said[-3000:]  # uvicorn's stop, then `finally: bank.close()`, exit 0
    assert "Traceback" not in said, said[-3000:]


def _snapshot_folders(root: Path) -> dict[str, list[str]]:
    """Each index's snapshot folder and what it holds (`DIRTY`: not saved at close)."""
    base = root / ".cache" / "index"
    return {d.name: sorted(p.name for p in d.iterdir()) for d in base.iterdir() if d.is_dir()}


def test_sigterm_saves_the_keyword_snapshot_of_what_clients_wrote(tmp_path):
    """Soak #4: a server stopped by SIGTERM (exit 0) left only `DIRTY` in the experiences
    snapshot folder, so every start rebuilt the keyword side (15.7 s at 100k experiences).
    The bank opened on the loader thread and closed on the main one, and the owner lock was
    held per thread: close took the root for not its own and saved nothing."""
    root = tmp_path / "root"
    argv = [sys.executable, "-m", "skillbank.cli", "serve", "--root", str(root), "--no-bundled"]
    log = tmp_path / "serve.log"
    proc = subprocess.Popen(argv, stdin=subprocess.PIPE, stdout=subprocess.DEVNULL,
                            stderr=log.open("w"), env=base_env(SKILLBANK_EMBEDDING="hash"))
    try:
        _wait_for_owner(proc, root, log)
        with client_bank(root) as client:
            for n in range(3):
                client.experiences.record(task=f"Rotate the keys of tenant {n}",
                                          outcome="success")
    finally:
        code = _terminate(proc)
        proc.stdin.close()
    assert code == 0, log.read_text()[-3000:]
    folders = _snapshot_folders(root)
    experiences = [name for name in folders if "experiences" in name]
    assert experiences, folders
    for name in experiences:
        assert "DIRTY" not in folders[name] and "CURRENT" in folders[name], (folders,
                                                                          log.read_text()[-3000:])


def test_a_bank_closed_on_another_thread_than_it_opened_on_saves_and_lets_go(tmp_path):
    """The same in one process: opened on a thread, closed on this one (as the server does)."""
    import threading

    from skillbank.locks import owner_lock_held

    root = tmp_path / "root"
    opened: list = []
    thread = threading.Thread(target=lambda: opened.append(open_bank(root)))
    thread.start()
    thread.join()
    bank = opened[0]
    bank.experiences.record(task="Rotate the keys of tenant 1", outcome="success")
    bank.close()
    assert not owner_lock_held(root)
    folders = _snapshot_folders(root)
    assert any("experiences" in name and "CURRENT" in held and "DIRTY" not in held
               for name, held in folders.items()), folders


def test_a_stop_while_vectors_fill_still_writes_the_buffered_use_counts(tmp_path):
    """The server gives the bank a second to close; a fill still embedding after it left the
    bank unclosed, and its buffered use counts were lost with the process. Now they are
    flushed (the index stays open for the fill) even then."""
    import threading

    from mcp_server.loader import BankHandle
    from skillbank import Skillbank
    from skillbank.embeddings import HashEmbedding

    bank = Skillbank.open(tmp_path / "root", embedding_function=HashEmbedding(),
                          include_bundled=False)
    handle = BankHandle.ready(bank)
    release = threading.Event()
    handle._fill = threading.Thread(target=release.wait, daemon=True)  # a fill that goes on
    handle._fill.start()
    bank._usage("skills").record("skill:csv-report")  # a plain use: buffered, not yet written
    journal = tmp_path / "root" / "usage" / "skills.jsonl"
    assert "skill:csv-report" not in (journal.read_text() if journal.exists() else "")
    try:
        handle.close(wait=0.05)
        assert "skill:csv-report" in journal.read_text()
    finally:
        release.set()
        bank.close()
