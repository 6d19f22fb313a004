"""Use counts and ratings when the disk refuses a write partway (hunt-disk #1 and #2, session 29).

#1: a flush of buffered uses cut short by a full disk left ~8 KB of it in the log (whole lines
and a torn one) and every event still buffered: the next flush wrote them again after the torn
bytes, 300 uses counted 411 and a line was glued to the torn one; 45 of the 300 plain uses
raised ENOSPC to their callers. #2: a `success=False` that raised was written anyway by the next
flush, so the caller's retry counted it twice.

A write cut short is real here: the process that owns the log gets a file size limit
(RLIMIT_FSIZE, `ulimit -f`), so the kernel takes the bytes up to the limit and refuses the rest
(EFBIG, as a full disk refuses with ENOSPC) — no root, no full file system needed. In process and
in an owner process serving a client; the counts are read after the bank is opened again.
"""

from __future__ import annotations

import contextlib
import json
import os
import resource
from pathlib import Path
from typing import Any, Iterator

import pytest

from owner_client import client_bank, owner_process
from skillbank import Skillbank
from skillbank.embeddings import HashEmbedding

REMOTE = pytest.mark.parametrize("remote", [False, True], ids=["in-process", "client-of-owner"])
SKILL = "pdf-tables"


@contextlib.contextmanager
def bank_and_owner(tmp_path: Path, remote: bool) -> Iterator[tuple[Any, int]]:
    """A bank with one skill, and the pid of the process that writes its files."""
    root = tmp_path / "root"
    with Skillbank.open(root, embedding_function=HashEmbedding(), include_bundled=False) as bank:
        bank.skills.create(SKILL, "Extract tables from PDF files into CSV. Use when asked to "
                           "pull tables out of a PDF.", "Use pdfplumber.")
    if remote:
        with owner_process(root) as proc, client_bank(root) as bank:
            yield bank, proc.pid
        return
    with Skillbank.open(root, embedding_function=HashEmbedding(), include_bundled=False) as bank:
        yield bank, os.getpid()


@contextlib.contextmanager
def file_size_limit(pid: int, size: int) -> Iterator[None]:
    """No file of process `pid` grows past `size` bytes in the block (a write crossing it is cut
    short: the kernel writes up to the limit, then refuses with EFBIG)."""
    soft, hard = resource.prlimit(pid, resource.RLIMIT_FSIZE)
    resource.prlimit(pid, resource.RLIMIT_FSIZE, (size, hard))
    try:
        yield
    finally:
        resource.prlimit(pid, resource.RLIMIT_FSIZE, (soft, hard))


def log_lines(tmp_path: Path) -> list[bytes]:
    path = tmp_path / "root" / "usage" / "skills.jsonl"
    return path.read_bytes().splitlines(keepends=True) if path.exists() else []


def usage_of(bank: Any) -> Any:
    return {skill.name: skill for skill in bank.skills.list()}[SKILL].usage


def counts_after_reopen(tmp_path: Path) -> Any:
    with Skillbank.open(tmp_path / "root", embedding_function=HashEmbedding(),
                        include_bundled=False) as bank:
        return usage_of(bank)


@REMOTE
def test_a_flush_cut_short_is_written_once_and_no_use_fails(tmp_path, remote):
    """Fails before: uses raised EFBIG to their callers, and the log counted more than 300
    (the lines that made it, written again) with a torn line glued to the next."""
    with bank_and_owner(tmp_path, remote) as (bank, pid):
        start = sum(map(len, log_lines(tmp_path)))
        failed = []
        with file_size_limit(pid, start + 8192):  # room for ~100 of the 256 lines flushed
            for _ in range(300):
                try:
                    bank.skills.record_use(SKILL)
                except Exception as exc:  # noqa: BLE001 - counted: a plain use must not fail
                    failed.append(exc)
        bank.flush()  # room again: the buffered uses go, once
        assert usage_of(bank).uses == 300
    assert counts_after_reopen(tmp_path).uses == 300
    for raw in log_lines(tmp_path):
        assert raw.endswith(b"\n") and isinstance(json.loads(raw), dict), raw
    assert failed == []


@REMOTE
def test_a_rating_whose_write_failed_is_not_stored_later(tmp_path, remote):
    """Fails before: the refused `success=False` stayed buffered and the next flush (or close)
    wrote it, so the call that raised counted after all."""
    with bank_and_owner(tmp_path, remote) as (bank, pid):
        bank.skills.record_use(SKILL, success=True)
        size = sum(map(len, log_lines(tmp_path)))
        with file_size_limit(pid, size):  # not one more byte
            with pytest.raises(OSError, match="File too large"):
                bank.skills.record_use(SKILL, success=False)
        assert usage_of(bank).failures == 0  # taken back at once
        bank.flush()
    after = counts_after_reopen(tmp_path)
    assert (after.uses, after.successes, after.failures) == (1, 1, 0)


@REMOTE
def test_a_torn_last_line_does_not_swallow_the_next_event(tmp_path, remote):
    """A crash mid-append leaves a line without its end; the next append ends it first (as the
    experiences journal does). Fails before: the rating was glued to the torn bytes and lost."""
    with bank_and_owner(tmp_path, remote) as (bank, _):
        bank.skills.record_use(SKILL, success=True)
        with (tmp_path / "root" / "usage" / "skills.jsonl").open("ab") as handle:
            handle.write(b'{"id": "pdf-tab')  # a crash's torn write
        bank.skills.record_use(SKILL, success=False)
    after = counts_after_reopen(tmp_path)
    assert (after.successes, after.failures) == (1, 1)
