"""`skills new/update -f` reads at most the SKILL.md limit, then refuses with the size.

Hunt (report #6): `skillbank skills new zero-body -d x -f /dev/zero` (or a pipe, or a huge
file) read the whole input before the 1 MiB limit was checked: it ate memory until
`Error: MemoryError`. The input is read on the CLI's side, before any bank is opened, so the
same holds when the CLI is a client of an owner process.
"""

from __future__ import annotations

import io
import sys
from pathlib import Path

import pytest
from typer.testing import CliRunner

from skillbank.cli import app
from skillbank.cli.common import read_text_arg
from skillbank.errors import InvalidInputError
from skillbank.memories.skills.skill_file import MAX_SKILL_BYTES

GUARD = 16 * MAX_SKILL_BYTES  # a reader past this reads without bound


class Endless(io.RawIOBase):
    """Input that never ends (like /dev/zero behind a pipe); past GUARD it fails the test
    instead of filling the memory."""

    def __init__(self) -> None:
        self.given = 0

    def readable(self) -> bool:
        return True

    def readinto(self, buffer) -> int:
        if self.given > GUARD:
            raise AssertionError("the body was read without bound")
        buffer[:] = b"a" * len(buffer)
        self.given += len(buffer)
        return len(buffer)


def _run(*args: str):
    return CliRunner().invoke(app, ["--no-bundled", "skills", *args])


def _refused(result, source: str) -> None:
    assert result.exit_code == 2, (result.exit_code, result.stderr, result.exception)
    assert f"the body from {source} is over {MAX_SKILL_BYTES} bytes (1 MiB)" in result.stderr


def test_endless_stdin_is_refused_after_the_limit(monkeypatch):
    endless = Endless()
    monkeypatch.setattr(sys, "stdin", io.TextIOWrapper(io.BufferedReader(endless)))
    with pytest.raises(InvalidInputError, match=f"the body from stdin is over {MAX_SKILL_BYTES}"):
        read_text_arg(None, Path("-"), "the body")
    assert endless.given <= GUARD


def test_dev_zero_and_a_huge_file_are_refused(cli_root, tmp_path):
    _refused(_run("new", "zero-body", "-d", "x", "-f", "/dev/zero"), "/dev/zero")
    huge = tmp_path / "huge.md"
    huge.write_text("word " * (MAX_SKILL_BYTES // 5 + 1))
    _refused(_run("update", "zero-body", "-f", str(huge)), str(huge))
    wide = tmp_path / "wide.md"  # under the limit in characters, over it in bytes
    wide.write_text("é" * (MAX_SKILL_BYTES // 2 + 1), encoding="utf-8")
    _refused(_run("new", "zero-body", "-d", "x", "-f", str(wide)), str(wide))


def test_a_body_within_the_limit_is_read_whole(cli_root, tmp_path):
    body = tmp_path / "body.md"
    body.write_text("# Steps\r\n\r\nRead it all.\r\n")
    result = _run("new", "read-all", "-d", "Read a whole body file.", "-f", str(body))
    assert result.exit_code == 0, result.stderr
    shown = _run("show", "read-all")
    assert "Read it all." in shown.stdout
