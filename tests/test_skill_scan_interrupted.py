"""A scan cut short by closing the bank is no result; an explicit scan retries a failed one.

Hunt (report #1): a third-party skill changed upstream, then any short CLI command opened the
bank (sync queued the scan) and closed it (close killed the worker mid-scan). The background
thread stored "scan failed: the scanner exited (code None)" for that version, the default
policy serves an unscanned third-party skill with a note, and even `skills scan NAME` only
repeated the cached failure: the malicious skill was served for good. In process, and through
the CLI as a client of another process that owns the root.
"""

from __future__ import annotations

import time
from pathlib import Path

from typer.testing import CliRunner

from owner_client import owner_process
from test_skill_trust import fake_scanner, open_bank, vendor  # noqa: F401 - a fixture
from skillbank.cli import app
from skillbank.memories.skills import pins
from skillbank.memories.skills.scan import ScanResult, ScanStore

HANGING = 'echo \'{"ready": true}\'\nsleep 120\n'
CLEAN = ('echo \'{"ready": true}\'\nwhile read line; do '
         'echo \'{"ok": true, "findings": []}\'; done\n')
KILLED = "scan failed: the scanner exited (code None)"  # what a close used to store


def _version(folder: Path) -> str:
    return pins.version_of(pins.DigestCache().digests(folder))


def test_a_background_scan_cut_short_by_close_is_not_stored(tmp_path, vendor):
    root = tmp_path / "root"
    bank = open_bank(root, [vendor], scanner=fake_scanner(tmp_path, HANGING), timeout=100)
    scanner = bank.skills.trust_book.scanner
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline and (scanner._worker is None or scanner._worker.proc is None):
        time.sleep(0.1)  # the sync queued a scan; its worker starts in the background
    thread = scanner._thread
    assert thread is not None and scanner._worker is not None
    bank.close()  # kills the worker under the scan
    thread.join(timeout=60)  # the scan thread has seen the kill and finished
    assert not thread.is_alive()
    assert ScanStore(root).get(_version(vendor / "csv-report")) is None
    # The next process scans it again, and its result is kept.
    (tmp_path / "clean").mkdir()
    bank = open_bank(root, [vendor], scanner=fake_scanner(tmp_path / "clean", CLEAN))
    try:
        assert bank.skills.load("csv-report").scan == "scan pending"  # queued again
        assert bank.skills.wait_for_scans(timeout=120)
        assert bank.skills.load("csv-report").scan == "clean"
    finally:
        bank.close()


def test_an_explicit_scan_retries_a_cached_failure_in_process(tmp_path, vendor):
    root = tmp_path / "root"
    ScanStore(root).put(ScanResult(_version(vendor / "csv-report"), KILLED))
    bank = open_bank(root, [vendor], scanner=fake_scanner(tmp_path, CLEAN))
    try:
        assert bank.skills.load("csv-report").scan == KILLED  # what the store says until asked
        assert bank.skills.scan("csv-report")[0].scan == "clean"
        assert ScanStore(root).get(_version(vendor / "csv-report")).status == "clean"
    finally:
        bank.close()


def test_an_explicit_scan_retries_a_cached_failure_through_a_client(cli_root, tmp_path, vendor):
    cli_root.mkdir()
    # The owner finds its scanner in the root's configuration (its environment is clean).
    (cli_root / "skillbank.toml").write_text(
        f'[skill_scan]\npython = "{fake_scanner(tmp_path, CLEAN)}"\n')
    ScanStore(cli_root).put(ScanResult(_version(vendor / "csv-report"), KILLED))
    with owner_process(cli_root, (vendor,)):
        result = CliRunner().invoke(app, ["--json", "--no-bundled", "--skills-dir", str(vendor),
                                          "skills", "scan", "csv-report"])
    assert result.exit_code == 0, (result.stdout, result.stderr)
    assert '"scan": "clean"' in result.stdout
    assert ScanStore(cli_root).get(_version(vendor / "csv-report")).status == "clean"
