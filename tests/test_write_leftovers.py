"""What a write cut short leaves (`atomic_write`'s `.<name>.<random>.tmp`) is removed where it
is safe: by the one writer of the file. Before, a `..owner.json.*.tmp` (a dead owner's secret)
stayed in the root for good; a forgotten rule's leftover is tested in test_forget.py."""

from __future__ import annotations

import time
from pathlib import Path

from owner_client import client_bank, owner_process
from skillbank.fsutil import remove_leftovers


def test_remove_leftovers_takes_only_the_files_own_temp_files(tmp_path):
    target = tmp_path / "a[1].md"  # glob characters in a name match only themselves
    mine = [tmp_path / ".a[1].md.x7k2m9qp.tmp", tmp_path / ".a[1].md.00000000.tmp"]
    others = [tmp_path / ".a1.md.x7k2m9qp.tmp", tmp_path / ".b.md.x7k2m9qp.tmp",
              tmp_path / "a[1].md", tmp_path / ".a[1].md.x7k2m9qp.tmpx"]
    for path in mine + others:
        path.write_text("x")
    remove_leftovers(target)
    assert [p for p in mine if p.exists()] == []
    assert all(p.exists() for p in others)
    remove_leftovers(tmp_path / "missing-folder" / "f")  # nothing there: no error


def test_a_new_owner_removes_what_a_killed_owner_left_of_its_endpoint(tmp_path):
    root = tmp_path / "root"
    root.mkdir()
    leftover = root / "..owner.json.q8w7e6r5.tmp"
    leftover.write_text('{"token": "a dead owner\'s secret"}')
    leftover.chmod(0o600)
    with owner_process(root):
        deadline = time.time() + 60
        while not (root / ".owner.json").exists() and time.time() < deadline:
            time.sleep(0.05)
        with client_bank(root) as bank:  # the endpoint the owner published works
            assert bank.experiences.count(namespace="*") == 0
        assert not leftover.exists()
    assert [p.name for p in Path(root).glob("..owner.json.*.tmp")] == []


def test_an_export_into_a_pipe_writes_into_it_and_leaves_it_a_pipe(tmp_path):
    """An export to /dev/null run as root replaced the device with a regular file (the temp
    file renamed over it), for every program on the machine. A FIFO stands in for it here: a
    regression must not break the machine that runs the tests."""
    import os
    import stat
    import threading

    from skillbank import Skillbank
    from skillbank.embeddings import HashEmbedding

    fifo = tmp_path / "pipe"
    os.mkfifo(fifo)
    link = tmp_path / "stdout-like"
    link.symlink_to(fifo)
    got: list[bytes] = []
    with Skillbank.open(tmp_path / "root", embedding_function=HashEmbedding(),
                        include_bundled=False) as bank:
        bank.experiences.record(task="Rotate the staging keys", outcome="success")
        for target in (fifo, link):
            reader = threading.Thread(target=lambda: got.append(fifo.read_bytes()), daemon=True)
            reader.start()
            assert bank.experiences.export(target) == 1
            reader.join(30)
            assert stat.S_ISFIFO(os.lstat(fifo).st_mode) and link.is_symlink()
    assert len(got) == 2 and all(b"Rotate the staging keys" in data for data in got)
    assert sorted(p.name for p in tmp_path.iterdir()) == ["pipe", "root", "stdout-like"]


def test_a_pipe_nobody_reads_is_a_clear_error_not_a_hang(tmp_path, monkeypatch):
    """Opening a FIFO for writing waits for a reader: with none, an export blocked for good
    (and an owner or MCP process with it)."""
    import os
    import threading

    import pytest

    from skillbank import fsutil
    from skillbank.errors import InvalidInputError

    monkeypatch.setattr(fsutil, "PIPE_READER_WAIT", 0.2)
    fifo = tmp_path / "pipe"
    os.mkfifo(fifo)
    outcome: list[BaseException] = []

    def write() -> None:
        try:
            fsutil.atomic_write(fifo, "line\n")
        except BaseException as exc:  # noqa: BLE001 - the test looks at it
            outcome.append(exc)

    worker = threading.Thread(target=write, daemon=True)
    worker.start()
    worker.join(60)
    assert not worker.is_alive(), "the write into a pipe nobody reads did not return"
    assert len(outcome) == 1 and isinstance(outcome[0], InvalidInputError)
    assert "nothing is reading" in str(outcome[0])


def test_a_file_on_the_way_is_named_in_a_clear_error(tmp_path):
    """An export below a regular file raised a bare FileExistsError."""
    import pytest

    from skillbank import fsutil
    from skillbank.errors import InvalidInputError

    (tmp_path / "notes.txt").write_text("mine")
    with pytest.raises(InvalidInputError, match="notes.txt"):
        fsutil.atomic_write(tmp_path / "notes.txt" / "sub" / "out.jsonl", "x\n")
    assert (tmp_path / "notes.txt").read_text() == "mine"


def test_a_socket_file_fails_at_once_and_a_broken_link_is_named(tmp_path):
    """Review: a Unix socket also answers ENXIO, and was waited on like a pipe, then called
    one; a broken link on the path was not named (the error named a folder that is not
    there)."""
    import errno
    import os
    import socket
    import time

    import pytest

    from skillbank import fsutil
    from skillbank.errors import InvalidInputError

    here = os.getcwd()
    os.chdir(tmp_path)  # a socket path must be short
    try:
        server = socket.socket(socket.AF_UNIX)
        server.bind("sock")
        server.listen()
        started = time.monotonic()
        with pytest.raises(OSError) as caught:
            fsutil.atomic_write(tmp_path / "sock", "x\n")
        assert caught.value.errno == errno.ENXIO and not isinstance(caught.value,
                                                                      InvalidInputError)
        assert time.monotonic() - started < fsutil.PIPE_READER_WAIT
        server.close()
    finally:
        os.chdir(here)
    (tmp_path / "dangling").symlink_to(tmp_path / "nowhere")
    with pytest.raises(InvalidInputError, match="dangling on its path is a broken link"):
        fsutil.atomic_write(tmp_path / "dangling" / "sub" / "out.jsonl", "x\n")
