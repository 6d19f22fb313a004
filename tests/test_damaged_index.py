"""A damaged embedded index is rebuilt from the files (crash hunt, session 18).

A damaged `chroma/chroma.sqlite3` made every command fail with Chroma's own words, the
documented repair `skillbank reindex` too; only deleting `chroma/` by hand recovered. The
errors now name the repair, `skillbank reindex --fresh`, which deletes the index and builds it
from the files (nothing is lost: they are the truth) — and is refused while another process
has the index open.
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

from owner_client import owner_process
from test_mcp_transports import base_env


def skillbank(root: Path, *args: str) -> subprocess.CompletedProcess:
    return subprocess.run([str(Path(sys.executable).parent / "skillbank"), "--root", str(root),
                           *args], env=base_env(SKILLBANK_EMBEDDING="hash", COLUMNS="200",
                                                SKILLBANK_CLI_OWNER="0"),
                          capture_output=True, text=True, timeout=300)


def damage(root: Path) -> None:
    db = root / "chroma" / "chroma.sqlite3"
    size = db.stat().st_size
    with db.open("r+b") as handle:
        handle.seek(size // 2)
        handle.write(os.urandom(8192))


def test_reindex_fresh_rebuilds_a_damaged_index_from_the_files(tmp_path):
    root = tmp_path / "root"
    assert skillbank(root, "experiences", "record", "--task", "Deploy the api", "--outcome",
                     "failure", "--feedback", "Drain the queue first").returncode == 0
    assert skillbank(root, "guidelines", "learn",
                     "Always write dates in ISO 8601 format.").returncode == 0
    damage(root)
    broken = skillbank(root, "guidelines", "search", "write the dates")
    if broken.returncode != 0:  # how far the damage reaches depends on the pages it hit
        assert "skillbank reindex --fresh" in broken.stderr, broken.stderr
    fixed = skillbank(root, "reindex", "--fresh")
    assert fixed.returncode == 0, fixed.stderr
    assert "deleted the index" in fixed.stderr
    assert "ISO 8601" in skillbank(root, "guidelines", "search", "write the dates").stdout
    found = skillbank(root, "--json", "experiences", "search", "deploy the api").stdout
    assert "Drain the queue" in found


def test_reindex_fresh_is_refused_while_another_process_has_the_index_open(tmp_path):
    root = tmp_path / "root"
    root.mkdir()
    with owner_process(root):
        refused = skillbank(root, "reindex", "--fresh")
        assert refused.returncode == 6, refused.stderr
        assert "another process serves the memory" in refused.stderr
    assert (root / "chroma").is_dir()  # untouched


def test_an_error_that_reads_like_a_damaged_index_names_the_repair():
    from skillbank.cli.reporting import _error_details

    class InternalError(Exception):  # what chromadb raises, by name
        pass

    for said in ("Error executing plan: Internal error: error returned from database: (code: "
                 "11) database disk image is malformed",
                 "Error in compaction: Failed to apply logs to the metadata segment"):
        code, message, _ = _error_details(InternalError(said))
        assert code == 1 and "skillbank reindex --fresh" in message, message
    assert "reindex" not in _error_details(InternalError("No space left on device"))[1]


def test_a_read_only_or_full_disk_is_named_with_what_to_do():
    import errno

    from skillbank.cli.reporting import _error_details

    code, message, _ = _error_details(OSError(errno.EROFS, "Read-only file system",
                                              "/mnt/ro/root/.owner.lock"))
    assert code == 5 and "copy the root somewhere writable" in message
    code, message, _ = _error_details(OSError(errno.ENOSPC, "No space left on device"))
    assert code == 1 and "disk under the memory root is full" in message
