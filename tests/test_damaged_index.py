"""A damaged embedded index is rebuilt from the files (crash hunt, session 18).

A damaged `chroma/chroma.sqlite3` made every command fail with Chroma's own words, the
documented repair `skillbank reindex` too; only deleting `chroma/` by hand recovered. The
errors now name the repair, `skillbank reindex --fresh`, which deletes the index and builds it
from the files (nothing is lost: they are the truth) — and is refused while another process
has the index open.
"""

from __future__ import annotations

import contextlib
import os
import subprocess
import sys
from pathlib import Path
from typing import Iterator

import httpx
import pytest

from conftest import free_port, stop_process
from mcp_http import bearer_session, call, wait_until_serving
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


def damage_the_log(root: Path) -> None:
    """Overwrite the first page of Chroma's write-ahead log (`embeddings_queue`) as a damaged
    disk would: every read then fails while Chroma pulls the log ("Failed to pull logs from
    the log store"), what a root left damaged said after its server restarted (hunt-mcpmany
    #1c, session 24). Done by a process of its own, with no Chroma beside its sqlite3."""
    subprocess.run([sys.executable, "-c", """
import sqlite3, sys
path = sys.argv[1]
db = sqlite3.connect(path)
size = db.execute('PRAGMA page_size').fetchone()[0]
page = db.execute("SELECT rootpage FROM sqlite_master WHERE name = ?",
                  ("embeddings_queue",)).fetchone()[0]
db.close()
with open(path, 'r+b') as handle:
    handle.seek(size * (page - 1))
    handle.write(b'\\xff' * 64)
    handle.seek(24)  # the file change counter: a process that has the file open reads it again
    counter = int.from_bytes(handle.read(4), 'big')
    handle.seek(24)
    handle.write(((counter + 1) % 2 ** 32).to_bytes(4, 'big'))
""", str(root / "chroma" / "chroma.sqlite3")], check=True, timeout=60)


@contextlib.contextmanager
def damaged_root(tmp_path: Path, remote: bool) -> Iterator[Path]:
    """A root whose index's log is damaged; with `remote`, under an owner process that has it
    open (an owner does not start on a damaged root: its open syncs the index)."""
    root = tmp_path / "root"
    assert skillbank(root, "experiences", "record", "--task", "Deploy the api", "--outcome",
                     "failure", "--feedback", "Drain the queue first").returncode == 0
    assert skillbank(root, "guidelines", "learn",
                     "Always write dates in ISO 8601 format.").returncode == 0
    with owner_process(root) if remote else contextlib.nullcontext():
        damage_the_log(root)
        yield root


@pytest.mark.parametrize("remote", [False, True], ids=["in-process", "client-of-owner"])
def test_lists_and_stats_of_a_damaged_index_name_the_repair(tmp_path, remote):
    """docs/operating.md: a damaged index "and every command names this repair"; `experiences
    list`, `guidelines list` and `stats` printed Chroma's "Failed to pull logs from the log
    store" alone (hunt-mcpmany #1c, session 24)."""
    reads = (("experiences", "list"), ("guidelines", "list"), ("stats",),
             ("guidelines", "search", "write the dates"))
    with damaged_root(tmp_path, remote) as root:
        failed = []
        for command in (*reads, ("guidelines", "learn", "Never deploy on Fridays.")):
            answer = skillbank(root, *command)
            if answer.returncode != 0:  # an owner answers reads from what it holds in memory
                assert "skillbank reindex --fresh" in answer.stderr, (command, answer.stderr)
                failed.append(command)
        assert failed == [*([] if remote else reads), ("guidelines", "learn",
                                                       "Never deploy on Fridays.")]
    assert skillbank(root, "reindex", "--fresh").returncode == 0
    assert "ISO 8601" in skillbank(root, "guidelines", "list").stdout


@pytest.mark.parametrize("remote", [False, True], ids=["in-process", "client-of-owner"])
async def test_the_mcp_server_on_a_damaged_index_names_the_repair(tmp_path, remote):
    """MCP tools said "Error executing tool memory_context" or Chroma's words with "This is a
    server-side problem", and /readyz answered 200 `"chroma": "ok"` while every memory tool
    failed (hunt-mcpmany #1c, session 24)."""
    port = free_port()
    log = tmp_path / "serve.log"
    with damaged_root(tmp_path, remote) as root:
        proc = subprocess.Popen(
            [sys.executable, "-m", "skillbank.cli", "serve", "--transport", "http", "--port",
             str(port), "--root", str(root), "--no-bundled", "--token", "sekrit"],
            stdout=log.open("w"), stderr=subprocess.STDOUT,
            env=base_env(SKILLBANK_EMBEDDING="hash"))
        url = f"http://127.0.0.1:{port}"
        try:
            wait_until_serving(proc, url, log, probe="/healthz", status=200, seconds=180)
            async with bearer_session(url, "sekrit", timeout=120) as client:
                calls = [("add_guideline", {"text": "Never deploy on Fridays."})]
                if not remote:  # an owner answers reads from what it holds in memory
                    calls += [("memory_context", {"task": "deploy the api"}),
                              ("recall_experiences", {"task": "deploy the api"}),
                              ("search_guidelines", {"task": "write the dates"})]
                for tool, args in calls:
                    ok, said = await call(client, tool, args)
                    assert not ok and "skillbank reindex --fresh" in said, (tool, said)
            if not remote:  # a client's owner keeps the index: its /readyz answers for it
                ready = httpx.get(url + "/readyz", timeout=30)
                assert ready.status_code == 503, ready.text
                assert "skillbank reindex --fresh" in ready.json()["checks"]["chroma"]
        finally:
            stop_process(proc)
