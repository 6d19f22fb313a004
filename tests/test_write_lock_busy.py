"""The root's write lock held too long by another process is `BusyError`, never filelock.Timeout.

Another process really holds `<root>/.write.lock` (a FileLock is re-entrant inside one process,
so a second holder in this process would prove nothing). Every memory's writes, opening with a
sync, server mode and the CLI (exit code 6) are covered; nothing is written while the lock is
held, and the same bank writes normally once the other process lets go.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from pathlib import Path

import pytest
from filelock import Timeout

from workers.common import open_bank

HOLD = """
import sys
from filelock import FileLock

lock = FileLock(sys.argv[1])
lock.acquire()
print("HELD", flush=True)
sys.stdin.readline()
lock.release()
print("RELEASED", flush=True)
"""

SHORT = 0.3


class Holder:
    """Another process holding a root's write lock until `release()`."""

    def __init__(self, root: Path) -> None:
        root.mkdir(parents=True, exist_ok=True)
        self.proc = subprocess.Popen([sys.executable, "-c", HOLD, str(root / ".write.lock")],
                                     stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                                     stderr=subprocess.PIPE, text=True)
        line = self.proc.stdout.readline()
        assert line.strip() == "HELD", self.proc.stderr.read()

    def release(self) -> None:
        if self.proc.poll() is None:
            self.proc.stdin.write("go\n")
            self.proc.stdin.flush()
            assert self.proc.stdout.readline().strip() == "RELEASED"
            self.proc.wait(timeout=120)

    def stop(self) -> None:
        if self.proc.poll() is None:
            self.proc.kill()
        self.proc.wait(timeout=120)
        for stream in (self.proc.stdin, self.proc.stdout, self.proc.stderr):
            stream.close()


@pytest.fixture
def hold():
    """`hold(root)` starts another process holding root's write lock; all stop at teardown."""
    holders: list[Holder] = []

    def start(root: Path) -> Holder:
        holders.append(Holder(root))
        return holders[-1]

    yield start
    for holder in holders:
        holder.stop()


def files(root: Path, bank) -> dict[str, bytes]:
    """Every file under the root but the locks and the Chroma store: what a write would touch."""
    chroma = Path(bank.settings.chroma_path)
    return {str(p.relative_to(root)): p.read_bytes() for p in sorted(root.rglob("*"))
            if p.is_file() and not p.name.endswith(".lock") and chroma not in p.parents}


def assert_busy(caught, root: Path) -> None:
    from skillbank.errors import BusyError, SkillbankError

    exc = caught.value
    assert isinstance(exc, BusyError) and isinstance(exc, SkillbankError)
    assert not isinstance(exc, Timeout)
    assert exc.exit_code == 6
    message = str(exc)
    assert str(root) in message
    assert "another process is writing" in message and "try again" in message


# The three memories' writes, and how to see that one landed.
def record_experience(bank):
    return bank.experiences.record(task="deploy billing with migrations", outcome="success",
                                   lessons=["run migrations before the deploy"])


def add_guideline(bank):
    return bank.guidelines.add("Always run the migrations before deploying billing",
                               topic="deploys")


def create_skill(bank):
    return bank.skills.create("deploy-billing", "Deploy the billing service with migrations",
                              "# Steps\n\nRun the migrations, then deploy.\n")


WRITES = {
    "experience": (record_experience,
                   lambda bank: bank.experiences.count(namespace="*", kind="experience"),
                   lambda bank: bank.experiences.recall("deploy billing migrations")),
    "guideline": (add_guideline,
                  lambda bank: sum(bank.guidelines.counts(namespace="*").values()),
                  lambda bank: bank.guidelines.search("deploy billing migrations")),
    "skill": (create_skill,
              lambda bank: len(bank.skills.list()),
              lambda bank: bank.skills.search("deploy billing migrations")),
}


@pytest.mark.parametrize("kind", sorted(WRITES))
def test_a_write_blocked_by_another_process_is_busy_and_writes_nothing(tmp_path, hold, kind):
    from skillbank.errors import BusyError

    write, count, search = WRITES[kind]
    root = tmp_path / "root"
    bank = open_bank(root, lock_timeout=5)
    bank.write_lock.timeout = SHORT  # the lock the memories share, so this reaches all of them
    try:
        before = files(root, bank)
        holder = hold(root)
        started = time.monotonic()
        with pytest.raises(BusyError) as caught:
            write(bank)
        waited = time.monotonic() - started
        assert SHORT * 0.8 <= waited < 10, waited
        assert_busy(caught, root)
        assert files(root, bank) == before
        assert count(bank) == 0

        holder.release()
        write(bank)
        assert count(bank) == 1
        assert search(bank)
    finally:
        bank.close()
    reopened = open_bank(root, lock_timeout=5)
    try:
        assert count(reopened) == 1
    finally:
        reopened.close()


def test_every_way_of_taking_the_write_lock_says_busy(tmp_path, hold):
    from skillbank.errors import BusyError

    root = tmp_path / "root"
    bank = open_bank(root, sync=False, lock_timeout=5)
    try:
        bank.write_lock.timeout = SHORT
        hold(root)
        with pytest.raises(BusyError) as caught:
            with bank.write_lock:
                pass
        assert_busy(caught, root)
        assert f"within {SHORT:g} s" in str(caught.value)
        with pytest.raises(BusyError) as caught:
            bank.write_lock.acquire(timeout=0.05)
        assert "within 0.05 s" in str(caught.value)
        with pytest.raises(BusyError) as caught:
            bank.write_lock.acquire(blocking=False)
        assert "at once" in str(caught.value)
        assert not bank.write_lock.is_locked
    finally:
        bank.close()


def test_write_lock_timeout_is_a_keyword_of_open_and_defaults_to_60_s(tmp_path, hold):
    from skillbank import Skillbank
    from skillbank.embeddings import HashEmbedding
    from skillbank.errors import BusyError
    from skillbank.settings import load_settings

    plain = Skillbank(load_settings(tmp_path / "plain"), embedding_function=HashEmbedding())
    try:
        assert plain.write_lock.timeout == 60
    finally:
        plain.close()

    root = tmp_path / "root"
    hold(root)
    started = time.monotonic()
    with pytest.raises(BusyError):
        # Opening syncs, and a sync takes the write lock too.
        Skillbank.open(root, embedding_function=HashEmbedding(), write_lock_timeout=SHORT)
    assert time.monotonic() - started < 10


def test_an_open_that_fails_busy_lets_go_of_the_root(tmp_path, hold):
    """Open's sync raising must not leave this process holding the embedded root's owner lock:
    a retry in the same process (an MCP server, a notebook) would otherwise be busy too."""
    from skillbank import Skillbank
    from skillbank.embeddings import HashEmbedding
    from skillbank.errors import BusyError

    root = tmp_path / "root"
    holder = hold(root)
    with pytest.raises(BusyError):
        Skillbank.open(root, embedding_function=HashEmbedding(), write_lock_timeout=SHORT)
    holder.release()
    bank = Skillbank.open(root, embedding_function=HashEmbedding(), lock_timeout=0.5)
    try:
        assert record_experience(bank).startswith("exp-")
    finally:
        bank.close()


def test_server_mode_a_writer_that_outlasts_the_timeout_is_busy(tmp_path, hold, chroma_server):
    """The case the lock exists for: processes sharing one root through a Chroma server."""
    from skillbank.errors import BusyError

    root = tmp_path / "root"
    prefix = f"busy{os.getpid()}x{time.monotonic_ns() % 10**6}"
    bank = open_bank(root, chroma_url=chroma_server, prefix=prefix)
    other = open_bank(root, chroma_url=chroma_server, prefix=prefix)
    try:
        bank.write_lock.timeout = SHORT
        holder = hold(root)
        before = files(root, bank)
        with pytest.raises(BusyError) as caught:
            record_experience(bank)
        assert_busy(caught, root)
        assert files(root, bank) == before
        assert other.experiences.count(namespace="*") == 0  # the index is the server's, shared

        holder.release()
        eid = record_experience(bank)
        other.sync()
        assert other.experiences.get(eid).id == eid
    finally:
        other.close()
        bank.close()


# CLI --------------------------------------------------------------------------------------------
@pytest.fixture
def cli_env(cli_root, monkeypatch):
    """The CLI on a clean temp root (conftest.cli_root), its banks' write lock timeout short."""
    from skillbank.bank import Skillbank

    root = cli_root
    original = Skillbank.open.__func__

    def short_open(cls, *args, **kwargs):
        kwargs.setdefault("write_lock_timeout", SHORT)
        return original(cls, *args, **kwargs)

    monkeypatch.setattr(Skillbank, "open", classmethod(short_open))
    return root


RECORD = ["--no-bundled", "experiences", "record", "--task", "deploy billing", "--outcome",
          "success"]


def test_cli_exits_6_with_a_clear_line_when_another_process_is_writing(cli_env, hold):
    from typer.testing import CliRunner

    from skillbank.cli import app

    runner = CliRunner()
    holder = hold(cli_env)
    result = runner.invoke(app, RECORD)
    assert result.exit_code == 6, (result.stdout, result.stderr, result.exception)
    line = result.stderr.strip()
    assert line.startswith("Error: another process is writing to the memory at "), line
    assert str(cli_env) in line and "try again" in line and "Timeout" not in line

    result = runner.invoke(app, ["--json", *RECORD])
    assert result.exit_code == 6
    payload = json.loads(result.stderr.strip())
    assert payload["type"] == "BusyError" and payload["exit_code"] == 6

    holder.release()
    result = runner.invoke(app, ["--json", *RECORD])
    assert result.exit_code == 0, (result.stdout, result.stderr, result.exception)
    assert json.loads(result.stdout)["id"].startswith("exp-")
