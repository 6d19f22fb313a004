"""A folder under the root this user may not write: exit 5 with a sentence naming it (hunt-ops #5).

`experiences record`, `guidelines learn` and `guidelines vote` on a root whose `experiences/`
had no write bit exited 1 with a raw "[Errno 13] Permission denied: '…/2026-12.jsonl'", while a
read-only file system (the same trouble) exits 5 with a fix. The tests run as root, whom file
modes do not stop, so the PermissionError is raised where the journal writes (monkeypatch).
"""

from __future__ import annotations

import json
import os

from typer.testing import CliRunner

from skillbank.cli import app
from skillbank.cli.reporting import _error_details


def test_a_permission_error_is_exit_5_naming_the_folder():
    code, message, _ = _error_details(PermissionError(
        13, "Permission denied", "/srv/memory/experiences/2026-12.jsonl"), "/srv/memory")
    assert code == 5 and "/srv/memory/experiences" in message and "write access" in message


def test_through_a_client_the_folder_is_read_from_the_text():
    """An owner's PermissionError reaches a client as its text alone."""
    code, message, _ = _error_details(PermissionError(
        "[Errno 13] Permission denied: '/srv/memory/guidelines/general/gl-1.md'"), "/srv/memory")
    assert code == 5 and "/srv/memory/guidelines/general;" in message


def test_the_cli_exits_5_when_the_journal_may_not_be_written(cli_root, monkeypatch):
    import skillbank.store.files.experiences as files

    def refusing(path, line):
        raise PermissionError(13, "Permission denied", os.fspath(path))

    monkeypatch.setattr(files, "append_line", refusing)
    monkeypatch.setenv("SKILLBANK_CLI_OWNER", "0")
    result = CliRunner().invoke(app, ["--json", "experiences", "record", "--task", "t",
                                      "--outcome", "success"])
    assert result.exit_code == 5, result.output
    error = json.loads(result.stderr.strip().splitlines()[-1])
    assert error["exit_code"] == 5 and os.path.join("root", "experiences") in error["error"]


def test_a_folder_outside_the_root_is_its_own_trouble(cli_root, tmp_path, monkeypatch):
    """Review: `experiences export` to a folder outside the root this user may not write
    exited 5 with "copy the root somewhere writable"; the root was fine. Exit 1 with the errno."""
    code, message, _ = _error_details(PermissionError(
        13, "Permission denied", "/srv/exports/out.jsonl"), "/srv/memory")
    assert code == 1 and "copy the root" not in message
    import skillbank.memories.experiences.portability as portability

    target = tmp_path / "locked" / "out.jsonl"

    def refusing(path, *args, **kwargs):
        raise PermissionError(13, "Permission denied", os.fspath(path))

    monkeypatch.setenv("SKILLBANK_CLI_OWNER", "0")
    monkeypatch.setattr(portability, "atomic_write", refusing)
    result = CliRunner().invoke(app, ["--json", "experiences", "export", os.fspath(target)])
    assert result.exit_code == 1, result.output
    error = json.loads(result.stderr.strip().splitlines()[-1])
    assert "Permission denied" in error["error"] and "copy the root" not in error["error"]
